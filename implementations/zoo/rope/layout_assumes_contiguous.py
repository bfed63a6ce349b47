"""bshd layout that reads x in memory order (by its shape, not its strides): wrong on transposed storage."""

from ropespec.implementations.numpy_layout import bshd

TARGETS = ("rope.layout",)
DIAGNOSIS = "layout"
SOURCE = "kernels that index x as contiguous (offsets from the shape, not x.stride()): flash-attention #1131"
LAYOUT = "bshd"
EXPECT = {"head_dim": 32, "dtype": "float32"}


def make(expect):
    inner = bshd(expect)
    return lambda x, positions: inner(x.ravel(order="K").reshape(x.shape), positions)
