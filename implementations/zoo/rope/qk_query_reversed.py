"""transformers' apply signature turning the queries the other way and the keys right: the direction flipped on q
only, so the scores depend on m + n instead of m - n."""

from ropespec.implementations.numpy_qk import make as make_qk

TARGETS = ("kernel.qk",)
DIAGNOSIS = "direction"
SOURCE = "a port of nanochat's reverse rotate_half (cat(x2, -x1)) that kept RoFormer's for the keys"
FORM = "qk"
EXPECT = {"head_dim": 64, "dtype": "float32", "n_heads": 2, "n_kv_heads": 1}


def make(expect):
    inner = make_qk(expect)

    def apply(q, k, cos, sin):
        return inner(q, k, cos, -sin)[0], inner(q, k, cos, sin)[1]

    return apply
