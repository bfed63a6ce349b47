"""The perturbation grid's named fractions: every cell of properties/perturbations.py (an implementation with one field of
its expectation perturbed, or two) checked as `ropespec check --invariant rope.conformance` checks it, at seeds 0, 1 and
2; a single is named when its failure carries the perturbed field's word at every seed, a pair when it carries one of
the two words and says the other after it at every seed.

    python benchmarks/perturbation_grid.py          # prints the figure and writes benchmarks/perturbation_grid.json

README quotes the figure with this command and the date it was recorded (tests/test_grid.py compares the two).
"""

from __future__ import annotations

import datetime
import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ropespec.properties.perturbations import cells, named, named_pair, pair_cells  # noqa: E402

OUT = Path(__file__).with_suffix(".json")
SEEDS = (0, 1, 2)


def main() -> int:
    t0 = time.perf_counter()
    rows = []
    for cell in cells():
        words = [named(cell, seed=s) for s in SEEDS]
        rows.append({"cell": cell.name, "field": cell.field, "word": cell.word, "named": words,
                     "ok": all(w == cell.word for w in words)})
    ok = sum(r["ok"] for r in rows)
    pairs = [{"cell": c.name, "words": c.word, "ok": all(named_pair(c, seed=s) for s in SEEDS)} for c in pair_cells()]
    pairs_ok = sum(r["ok"] for r in pairs)
    record = {"date": datetime.date.today().isoformat(), "machine": f"{platform.machine()}, {platform.python_version()}",
              "seconds": round(time.perf_counter() - t0, 1), "singles": len(rows), "named": ok,
              "fraction": round(ok / len(rows), 4), "pairs": len(pairs), "pairs_named": pairs_ok,
              "pairs_fraction": round(pairs_ok / len(pairs), 4), "misnamed": [r for r in rows if not r["ok"]],
              "pairs_misnamed": [r["cell"] for r in pairs if not r["ok"]], "cells": rows}
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(f"perturbation grid: {ok} of {len(rows)} single perturbations named at seeds {list(SEEDS)} "
          f"({100 * ok / len(rows):.1f}%), {pairs_ok} of {len(pairs)} pairs ({100 * pairs_ok / len(pairs):.1f}%), "
          f"{record['seconds']} s")
    for r in record["misnamed"]:
        print(f"  misnamed: {r['cell']}: {r['named']} where {r['word']} is the field's word")
    for name in record["pairs_misnamed"]:
        print(f"  pair not named both: {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
