"""A custom backward that forgets the sign: it returns R(+p) g instead of R(-p) g."""

TARGETS = ("autograd.inverse-rotation",)
DIAGNOSIS = "direction"
SOURCE = "hand-written RoPE backward kernels (the transpose of a rotation is the rotation by -p)"
ARRAY = "torch"
EXPECT = {"head_dim": 16, "max_position": 4096}


def make(expect):
    try:
        import torch
    except ImportError:
        raise NotImplementedError("torch is not installed") from None
    from ropespec.implementations.torch_rope import make as make_rope

    rope = make_rope(expect)

    class Rope(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, positions):
            ctx.save_for_backward(positions)
            return rope(x.detach(), positions)

        @staticmethod
        def backward(ctx, g):
            (positions,) = ctx.saved_tensors
            return rope(g, positions), None  # the bug: should be rope(g, -positions)

    return lambda x, positions: Rope.apply(x, positions)
