"""Near the threshold: a llama3 table whose high-frequency band (which llama3 leaves unchanged) is off by
a relative 3e-6, a few times what the float32 class allows the measured frequencies and no more."""

from ropespec.implementations.zoo._base import build, spec_table

TARGETS = ("scaling.band-edges",)
DIAGNOSIS = "scaling"
SOURCE = "synthetic: the band-edges bound's tightness; real cousins are llama3 tables rebuilt with a rounded factor"
EXPECT = {"head_dim": 64, "dtype": "float64", "max_position": 65536, "rope_theta": 500000.0,
          "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                           "original_max_position_embeddings": 8192}}
NEAR = True


def make(expect):
    plain = expect.replace(rope_scaling=None)

    def table(e, seq_len):
        th, g = spec_table(e, seq_len)
        unchanged = th == spec_table(plain, seq_len)[0]
        return th * (1 + 3e-6 * unchanged), g

    return build(expect, table=table)
