"""A Triton RoPE kernel launched with a block of the power of two below rotary_dim/2: the last pairs stay unrotated."""

from ropespec.implementations import triton_rope

TARGETS = ("rope.conformance",)
DIAGNOSIS = "rotary-dim"
SOURCE = "Triton kernels whose block or mask assumes a power-of-two rotary dim (Liger-Kernel pads to next_power_of_2 and masks, for this)"
ARRAY = "torch"
REQUIRES = ("torch", "triton")
EXPECT = {"head_dim": 64, "rotary_dim": 48, "max_position": 4096}


def make(expect):
    k = triton_rope.kernels_for(expect)
    import torch

    def rope(x, positions):
        c, s = triton_rope.table(expect, positions)
        half = c.shape[1]
        block = 1 << (half.bit_length() - 1)  # the bug: the power of two at or below half, not above
        out = k.rope_rows(x, c, s, torch.arange(len(x), device=x.device), interleaved=expect.convention == "interleaved",
                          block=block)
        if block < half:  # the pairs past the block are never written: they keep x's values
            out = out.clone()
            for j in range(block, half):
                a, b = (2 * j, 2 * j + 1) if expect.convention == "interleaved" else (j, j + half)
                out[:, a], out[:, b] = x[:, a], x[:, b]
        return out

    return rope
