"""An apply kernel for interleaved pairs (2i, 2i + 1) called on a model whose pairs are (i, i + r/2)."""

from ropespec.implementations.numpy_kernel import make as make_kernel

TARGETS = ("kernel.rotation",)
DIAGNOSIS = "convention"
SOURCE = ("flash-attention's apply_rotary_emb(interleaved=...) and vLLM's is_neox_style: the flag set the wrong way "
          "for the checkpoint (transformers #25199: GPT-J style vs NeoX style)")
FORM = "kernel"
EXPECT = {"head_dim": 64, "dtype": "float32", "convention": "half"}


def make(expect):
    return make_kernel(expect.replace(convention="interleaved"), table="pair")  # the bug: interleaved pairs
