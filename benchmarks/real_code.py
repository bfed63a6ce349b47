"""Check transformers' own rotary code, model type by model type, with every property: the README table.

    python benchmarks/real_code.py            # prints a Markdown table (about 5 minutes on 2 cores)
    python benchmarks/real_code.py gptj llama # only these model types

Each row is one model type's rotary embedding class and apply function (ropespec.implementations.adapters.hf),
under the expectation of a shipped config.json (tests/fixtures/configs), a preset or the config class's
defaults, checked three ways: the default class (float32 angles and inverse frequencies) in float32
and in bfloat16, and the strict class (exact angles) in float32 at positions up to 2^24 (GPT-J: its
table's 2048 rows). A verdict is ``pass`` (N properties held), or ``fail`` with the words of the
failures. Seconds are wall time of the whole check, worker start and imports included.
"""

from __future__ import annotations

import platform
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def expectations():
    from test_real_code import MODELS  # the same expectations the tests use

    return MODELS


def verdict(result) -> str:
    rs = [r for r in result.reports[0].results if r.status in ("pass", "fail", "error")]
    failed = [r for r in rs if r.status != "pass"]
    if not failed:
        return f"pass ({len(rs)} held)"
    words = sorted({r.diagnosis or r.status for r in failed})
    return f"fail {len(failed)}/{len(rs)} [{', '.join(words)}]"


def main(argv: list[str]) -> int:
    import torch
    import transformers

    from ropespec import check

    models = expectations()
    chosen = [m for m in models if not argv or m in argv]
    print(f"transformers {transformers.__version__}, torch {torch.__version__}, Python {platform.python_version()}, "
          f"{platform.machine()}, {date.today().isoformat()}; profile dev, seed 0\n")
    print("| model type | expectation | default float32 | default bfloat16 | strict float32 to 2^24 | seconds |")
    print("|---|---|---|---|---|---|")
    for mt in chosen:
        e = models[mt]()
        top = e.max_position if mt == "gptj" else max(e.max_position, 2**24)
        runs = [(e, "float32"), (e, "bfloat16"),
                (e.replace(angle_dtype="exact", inv_freq_dtype="exact", max_position=top), "float32")]
        cells, seconds = [], []
        for ex, dtype in runs:
            t = time.perf_counter()
            result = check(f"ropespec.implementations.adapters.hf:{mt}", expect=ex, array="torch", dtype=dtype, seed=0)
            seconds.append(time.perf_counter() - t)
            cells.append(verdict(result))
        print(f"| {mt} | {e.describe().rsplit(', ', 1)[0]} | {' | '.join(cells)} | {' / '.join(f'{s:.0f}' for s in seconds)} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
