"""A Triton RoPE kernel whose backward branch turns the same way as the forward (its sin not negated)."""

from implementations import triton_rope

TARGETS = ("autograd.inverse-rotation",)
DIAGNOSIS = "direction"
SOURCE = "Liger-Kernel's rope kernel negates sin in its BACKWARD_PASS branch; a kernel that forgets it (flash-attention's backward is its forward with conjugate=True)"
ARRAY = "torch"
REQUIRES = ("torch", "triton")
EXPECT = {"head_dim": 16, "max_position": 4096}


def make(expect):
    k = triton_rope.kernels_for(expect)
    import torch

    def rope(x, positions):
        c, s = triton_rope.table(expect, positions)
        index = torch.arange(len(x), device=x.device)
        return k.RopeRows.apply(x, c, s, index, expect.convention == "interleaved", +1.0)  # the bug: +1, not -1

    return rope
