"""Golden data: inputs and exact outputs at chosen positions, for tests in any language.

A golden file is JSON::

    {"format": "ropespec-golden-1", "expect": {...}, "positions": [...],
     "x": [[hex, ...], ...], "y": {"float64": [[hex, ...]], "float32": [...], "bfloat16": [...]}}

Row k is one call of one position, ``positions[k]`` (sequence length positions[k] + 1 for the types
that depend on it); a multi-axis expectation's positions are vectors, row k at the given positions[(k + a) mod n]
on axis a (``Expect.rows_at``). Every number is a float64 in C99 hex notation (Python's ``float.hex``, C's
``strtod``/``%a``), so nothing is lost in decimal. ``x`` is exactly representable in bfloat16, so the
same inputs serve every dtype; ``y[d]`` is the exact result rounded correctly to dtype d.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ropespec.reference.rope import apply
from ropespec.spec.dtypes import round_to
from ropespec.spec.expectation import Expect

FORMAT = "ropespec-golden-1"
DTYPES = ("float64", "float32", "bfloat16")
DATA = Path(__file__).parent / "data"


def make(expect: Expect, positions: list[int], *, seed: int = 0) -> dict:
    pos = np.asarray(positions, dtype=np.int64)
    pos = expect.rows_at(pos) if expect.multi_axis and pos.ndim == 1 else pos
    x = round_to(np.random.default_rng(seed).standard_normal((len(pos), expect.head_dim)), "bfloat16")
    ys = {d: np.stack([apply(expect, x[k : k + 1], pos[k : k + 1], dtype=d)[0] for k in range(len(pos))])
          for d in DTYPES}
    hexes = lambda a: [[float(v).hex() for v in row] for row in a]
    return {
        "format": FORMAT,
        "expect": expect.to_dict(),
        "positions": pos.tolist(),
        "x": hexes(x),
        "y": {d: hexes(v) for d, v in ys.items()},
    }


def text(data: dict) -> str:
    """A golden file's text."""
    return json.dumps(data, indent=0, separators=(",", ":")) + "\n"


def write(path: str | Path, data: dict) -> None:
    Path(path).write_text(text(data))


def read(path: str | Path) -> tuple[Expect, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """(expect, positions, x, {dtype: y}) of a golden file, as float64 arrays."""
    data = json.loads(Path(path).read_text())
    if data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a {FORMAT} file")
    arr = lambda rows: np.array([[float.fromhex(v) for v in row] for row in rows])
    return (Expect.from_dict(data["expect"]), np.array(data["positions"], dtype=np.int64), arr(data["x"]),
            {d: arr(v) for d, v in data["y"].items()})
