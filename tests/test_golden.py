"""The shipped golden set is current and replays against the shipped implementations."""

import numpy as np
import pytest

from ropespec.implementations import load_implementation
from ropespec.properties.numerics import output_bound
from ropespec.reference import golden
from ropespec.reference.data.make_golden import POSITIONS
from ropespec.cli import main
from ropespec.spec import presets

PRESETS = presets.rotary()  # a NoPE layer's preset has no RoPE to record


@pytest.mark.parametrize("name", PRESETS)
def test_golden_file_is_current(name):
    on_disk = (golden.DATA / f"{name}.json").read_text()
    fresh = golden.make(presets.get(name), POSITIONS)
    import json

    assert json.loads(on_disk) == fresh, "stale: run python reference/data/make_golden.py"


REPLAY = [("ropespec.implementations.numpy_rope:make", "numpy", "float64"),
          ("ropespec.implementations.numpy_rope:make", "numpy", "float32"),
          ("ropespec.implementations.torch_rope:make", "torch", "float32"),
          ("ropespec.implementations.torch_rope:make", "torch", "bfloat16")]


@pytest.mark.parametrize("target, array, dtype", REPLAY, ids=[f"{a}-{d}" for _, a, d in REPLAY])
@pytest.mark.parametrize("name", PRESETS)
def test_golden_replays_within_the_strict_bound(name, target, array, dtype):
    if array == "torch":
        pytest.importorskip("torch")
    e, pos, x, ys = golden.read(golden.DATA / f"{name}.json")
    e = e.replace(dtype=dtype, max_position=max(e.max_position, int(pos.max()) + 1))  # the file's positions reach 2^24
    f = load_implementation(target, array=array, dtype=dtype).bind(e)
    strict = e.replace(angle_dtype="exact", inv_freq_dtype="exact")
    for k in range(len(pos)):  # one call per position, as the file says
        got = f(x[k : k + 1], pos[k : k + 1])
        bound = output_bound(strict, x[k : k + 1], pos[k : k + 1])
        assert np.all(np.abs(got - ys[dtype][k : k + 1]) <= bound), (name, pos[k].tolist())


def test_golden_command_writes_a_readable_file(tmp_path, capsys):
    out = tmp_path / "g.json"
    assert main(["golden", "--expect", "gpt-j-6b", "--positions", "0,7,4095", "--out", str(out)]) == 0
    e, pos, x, ys = golden.read(out)
    assert e == presets.get("gpt-j-6b") and pos.tolist() == [0, 7, 4095]
    assert np.array_equal(ys["float64"][0], x[0])  # position 0 is the identity
    assert set(ys) == {"float64", "float32", "bfloat16"}
    assert main(["golden", "--expect", "gpt-j-6b", "--positions", "a,b", "--out", str(out)]) == 2
