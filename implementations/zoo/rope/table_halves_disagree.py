"""A per-dim table whose second copy of each pair's cos/sin is computed apart and differs in the last bit."""

import numpy as np

from ropespec.implementations.numpy_table import make as make_table

TARGETS = ("table.angles",)
DIAGNOSIS = "layout"
SOURCE = ("cat([cos(freqs), cos(freqs_again)]) with the halves formed by two code paths "
          "(one fused, one not), so that q and k pairs turn by slightly different angles")
FORM = "table"
EXPECT = {"head_dim": 64, "dtype": "float32"}


def make(expect):
    build = make_table(expect)
    h = expect.rotary_dim // 2

    def table(positions):
        c, s = build(positions)
        c, s = c.copy(), s.copy()
        c[:, h:] = np.nextafter(c[:, h:], np.float32(2.0))  # one ulp up: the second half's own rounding
        return c, s

    return table
