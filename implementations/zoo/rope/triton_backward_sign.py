"""A Triton RoPE kernel whose backward branch turns the same way as the forward (its sin not negated)."""

from ropespec.implementations import triton_rope

TARGETS = ("autograd.inverse-rotation",)
DIAGNOSIS = "direction"
SOURCE = "Liger-Kernel's rope kernel negates sin in its BACKWARD_PASS branch; a kernel that forgets it (flash-attention's backward is its forward with conjugate=True)"
ARRAY = "torch"
REQUIRES = ("torch", "triton")
EXPECT = {"head_dim": 16, "max_position": 4096}


def make(expect):
    k = triton_rope.kernels_for(expect)
    import torch

    interleaved = expect.convention == "interleaved"

    class Rope(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, c, s, index):
            ctx.save_for_backward(c, s, index)
            return k.rope_rows(x, c, s, index, interleaved=interleaved)

        @staticmethod
        def backward(ctx, g):
            c, s, index = ctx.saved_tensors
            return k.rope_rows(g, c, s, index, interleaved=interleaved, sign=+1.0), None, None, None  # the bug: +1

    def rope(x, positions):
        c, s = triton_rope.table(expect, positions)
        return Rope.apply(x, c, s, torch.arange(len(x), device=x.device))

    return rope
