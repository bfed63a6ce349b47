"""A Triton RoPE kernel launched outside an autograd.Function, in flash-attention's manner (``apply_rotary`` called
directly): the output is allocated with empty_like and only its pass-through dims are copied with torch, so autograd
records the copy and nothing of the rotation: the rotary dims' gradients come back zero."""

from ropespec.implementations import triton_rope

TARGETS = ("autograd.inverse-rotation",)
DIAGNOSIS = "detached"
SOURCE = ("flash-attention's Triton apply_rotary called without ApplyRotaryEmb: its output[..., rotary_dim:].copy_ is "
          "the only differentiable step")
ARRAY = "torch"
REQUIRES = ("torch", "triton")
FORM = "kernel"
EXPECT = {"head_dim": 16, "rotary_dim": 8, "max_position": 4096}


def make(expect):
    k = triton_rope.kernels_for(expect)
    import torch

    interleaved = expect.convention == "interleaved"
    r = expect.rotary_dim

    def rotate(x, cos, sin):
        out = torch.empty_like(x)
        out[:, r:].copy_(x[:, r:])  # the bug: autograd records this copy, and not the kernel's writes below
        rotated = k.rope_rows(x.detach(), cos.to(torch.float32), sin.to(torch.float32),
                              torch.arange(len(x), device=x.device), interleaved=interleaved)
        out.data[:, :r] = rotated[:, :r]
        return out

    rotate.table = "pair"
    return rotate
