"""LongRoPE: theta_i / ext_i, ext = long_factor if seq_len > L else short_factor; attention factor: explicit, else
sqrt(1 + ln s / ln L) with s = factor (default max_position / L), 1 if s <= 1. transformers 4.57 overrides
``factor`` with max_position / L whenever L is given, 5.x uses ``factor`` when present; ropespec follows 5.x.

Which factors a call uses is a policy. transformers' switches by the call's sequence length (long beyond L). vLLM's
(``Phi3LongRoPEScaledRotaryEmbedding``) takes the long factors at every position once the served length
(``max_model_len``) exceeds L, and the short ones at every position otherwise, so that a sequence crossing L during
generation keeps the keys it cached: an expectation with ``max_model_len`` among its keys states that policy."""

import mpmath

from ropespec.spec import scaling
from ropespec.spec.schema import FACTOR_MAX, MAX_POSITION_MAX, RANGES, ExpectationError, _is_int, _is_number, _short
from ropespec.spec.methods import ScalingMethod, original_from_config


class LongRoPE(ScalingMethod):
    name = "longrope"
    order = 6
    required = frozenset({"short_factor", "long_factor"})
    optional = frozenset({"factor", "attention_factor", "original_max_position_embeddings", "max_model_len"})
    switches_at_length = True
    promises = ("scaling.longrope-switch", "scaling.attention-factor")
    hf_name = "longrope"
    #: Phi-3's checkpoints of 2024 name it "su", which transformers' Phi-3 config reads as longrope
    config_names = ("su",)

    def validate(self, s, rotary_dim, max_position):
        served = s.get("max_model_len")
        if served is not None and (not _is_int(served) or not 1 <= served <= MAX_POSITION_MAX):
            raise ExpectationError("rope_scaling.max_model_len", f"must be {RANGES['rope_scaling.max_model_len']}, got "
                                                                 f"{_short(served)}")
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
        served = expect.rope_scaling.get("max_model_len")
        if served is not None:  # vLLM's policy: one table for every length, by the served length
            return "long" if served > scaling.original_length(expect) else "short"
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

    def to_hf(self, params, max_position):
        params.pop("max_model_len", None)  # vLLM's serving setting: transformers has no such key
        return max_position

    def readings(self, e):
        s, L = dict(e.rope_scaling), scaling.original_length(e)
        if "max_model_len" in s:
            yield ("longrope-switch", "the factors switched by the call's length (transformers' policy)",
                   e.replace(rope_scaling={k: v for k, v in s.items() if k != "max_model_len"}))
        for served, which in ((L + 1, "long"), (L, "short")):
            if s.get("max_model_len") != served:
                yield ("longrope-switch", f"the {which} factors at every length",
                       e.replace(rope_scaling=dict(s, max_model_len=served)))
        if abs(self.attention_factor(e) - 1) > mpmath.mpf(2) ** -40:
            yield ("attention-factor", f"attention factor 1 (none applied) where the config's reading gives "
                                       f"{float(self.attention_factor(e)):.6g}",
                   e.replace(rope_scaling=dict(s, attention_factor=1.0)))

    def mistakes(self, e, seq_len, thetas, th0):
        L = scaling.original_length(e)
        if "max_model_len" in e.rope_scaling:  # the served length's factors, taken by the call's length instead
            by_length = e.replace(rope_scaling={k: v for k, v in e.rope_scaling.items() if k != "max_model_len"})
            yield ("factors by length", "the factors of the call's length (transformers' policy), not of the served "
                   f"length max_model_len {e.rope_scaling['max_model_len']} (vLLM's)", thetas(by_length, seq_len))
            return
        other = L + 1 if (seq_len or 0) <= L else L
        yield "other factors", f"the {'long' if other > L else 'short'} factors at this length", thetas(e, other)
