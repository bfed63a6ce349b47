"""sbhd layout, but positions (batch, seq) laid on x's (seq, batch) axes as if x were bshd: batch and seq swapped."""

from ropespec.implementations.numpy_layout import _batched

TARGETS = ("rope.layout",)
DIAGNOSIS = "layout"
SOURCE = "Megatron-style (seq, batch, heads, dim) inputs handed to code written for (batch, seq, ...)"
LAYOUT = "sbhd"
EXPECT = {"head_dim": 32, "dtype": "float32"}

make = _batched(lambda p: p[:, :, None])  # right for sbhd: p.T[:, :, None]
