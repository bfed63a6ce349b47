"""Regenerate the shipped golden set: one file per preset of a layer that turns (presets.rotary), positions up to 2**24.

    python reference/data/make_golden.py

tests/test_golden.py checks that the files are what this script writes and replays them against the
shipped implementations.
"""

from pathlib import Path

from ropespec.reference import golden
from ropespec.spec import presets

POSITIONS = [1, 999, 65521, 1048573, 16777213]


def main() -> None:
    out = Path(__file__).parent
    for name in presets.rotary():
        golden.write(out / f"{name}.json", golden.make(presets.get(name), POSITIONS))
        print(f"wrote {name}.json")


if __name__ == "__main__":
    main()
