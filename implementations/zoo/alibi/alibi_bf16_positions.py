"""Forms BLOOM's m j and rounds it to bfloat16 (8 significant bits) before handing it back in a wider dtype."""

import numpy as np

from ropespec.implementations.zoo._biases import alibi

TARGETS = ("alibi.precision",)
DIAGNOSIS = "bias-precision"
FAMILY = "alibi"
SOURCE = ("BLOOM's build_alibi_tensor casts slope x key position to the model's dtype (huggingface/transformers, "
          "src/transformers/models/bloom/modeling_bloom.py)")


def _bf16(v):
    """Round to nearest even at bfloat16's 8 significant bits, kept in float32."""
    bits = np.asarray(v, dtype=np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return rounded.view(np.float32).astype(np.float64)


def make(expect):
    return alibi(expect, bias=lambda m, i, j: _bf16(np.broadcast_to(m * j, np.broadcast_shapes(m.shape, i.shape, j.shape))))
