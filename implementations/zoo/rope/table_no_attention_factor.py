"""A YaRN cos/sin cache without the attention factor (transformers multiplies it into the table)."""

from ropespec.implementations.numpy_table import make as make_table
from ropespec.spec.angles import theta_hi_lo

TARGETS = ("table.angles",)
DIAGNOSIS = "attention-factor"
SOURCE = "transformers' attention_scaling multiplied into cos/sin (YaRN eq. 22); a port that drops it"
FORM = "table"
EXPECT = {"head_dim": 64, "dtype": "float32", "max_position": 65536,
          "rope_scaling": {"rope_type": "yarn", "factor": 16.0, "original_max_position_embeddings": 4096}}


def make(expect):
    plain = make_table(expect)
    g = theta_hi_lo(expect)[2]  # the attention factor the table carries

    def table(positions):
        c, s = plain(positions)
        return c / g, s / g

    return table
