"""LongRoPE: theta_i / ext_i, ext = long_factor if seq_len > L else short_factor; attention factor: explicit, else
sqrt(1 + ln s / ln L) with s = factor (default max_position / L), 1 if s <= 1. transformers 4.57 overrides
``factor`` with max_position / L whenever L is given, 5.x uses ``factor`` when present; ropespec follows 5.x."""

import mpmath

from ropespec.spec import scaling
from ropespec.spec.schema import FACTOR_MAX, RANGES, ExpectationError, _is_number
from ropespec.spec.methods import ScalingMethod, original_from_config


class LongRoPE(ScalingMethod):
    name = "longrope"
    order = 6
    required = frozenset({"short_factor", "long_factor"})
    optional = frozenset({"factor", "attention_factor", "original_max_position_embeddings"})
    switches_at_length = True
    promises = ("scaling.longrope-switch", "scaling.attention-factor")
    hf_name = "longrope"

    def validate(self, s, rotary_dim, max_position):
        for k in ("short_factor", "long_factor"):
            v = s[k]
            if not isinstance(v, (list, tuple)) or not all(_is_number(x) and 0 < x <= FACTOR_MAX for x in v):
                raise ExpectationError(f"rope_scaling.{k}", f"must be a list of {RANGES['rope_scaling.short_factor, long_factor']}")
            if len(v) != rotary_dim // 2:
                raise ExpectationError(f"rope_scaling.{k}", f"must have rotary_dim/2 = {rotary_dim // 2} entries, got {len(v)}")
        if "factor" not in s:
            # transformers derives it from the configuration: max_position_embeddings / original length. It is
            # fixed here, once, so that how far a run tests (--max-position) never changes what is expected.
            L = s.get("original_max_position_embeddings") or max_position
            s["factor"] = max(1.0, max_position / L)

    def variant(self, expect, seq_len):
        return "long" if seq_len is not None and seq_len > scaling.original_length(expect) else "short"

    def frequencies(self, expect, theta, table, variant):
        s = expect.rope_scaling
        ext = s["long_factor"] if variant == "long" else s["short_factor"]
        return [scaling.linear(t, mpmath.mpf(e)) for t, e in zip(theta, ext)]

    def attention_factor(self, expect):
        s = expect.rope_scaling
        if s.get("attention_factor") is not None:
            return mpmath.mpf(s["attention_factor"])
        L = scaling.original_length(expect)
        f = mpmath.mpf(s.get("factor") or mpmath.mpf(expect.max_position) / L)
        if f <= 1:
            return mpmath.mpf(1)
        return scaling.longrope_mscale(f, mpmath.mpf(L))

    def from_config(self, scaling_dict, max_pos, top_original, out):
        original_from_config(scaling_dict, max_pos, top_original)

    def examples(self, n_pairs, original):
        return {"longrope": {"rope_type": "longrope", "original_max_position_embeddings": original, "factor": 16.0,
                             "short_factor": [1.0 + i / (2 * n_pairs) for i in range(n_pairs)],
                             "long_factor": [1.0 + i * 12 / n_pairs for i in range(n_pairs)]}}

    def draw(self, pick, *, factor, original, n_pairs):
        return {"rope_type": self.name, "original_max_position_embeddings": original,
                "short_factor": pick("short_factor", (1.0, 2.0), n_pairs),
                "long_factor": pick("long_factor", (1.0, factor), n_pairs), "factor": factor}

    def mistakes(self, e, seq_len, thetas, th0):
        L = scaling.original_length(e)
        other = L + 1 if (seq_len or 0) <= L else L
        yield "other factors", f"the {'long' if other > L else 'short'} factors at this length", thetas(e, other)
