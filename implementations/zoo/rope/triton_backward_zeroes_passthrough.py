"""A Triton RoPE kernel whose backward ignores partial rotary: the pass-through dims' gradients come back 0, not g."""

from ropespec.implementations import triton_rope

TARGETS = ("autograd.inverse-rotation",)
DIAGNOSIS = "rotary-dim"
SOURCE = "hand-written RoPE backward kernels that allocate the gradient with empty/zeros and write only the rotated dims"
ARRAY = "torch"
REQUIRES = ("torch", "triton")
EXPECT = {"head_dim": 16, "rotary_dim": 8, "max_position": 4096}


def make(expect):
    k = triton_rope.kernels_for(expect)
    import torch

    interleaved = expect.convention == "interleaved"
    r = expect.rotary_dim

    class Rope(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, c, s, index):
            ctx.save_for_backward(c, s, index)
            return k.rope_rows(x, c, s, index, interleaved=interleaved)

        @staticmethod
        def backward(ctx, g):
            c, s, index = ctx.saved_tensors
            dx = torch.zeros_like(g)  # the bug: the pass-through dims' gradient is never written
            dx[:, :r] = k.rope_rows(g[:, :r].contiguous(), c, s, index, interleaved=interleaved, sign=-1.0)
            return dx, None, None, None

    def rope(x, positions):
        c, s = triton_rope.table(expect, positions)
        return Rope.apply(x, c, s, torch.arange(len(x), device=x.device))

    return rope
