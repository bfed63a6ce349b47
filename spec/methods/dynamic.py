"""Dynamic NTK: with l = max(seq_len, L), base' = b (s l / L - (s - 1))^(r/(r-2)); the default table while
seq_len <= L. transformers takes L from ``max_position_embeddings``; ropespec reads it from
``original_max_position_embeddings`` when given, so that ``max_position`` (how far to test) can go beyond it."""

import mpmath

from ropespec.spec import scaling
from ropespec.spec.schema import FACTOR_MAX, RANGES, ExpectationError, _is_number, _short
from ropespec.spec.methods import ScalingMethod


class Dynamic(ScalingMethod):
    name = "dynamic"
    order = 5
    required = frozenset({"factor"})
    optional = frozenset({"original_max_position_embeddings"})
    grows_with_length = True
    new_base = True
    promises = ("scaling.bounded", "scaling.dynamic-length", "scaling.attention-factor")
    hf_name = "dynamic"
    #: HunYuan-VL's and HunyuanOCR's checkpoints name their NTK-alpha "xdrope", which transformers reads as dynamic
    config_names = ("xdrope",)

    def variant(self, expect, seq_len):
        L = scaling.original_length(expect)
        return max(seq_len or L, L)

    def frequencies(self, expect, theta, table, variant):
        L = scaling.original_length(expect)
        if variant is None or variant <= L:
            return theta
        return table(scaling.dynamic_base(mpmath.mpf(expect.rope_theta), mpmath.mpf(expect.rope_scaling["factor"]),
                                          mpmath.mpf(variant), mpmath.mpf(L), mpmath.mpf(expect.rotary_dim)))

    def from_config(self, scaling_dict, max_pos, top_original, out):
        if "original_max_position_embeddings" not in scaling_dict:  # transformers' L is max_position_embeddings
            factor = scaling_dict.get("factor", 1.0)
            if not _is_number(factor) or not 1 <= factor <= FACTOR_MAX:
                raise ExpectationError("rope_scaling.factor", f"must be {RANGES['rope_scaling.factor']}, got {_short(factor)}")
            scaling_dict["original_max_position_embeddings"] = max_pos
            out["max_position"] = int(max_pos * factor)

    def read_config(self, scaling_dict):
        """HunYuan's checkpoints say "dynamic" beside an ``alpha`` (tencent/Hunyuan-A13B-Instruct), which transformers
        computes as a fixed NTK-alpha base, b alpha^(r/(r-2)), whatever the length (ntk_alpha; the YaRN-like keys beside
        it unread): the ntk method of factor alpha."""
        if scaling_dict.get("alpha"):
            return {"rope_type": "ntk", "factor": scaling_dict["alpha"]}
        return scaling_dict

    def to_hf(self, params, max_position):
        """transformers' dynamic NTK grows past max_position_embeddings (it reads no original length)."""
        return params.pop("original_max_position_embeddings", max_position)

    def examples(self, n_pairs, original):
        return {"dynamic": {"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": original}}

    def draw(self, pick, *, factor, original, n_pairs):
        return {"rope_type": self.name, "factor": factor, "original_max_position_embeddings": original}

    def mistakes(self, e, seq_len, thetas, th0):
        yield "one length", f"the dynamic table of length {e.max_position} at every length", thetas(e, e.max_position)
