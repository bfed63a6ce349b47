"""An apply kernel that turns the other way: it negates sin (the inverse rotation, used for the backward pass)."""

from ropespec.implementations.numpy_kernel import make as make_kernel

TARGETS = ("kernel.rotation",)
DIAGNOSIS = "direction"
SOURCE = ("flash-attention's apply_rotary takes conjugate=True for the backward pass; a forward call with it set "
          "rotates by -p theta")
FORM = "kernel"
EXPECT = {"head_dim": 64, "dtype": "float32"}


def make(expect):
    k = make_kernel(expect)

    def kernel(x, cos, sin):
        return k(x, cos, -sin)

    kernel.table = k.table
    return kernel
