"""Dynamic NTK: with l = max(seq_len, L), base' = b (s l / L - (s - 1))^(r/(r-2)); the default table while
seq_len <= L. transformers takes L from ``max_position_embeddings``; ropespec reads it from
``original_max_position_embeddings`` when given, so that ``max_position`` (how far to test) can go beyond it.

Which length the base grows to is a policy. transformers' follows the call (max(position) + 1). SGLang's
(``DynamicNTKScalingRotaryEmbedding``) and vLLM's before #41277 fix it at the served length, the table of that length at
every length: an expectation with ``max_model_len`` among its keys states that policy."""

import mpmath

from ropespec.spec import scaling
from ropespec.spec.schema import FACTOR_MAX, MAX_POSITION_MAX, RANGES, ExpectationError, _is_int, _is_number, _short
from ropespec.spec.methods import ScalingMethod


class Dynamic(ScalingMethod):
    name = "dynamic"
    order = 5
    required = frozenset({"factor"})
    optional = frozenset({"original_max_position_embeddings", "max_model_len"})
    grows_with_length = True
    new_base = True
    promises = ("scaling.bounded", "scaling.dynamic-length", "scaling.attention-factor")
    hf_name = "dynamic"
    #: HunYuan-VL's and HunyuanOCR's checkpoints name their NTK-alpha "xdrope", which transformers reads as dynamic
    config_names = ("xdrope",)

    def validate(self, s, rotary_dim, max_position):
        served = s.get("max_model_len")
        if served is not None and (not _is_int(served) or not 1 <= served <= MAX_POSITION_MAX):
            raise ExpectationError("rope_scaling.max_model_len", f"must be {RANGES['rope_scaling.max_model_len']}, got "
                                                                 f"{_short(served)}")

    def variant(self, expect, seq_len):
        L = scaling.original_length(expect)
        served = expect.rope_scaling.get("max_model_len")
        return max(served if served is not None else seq_len or L, L)

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
        """transformers' dynamic NTK grows past max_position_embeddings (it reads no original length, nor a served
        one)."""
        params.pop("max_model_len", None)
        return params.pop("original_max_position_embeddings", max_position)

    def readings(self, e):
        s = dict(e.rope_scaling)
        if "max_model_len" in s:
            yield ("dynamic-base", "the base grown with the call's length (transformers' policy)",
                   e.replace(rope_scaling={k: v for k, v in s.items() if k != "max_model_len"}))
        if s.get("max_model_len") != e.max_position:
            yield ("dynamic-base", f"the base of length {e.max_position} at every length",
                   e.replace(rope_scaling=dict(s, max_model_len=e.max_position)))

    def examples(self, n_pairs, original):
        return {"dynamic": {"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": original}}

    def draw(self, pick, *, factor, original, n_pairs):
        return {"rope_type": self.name, "factor": factor, "original_max_position_embeddings": original}

    def mistakes(self, e, seq_len, thetas, th0):
        served = e.rope_scaling.get("max_model_len")
        if served is not None:  # the served length's table, grown with the call's length instead
            by_length = e.replace(rope_scaling={k: v for k, v in e.rope_scaling.items() if k != "max_model_len"})
            yield ("grown by length", f"the base grown with the call's length (transformers' policy), not fixed at the "
                   f"served length max_model_len {served} (SGLang's)", thetas(by_length, seq_len))
            return
        yield "one length", f"the dynamic table of length {e.max_position} at every length", thetas(e, e.max_position)
