"""A cos/sin cache built with the default base 10000 for a model configured with another rope_theta."""

from ropespec.implementations.numpy_table import make as make_table

TARGETS = ("table.angles",)
DIAGNOSIS = "base"
SOURCE = ("a rotary-embedding module constructed without the config's rope_theta (transformers #25199-style "
          "mismatches; Code Llama's 1e6 base read as 1e4)")
FORM = "table"
EXPECT = {"head_dim": 64, "dtype": "float32", "rope_theta": 1000000.0}


def make(expect):
    return make_table(expect.replace(rope_theta=10000.0))
