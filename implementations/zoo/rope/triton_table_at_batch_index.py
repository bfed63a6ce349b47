"""A batched Triton RoPE kernel that reads each token's table row at its batch index instead of its own (b s + t)."""

from ropespec.implementations import triton_rope

TARGETS = ("rope.layout",)
DIAGNOSIS = "layout"
SOURCE = "Liger-Kernel's rope kernel computes the table row from pid // seq_len and pid % seq_len; a kernel that keeps only the batch index"
ARRAY = "torch"
REQUIRES = ("torch", "triton")
LAYOUT = "bshd"
EXPECT = {"head_dim": 16, "max_position": 4096}


def make(expect):
    k = triton_rope.kernels_for(expect)
    import torch

    def rope(x, positions):
        b, s_, h, d = x.shape
        c, s = triton_rope.table(expect, positions.reshape(-1))
        index = torch.arange(b, device=x.device).repeat_interleave(s_ * h)  # the bug: the batch index, not b s + t
        return k.rope_rows(x.reshape(-1, d), c, s, index, interleaved=expect.convention == "interleaved").reshape(x.shape)

    return rope
