"""transformers' apply signature rotating the other way: rotate_half with its sign flipped."""

from ropespec.implementations.numpy_qk import make as make_qk

TARGETS = ("kernel.qk",)
DIAGNOSIS = "direction"
SOURCE = "rotate_half written as cat(x1, -x2) instead of cat(-x2, x1) (a port of apply_rotary_pos_emb)"
FORM = "qk"
EXPECT = {"head_dim": 64, "dtype": "float32", "n_heads": 2, "n_kv_heads": 1}


def make(expect):
    inner = make_qk(expect)

    def apply(q, k, cos, sin):
        return inner(q, k, cos, -sin)

    return apply
