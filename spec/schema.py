"""The expectation's vocabulary: the valid values and ranges of its fields, stated once (the documentation site renders it: ropespec/docsite.py),
and the one error every rejection raises, naming the field and its range. Read by :mod:`ropespec.spec.expectation` and by
the scaling methods' own validation (:mod:`ropespec.spec.methods`)."""

from __future__ import annotations

import math
from typing import Any

#: how dims pair up and where the results go: "half" rotates (i, i + r/2), "interleaved" (2i, 2i + 1), both
#: in place; "rope_interleave" reads interleaved pairs (2i, 2i + 1) and writes the rotated pair to (i, i + r/2),
#: the half layout (transformers' ``rope_interleave`` for DeepSeek-V3 and other MLA models: dot products are
#: kept because q and k get the same permutation).
CONVENTIONS = ("half", "interleaved", "rope_interleave")
#: which way pair i turns at position p: "forward" by +p theta_i (RoFormer's, transformers' rotate_half
#: cat(-x2, x1)), "reverse" by -p theta_i (nanochat's rotate_half cat(x2, -x1), as its checkpoints were trained)
DIRECTIONS = ("forward", "reverse")
DTYPES = ("float64", "float32", "float16", "bfloat16")
#: dtypes in which an angle or an inverse-frequency table may be formed; "exact" is the strict class.
ANGLE_DTYPES = ("exact",) + DTYPES
#: The valid ranges, stated once (the site's reference page renders it). Every rejection names the field and its range.
HEAD_DIM_MAX = 4096  # even, 2 ... 4096 (real heads are 64-256; the mpmath reference grows with it)
MAX_POSITION_MAX = 2**53  # 2 ... 2^53: positions are int64 and exact in float64 (ropespec.reference.fast's range)
FACTOR_MAX = 65536.0  # a scaling factor is in [1, 65536]
AXES_MIN, AXES_MAX = 1, 4  # multi-axis RoPE: 1 to 4 position axes (text, time, height, width)
FRAMING_MAX = 16  # the text framing a vision block: a few special tokens and a timestamp (Qwen3-VL's <1.5 seconds>)
#: the axis names a multi-axis expectation gets when it names none, by the number of axes
DEFAULT_AXIS_NAMES = {1: ("t",), 2: ("h", "w"), 3: ("t", "h", "w"), 4: ("t", "h", "w", "a3")}
#: the ways a multi-axis RoPE deals its pairs to the axes (:meth:`Expect.axes_kind`)
AXES_KINDS = ("chunked", "interleaved", "per-axis", "parity")
#: how a per-axis ladder's frequencies run over its K_a pairs: theta^(-2k/d_a), or theta^(+-k/(K_a - 1))
AXES_LADDERS = ("theta", "ascending", "descending")
RANGES = {
    "head_dim": f"an even integer in [2, {HEAD_DIM_MAX}]",
    "rotary_dim": "an even integer in [2, head_dim]",
    "partial_rotary_factor": "a number in (0, 1]",
    "rotary_start": ("an even integer in [0, head_dim - 2]: the first dim that turns, the dims before it passing "
                     "through (LTX-Video pads dim mod 6 leading dims)"),
    "direction": "forward (pair i turns by +p theta_i, RoFormer's) or reverse (by -p theta_i, nanochat's)",
    "rope_theta": "a finite number > 1",
    "max_position": f"an integer in [2, 2^53 = {MAX_POSITION_MAX}]",
    "n_heads": "an integer >= 1; n_kv_heads divides it",
    "rope_scaling.factor": f"a number in [1, {FACTOR_MAX:g}]",
    "rope_scaling.original_max_position_embeddings": f"an integer in [1, {MAX_POSITION_MAX}]",
    "rope_scaling.attention_factor": "a finite number > 0",
    "rope_scaling.mscale, mscale_all_dim": "a finite number >= 0",
    "rope_scaling.beta_fast, beta_slow": "finite numbers > 0 with beta_fast > beta_slow",
    "rope_scaling.low_freq_factor, high_freq_factor": "finite numbers > 0 with low <= high (equal: a step, Llama 4's)",
    "rope_scaling.short_factor, long_factor": f"rotary_dim/2 numbers in (0, {FACTOR_MAX:g}]",
    "rope_scaling.max_model_len": (f"an integer in [1, {MAX_POSITION_MAX}]: the served length; with it, LongRoPE follows "
                                   f"vLLM's policy (the long factors at every length once it exceeds the original "
                                   f"length) and dynamic NTK SGLang's (the base of that length at every length), "
                                   f"without it transformers' (by the call's length)"),
    "mrope_section": f"{AXES_MIN} to {AXES_MAX} integers >= 1 (pairs per axis) summing to rotary_dim/2",
    "mrope_interleaved": ("true or false, with mrope_section; axis a > 0 owns pairs a, a + A, ..., a + A (section[a] - 1), "
                          "so the last of them must be < rotary_dim/2"),
    "axes_dims_rope": f"{AXES_MIN} to {AXES_MAX} even integers >= 2 (dims per axis) summing to rotary_dim",
    "axes_parity": "true or false: two axes, rotary_dim/2 even",
    "axis_names": "one distinct name per axis",
    "axes_offset": ("one finite number per axis, each below max_position in size, added to that axis's position "
                    "before it turns its pairs (Llama 4 vision counts patches from 1: 1; DINOv3 centres them: 0.5 - H/2)"),
    "axes_ladder": ("theta (each axis theta^(-2k/d_a)), ascending (theta^(k/(K - 1)), k < K = d_a/2: LTX-Video's "
                    "theta^linspace(0, 1, K)) or descending (theta^(-k/(K - 1))), with axes_dims_rope"),
    "axes_interleaved": ("true or false, with axes_dims_rope of equal sizes: pair j on axis j mod A at its frequency "
                         "j // A (LTX-Video's per-frequency interleaving)"),
    "axes_scale": ("one finite number > 0 per axis: the axis's coordinate is (position + offset) x scale (DINOv3's "
                   "2 pi x 2/H: patch centres in [-1, 1], angles 2 pi coordinate / period)"),
    "video_time": "grid, seconds or frames (how a video's temporal positions grow), with a 3-axis mrope_section",
    "tokens_per_second": "a finite number > 0, with video_time seconds",
    "vision_framing": (f"two integers [before, after] in [0, {FRAMING_MAX}], with a 3-axis mrope_section: the least text "
                       f"tokens right before and right after every vision block of the model's prompts (Qwen2.5-Omni's "
                       f"thinker: [1, 1], its <|vision_bos|> and <|vision_eos|>); [1, 0] where none is stated"),
    "alibi_bias_max": "a finite number > 0 (ALiBi's slopes 2^(-alibi_bias_max (h + 1) / n_heads); 8 is Press et al.'s)",
    "bias_symmetric": "true or false: ALiBi's -m |i - j| for every key (an encoder) instead of the causal -m (i - j)",
    "query_temperature_beta": ("a finite number >= 0: the query at p is multiplied by 1 + beta ln(1 + floor((p + "
                               "offset) / length)) after RoPE (Ministral 3's llama_4_scaling_beta 0.1; 0: none)"),
    "query_temperature_length": "an integer >= 1: the temperature's step (Ministral 3's original_max_position_embeddings)",
    "yarn_softmax_mscale": ("true or false: with YaRN's mscale_all_dim, the attention's softmax scale times g(s, "
                            "mscale_all_dim)^2 (DeepSeek's; true) or not (Ministral 3's)"),
    "query_temperature_offset": "0 or 1: floor((p + offset) / length), 1 for Llama 4's p + 1, 0 for Mistral's p",
    "attention_nope": ("true or false: the attention layer turns neither q nor k (NoPE: Llama 4's no_rope_layers, "
                       "whose queries carry the query temperature alone)"),
    "xpos_scale_base": "a finite number > 0 (xPos's decay zeta_i^((m - n) / xpos_scale_base); 512 is the published one)",
}


class ExpectationError(ValueError):
    """A bad expectation. ``field`` names the offending field; ``str(err)`` is one line."""

    def __init__(self, field_name: str, problem: str):
        self.field = field_name
        self.problem = problem
        super().__init__(f"{field_name}: {problem}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) and math.isfinite(v)


def near(name: str, known) -> str | None:
    """The known name a mistyped one most likely means (difflib's closest, at least 0.6 alike), or None."""
    import difflib

    found = difflib.get_close_matches(str(name), sorted(map(str, known)), n=1)
    return found[0] if found else None


def unknown_name(name: str, known, what: str = "field") -> str:
    """The problem of a name that is not among ``known``: 'unknown field; did you mean head_dim?' where one is close
    (a typo needs one name, not the list), else every known name."""
    return f"unknown {what}{known_names(name, known)}"


def known_names(name: str, known) -> str:
    """What follows 'unknown ...': '; did you mean X?' where one known name is close to ``name``, else the list."""
    close = near(name, known)
    return f"; did you mean {close}?" if close is not None else f" (known: {', '.join(map(str, known))})"


def _short(v: Any) -> str:
    """A value as an error message shows it: never thousands of digits."""
    text = repr(v)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"
