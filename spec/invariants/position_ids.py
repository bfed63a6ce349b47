"""A multimodal position-id builder's invariants."""

from ropespec.spec.invariants import Invariant

#: where these stand in the registry (its families' order: RoPE first)
ORDER = 40

INVARIANTS = [
    Invariant(
        "position-ids.text",
        "positions",
        "Text tokens have one position on every axis, one more than the text token before them in their run; a "
        "text-only sequence gets 0, 1, ..., n - 1 on every axis, so that the M-RoPE it feeds is exactly 1-D RoPE "
        "(axes.text-reduction).",
        source="Qwen2-VL (arXiv 2409.12191) section 2.1; vLLM #16878 (Qwen-Omni off by one); transformers #40154 (a "
               "fourth text row)",
    ),
    Invariant(
        "position-ids.grid",
        "positions",
        "A vision block starting at s gives its token at merged-grid index (k, i, j), row-major, the height and width "
        "positions s + i and s + j: its extents are the merged grid's, every (h, w) cell once per temporal step.",
        source="Qwen2-VL's get_rope_index; mlx-vlm #1282 (later images given text positions); LightX2V #1416 (1-D "
               "positions without mm_token_type_ids)",
    ),
    Invariant(
        "position-ids.time",
        "positions",
        "A vision block's temporal position at grid step k is s + time(k) under the model's rule (video_time: the "
        "step itself, floor(k x seconds x tokens_per_second) with fractional seconds kept, or one frame per block); "
        "a still image's is s, never scaled by the clock.",
        source="Qwen2.5-VL's get_rope_index; transformers #45381 / PR #45400 (temporal positions wrong, a test at "
               "0.083 s per grid step never moving t); transformers #45325 (still images time-scaled); transformers "
               "PR #48669 (second_per_grid_t cast to int); lmms-eval #1393 (the same cast)",
    ),
    Invariant(
        "position-ids.resume",
        "positions",
        "Every segment after the first starts at one past the largest position used so far on any axis: text after "
        "a video resumes beyond its last frame, and a later image follows the one before.",
        source="Qwen2-VL's get_rope_index (st_idx = max + 1); mlx-vlm #1282",
    ),
    Invariant(
        "position-ids.batch",
        "positions",
        "A batch row's positions do not depend on the other rows, and left padding does not move its real tokens: "
        "each row of a padded batch equals the row built alone.",
        source="transformers' get_rope_index with attention_mask; Liger-Kernel #461 (batch row 0's positions)",
    ),
    Invariant(
        "position-ids.decode",
        "positions",
        "Decoding continues every row at one past the largest position of its prompt, on every axis (rope_deltas = "
        "that minus the prompt's length).",
        source="transformers' compute_3d_position_ids and rope_deltas; vLLM #16878",
    ),
]
