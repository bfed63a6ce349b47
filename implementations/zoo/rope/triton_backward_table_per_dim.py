"""A Triton kernel kernel(x, cos, sin) whose backward reads its one-value-per-pair table at the per-dim index 2i."""

from ropespec.implementations import triton_rope

TARGETS = ("autograd.inverse-rotation",)
DIAGNOSIS = "layout"
SOURCE = "kernels whose forward takes cos/sin per pair (GPT-OSS, flash-attention) and whose backward indexes them per dim"
ARRAY = "torch"
REQUIRES = ("torch", "triton")
FORM = "kernel"
EXPECT = {"head_dim": 16, "max_position": 4096}


def make(expect):
    k = triton_rope.kernels_for(expect)
    import torch

    interleaved = expect.convention == "interleaved"

    class Rope(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, c, s):
            ctx.save_for_backward(c, s)
            return k.rope_rows(x, c, s, torch.arange(len(x), device=x.device), interleaved=interleaved)

        @staticmethod
        def backward(ctx, g):
            c, s = ctx.saved_tensors
            half = c.shape[1]
            idx = (2 * torch.arange(half, device=c.device)) % half  # the bug: a per-dim index into a per-pair table
            return k.rope_rows(g, c[:, idx], s[:, idx], torch.arange(len(g), device=g.device), interleaved=interleaved,
                               sign=-1.0), None, None

    def kernel(x, cos, sin):
        return Rope.apply(x, cos.to(torch.float32), sin.to(torch.float32))

    kernel.table = "pair"
    return kernel
