"""YaRN: low/high = r ln(L / (2 pi beta)) / (2 ln b) for beta_fast (default 32) / beta_slow (default 1),
floored/ceiled when ``truncate`` (default true), clamped to [0, r-1], high += 0.001 if equal;
ramp_i = clamp((i - low)/(high - low), 0, 1); theta'_i = ramp_i theta_i / s + (1 - ramp_i) theta_i. Attention
factor: explicit ``attention_factor``, else g(s, mscale)/g(s, mscale_all_dim) when both are given and non-zero, else
g(s) = 0.1 ln s + 1 (1 when s <= 1), g(s, m) = 0.1 m ln s + 1. YaRN's L falls back to max_position_embeddings in
transformers 4.57 and is required (auto-filled) in 5.x."""

import mpmath

from ropespec.spec import scaling
from ropespec.spec.schema import RANGES, ExpectationError
from ropespec.spec.methods import ScalingMethod, original_from_config, g


class Yarn(ScalingMethod):
    name = "yarn"
    order = 3
    required = frozenset({"factor"})
    optional = frozenset({"attention_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim",
                          "original_max_position_embeddings", "truncate"})
    mixes = True
    promises = ("scaling.bounded", "scaling.band-edges", "scaling.attention-factor")
    hf_name = "yarn"

    def check_input(self, s):
        fast, slow = s.get("beta_fast", 32), s.get("beta_slow", 1)
        if not fast > slow:
            raise ExpectationError("rope_scaling.beta_fast", f"must exceed beta_slow ({fast!r} <= {slow!r}): "
                                                             f"{RANGES['rope_scaling.beta_fast, beta_slow']}")

    def range(self, expect):
        """(low, high) pair indices: the ramp runs from low (unchanged) to high (divided by s)."""
        s = expect.rope_scaling
        r, base, L = expect.rotary_dim, mpmath.mpf(expect.rope_theta), scaling.original_length(expect)
        low, high = scaling.yarn_bounds(r, L, base, mpmath.mpf(s.get("beta_fast") or 32),
                                        mpmath.mpf(s.get("beta_slow") or 1))
        if s.get("truncate", True):
            low, high = mpmath.floor(low), mpmath.ceil(high)
        low, high = max(low, mpmath.mpf(0)), min(high, mpmath.mpf(r - 1))
        if low == high:
            high += mpmath.mpf("0.001")
        return low, high

    def frequencies(self, expect, theta, table, variant):
        f = mpmath.mpf(expect.rope_scaling["factor"])
        low, high = self.range(expect)
        one, zero = mpmath.mpf(1), mpmath.mpf(0)
        return [scaling.mix(t, min(max(scaling.yarn_ramp(mpmath.mpf(i), low, high), zero), one), f)
                for i, t in enumerate(theta)]

    def attention_factor(self, expect):
        s = expect.rope_scaling
        if s.get("attention_factor") is not None:
            return mpmath.mpf(s["attention_factor"])
        f = mpmath.mpf(s["factor"])
        ms, msa = s.get("mscale"), s.get("mscale_all_dim")
        if ms and msa:
            return g(f, mpmath.mpf(ms)) / g(f, mpmath.mpf(msa))
        return g(f)

    def score_temperature(self, expect):
        """DeepSeek's YaRN (``mscale_all_dim`` given and not 0) multiplies the softmax scale by g(s,
        mscale_all_dim)^2 (transformers' DeepseekV3Attention: softmax_scale *= mscale^2), so that the scores carry
        g(s, mscale)^2 in all with cos and sin's g(s, mscale)/g(s, mscale_all_dim)."""
        s = expect.rope_scaling
        if s.get("mscale_all_dim"):
            return g(mpmath.mpf(s["factor"]), mpmath.mpf(s["mscale_all_dim"])) ** 2
        return mpmath.mpf(1)

    def mixing_bound(self, expect, m):
        """The ramp (i - low)/(high - low) is off by at most u (3 m + |low| / (high - low) + 2)."""
        low, high = self.range(expect)
        return 3 * m + abs(low) / (high - low) + 2

    def from_config(self, scaling_dict, max_pos, top_original, out):
        original_from_config(scaling_dict, max_pos, top_original)

    def fit(self, s_first, s_last, original):
        if original is not None and s_last > 1 + 1e-9:
            for truncate in (True, False):
                yield {"rope_type": self.name, "factor": float(round(s_last, 6)),
                       "original_max_position_embeddings": original, "truncate": truncate}

    def examples(self, n_pairs, original):
        return {
            "yarn": {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": original},
            "yarn-mscale": {"rope_type": "yarn", "factor": 40.0, "original_max_position_embeddings": original,
                            "mscale": 1.0, "mscale_all_dim": 0.707},
            "yarn-attention-factor": {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": original,
                                      "attention_factor": 0.8, "truncate": False},
        }

    def draw(self, pick, *, factor, original, n_pairs):
        out = {"rope_type": self.name, "factor": factor, "original_max_position_embeddings": original}
        for key, options in (("beta_fast", (16.0, 32.0, 64.0)), ("beta_slow", (1.0, 2.0)), ("truncate", (True, False))):
            v = pick(key, (None,) + options)
            if v is not None:
                out[key] = v
        if pick("mscale", (False, True)):
            out["mscale"], out["mscale_all_dim"] = 1.0, pick("mscale_all_dim", (0.0, 0.707, 1.0))
        return out

    def readings(self, e):
        s = dict(e.rope_scaling)
        told = s.get("truncate", True)
        yield ("truncate", f"the correction range {'kept' if told else 'rounded'} where the config says truncate "
                           f"{str(told).lower()}", e.replace(rope_scaling=dict(s, truncate=not told)))
        mine, f = self.attention_factor(e), mpmath.mpf(s["factor"])
        ms, msa = s.get("mscale"), s.get("mscale_all_dim")
        others = {"g(s) = 0.1 ln s + 1, the default formula": g(f), "1, none applied": mpmath.mpf(1),
                  f"g(s, {ms or 1}) / g(s, {msa or 0}), mscale and mscale_all_dim with a missing one at 1 and 0":
                      g(f, mpmath.mpf(ms or 1)) / g(f, mpmath.mpf(msa or 0))}
        for what, v in others.items():
            if abs(v - mine) > mpmath.mpf(2) ** -40:
                yield ("attention-factor", f"attention factor {float(v):.6g} ({what}) where the config's reading "
                                           f"gives {float(mine):.6g}",
                       e.replace(rope_scaling=dict(s, attention_factor=float(v))))

    def mistakes(self, e, seq_len, thetas, th0):
        s = e.to_dict()["rope_scaling"]
        swapped = dict(s, beta_fast=s.get("beta_slow") or 1, beta_slow=s.get("beta_fast") or 32)
        yield "betas swapped", "yarn with beta_fast and beta_slow swapped", thetas(e.replace(rope_scaling=swapped), None)
        toggled = dict(s, truncate=not s.get("truncate", True))
        yield "truncate", f"yarn with truncate {str(toggled['truncate']).lower()}", \
            thetas(e.replace(rope_scaling=toggled), None)
        # theta' = m theta / s + (1 - m) theta with the mixing m taken the wrong way round (litgpt): the low band
        # divided by s and the high band kept, theta + theta / s - theta'_yarn
        yield "ramp reversed", "yarn with its ramp reversed (the fast pairs divided by s, the slow ones kept)", \
            th0 + th0 / s["factor"] - thetas(e, None)
