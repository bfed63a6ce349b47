"""--layout and --form vllm: batched, packed and flattened-head RoPE checked as users write it, on every storage
(views of a fused buffer, transposed, reversed, broadcast), in place or not; the replay of a layout failure."""

import shlex
from pathlib import Path

import numpy as np
import pytest

from ropespec.implementations import CallShape, arrays, load_implementation
from ropespec.properties.framework import all_properties, PROPERTIES, run_property
from ropespec import check

all_properties()
LAYOUT = PROPERTIES["layout"]
FIXTURES = Path(__file__).parent / "fixtures" / "layout_kernels.py"

# the numpy layouts pass rope.layout in README's examples (tests/test_readme.py), and numpy-bshd, numpy-thd and
# numpy-vllm-inplace every property in README's `ropespec check`


def test_torch_functions_as_users_write_them_pass_on_every_storage():
    """In this process (one torch import for the three): a plain bshd function, a packed thd one taking cu_seqlens,
    and an in-place one, on contiguous, fused, transposed and broadcast torch storage."""
    pytest.importorskip("torch")
    import importlib.util

    spec = importlib.util.spec_from_file_location("layout_kernels", FIXTURES)
    kernels = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kernels)
    for layout, name, inplace in (("bshd", "bshd", False), ("thd", "thd", False), ("bshd", "bshd_inplace", True)):
        s = load_implementation(getattr(kernels, name), array="torch", shape=CallShape(layout=layout, inplace=inplace),
                         isolate=False)
        r = run_property(LAYOUT, s, profile="ci", seed_value=0)
        assert r.status == "pass", (name, r.message)


@pytest.mark.parametrize("array", ["numpy", "torch"])
def test_every_storage_holds_the_values_it_was_given(array):
    if array == "torch":
        pytest.importorskip("torch")
    v = np.arange(2 * 3 * 2 * 4, dtype=np.float64).reshape(2, 3, 2, 4)
    for storage in arrays.STORAGES[array]:
        want = np.broadcast_to(v[:, :, :1], v.shape) if storage == "broadcast" else v
        views, buf, regions = arrays.stored([np.array(want)], array, "float32", "cpu", storage, 2)
        got = arrays.from_native(views[0], array, v.shape)
        assert np.array_equal(got, want), storage
        contiguous = views[0].flags.c_contiguous if array == "numpy" else views[0].is_contiguous()
        assert contiguous == (storage == "contiguous"), storage


def test_a_layout_failure_replays_from_its_command(cli):
    code, out, _ = cli("check", "ropespec.implementations.zoo.rope.layout_row0_positions:make", "--layout", "bshd",
                       "--dtype", "float32", "--invariant", "rope.layout", "--seed", "3")
    assert code == 1 and "fail [layout]" in out, out
    replay = next(ln.split("replay: ", 1)[1] for ln in out.splitlines() if "replay: " in ln)
    assert "--layout bshd" in replay, replay
    argv = shlex.split(replay)[1:]
    code, again, _ = cli(*argv)
    assert code == 1 and "batch row 0's positions" in again, again


def test_an_inplace_function_not_declared_is_named(cli, tmp_path):
    (tmp_path / "k.py").write_text(
        "from ropespec.implementations.numpy_layout import bshd\n"
        "def make(expect):\n"
        "    f = bshd(expect)\n"
        "    def apply(x, positions):\n"
        "        x[...] = f(x, positions)\n"
        "        return x\n"
        "    return apply\n"
        "def copy(expect):\n"
        "    return bshd(expect)\n")
    code, out, _ = cli("check", f"{tmp_path / 'k.py'}:make", "--layout", "bshd", "--dtype", "float32",
                       "--invariant", "rope.layout", "--seed", "1")
    assert code == 1 and "[input-mutated]" in out and "is declared --inplace" in out, out
    # declared in place but leaving x as it was: x after the call is not the result
    code, out, _ = cli("check", f"{tmp_path / 'k.py'}:copy", "--layout", "bshd", "--inplace", "--dtype",
                       "float32", "--invariant", "rope.layout", "--seed", "1")
    assert code == 1 and "rope.layout" in out and "fail" in out, out


@pytest.mark.parametrize("argv, says", [
    (["--layout", "bshd", "--form", "kernel"], "--layout bshd: a layout of the apply or complex form; drop it with --form kernel"),
    (["--inplace", "--family", "sinusoidal"], "--inplace: a layout of RoPE apply functions (--family rope); drop it with --family"),
    (["--inplace", "--form", "table"], "--inplace: an apply function or vLLM's forward writes in place"),
    (["--layout", "bhsd", "--form", "vllm"], "--layout bhsd: a layout of the apply or complex form; drop it with --form vllm"),
])
def test_layout_options_that_do_not_fit_are_one_line_exit_2(cli, argv, says):
    code, _, err = cli("check", "ropespec.implementations.numpy_layout:bshd", *argv)
    assert code == 2 and says in err and "Traceback" not in err, err


def test_the_python_api_takes_the_layout_and_the_table():
    """ropespec.check(fn, layout=..., inplace=..., form=..., table=...) as the command line's options."""
    import ropespec
    from ropespec.implementations import numpy_kernel, numpy_layout, numpy_table

    r = ropespec.check(numpy_layout.vllm_inplace, "llama2-7b", form="vllm", inplace=True, invariants=["rope.layout"],
                       profile="ci", seed=0)
    assert r.passed, r.reports[0].results[0].message
    r = ropespec.check(numpy_kernel.make, "llama2-7b", form="kernel", table=numpy_table.make,
                       invariants=["rope.conformance"], profile="ci", seed=0)
    assert r.passed and r.reports[0].impl.shape.flags() == ["--form", "kernel", "--table", "implementations/numpy_table.py:make"]
    from ropespec.inputs import UsageError

    with pytest.raises(UsageError, match="--layout bshd: a layout of the apply or complex form"):
        ropespec.check(numpy_kernel.make, form="kernel", layout="bshd")


@pytest.mark.parametrize("target, code", [("ropespec.implementations.numpy_layout:thd", 0),
                                          ("ropespec.implementations.zoo.rope.thd_cu_seqlens_ignored:make", 1)])
def test_precision_sweeps_a_layouts_function(cli, target, code):
    """Each row its own packed sequence of one token: the sampled sweep's positions are not consecutive, so a
    function that runs the positions on across sequences shows (an exhaustive sweep's consecutive ones would not)."""
    got, out, _ = cli("precision", target, "--layout", "thd", "--dtype", "float32", "--max-position", "65536")
    assert got == code, out


#: a user's packed RoPE with one position per token (FlashInfer's apply_rope_pos_ids, transformers' packed
#: position_ids): x (tokens, heads, 64), half pairs, theta 10000
PER_TOKEN = '''
import numpy as np


def apply(x, positions, cu_seqlens):
    d = x.shape[-1]
    inv = 1.0 / 10000 ** (np.arange(0, d, 2) / d)
    ang = np.asarray(positions, dtype=np.float64)[:, None, None] * inv
    c, s = np.cos(ang), np.sin(ang)
    a, b = x[..., : d // 2], x[..., d // 2 :]
    return np.concatenate([a * c - b * s, b * c + a * s], -1).astype(x.dtype)
'''


def test_a_per_token_packed_function_passes_with_positions_per_token_and_is_told_so_without(tmp_path):
    """A correct per-token function failed rope.layout [unknown] when thd took one offset per sequence only: with
    --positions per-token it passes; without, the failure names the contract it fits."""
    from ropespec import check

    (tmp_path / "packed.py").write_text(PER_TOKEN)
    target = f"{tmp_path / 'packed.py'}:apply"
    ok = check(target, expect={"head_dim": 64}, layout="thd", positions="per-token", seed=1,
               invariants=["rope.layout"])
    assert ok.passed, ok.report()
    [r] = check(target, expect={"head_dim": 64}, layout="thd", seed=1, invariants=["rope.layout"]).results
    assert r.status == "fail" and r.diagnosis == "layout", r.message
    assert "it reads one position per token" in r.message and "--positions per-token" in r.message, r.message


def test_positions_per_token_outside_a_packed_layout_is_a_usage_error(cli):
    code, _, err = cli("check", "ropespec.implementations.numpy_layout:bshd", "--layout", "bshd", "--positions", "per-token")
    assert code == 2 and err.strip().count("\n") == 0, err
    assert "--positions per-token: the positions of a packed call, with --layout thd" in err


def test_the_plugin_takes_per_token_positions(tmp_path):
    """--rope-layout thd --rope-positions per-token reach the plugin's implementation (a user's pytest run)."""
    import subprocess
    import sys

    (tmp_path / "packed.py").write_text(PER_TOKEN)
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "properties/test_layout.py",
                           "--rope-impl", f"{tmp_path / 'packed.py'}:apply", "--rope-layout", "thd",
                           "--rope-positions", "per-token", "--rope-expect", '{"head_dim": 64}'],
                          cwd=root, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "1 passed" in proc.stdout, proc.stdout[-1500:]


UNSLOTH_LIKE = '''
import numpy as np
from ropespec.implementations.numpy_layout import bshd as _make
from ropespec.spec.expectation import Expect

_rope = _make(Expect(head_dim=32, dtype="float32", angle_dtype="exact", inv_freq_dtype="exact"))


def apply(x, positions):
    """unsloth's manner: Q.transpose(1, 2) (b, h, s, d) made contiguous and written into; when that view already is
    contiguous (one head or one token) the write lands in x."""
    q = x.transpose(0, 2, 1, 3)
    work = q if q.flags.c_contiguous else np.ascontiguousarray(q)
    work[...] = _rope(x, positions).transpose(0, 2, 1, 3)
    return work.transpose(0, 2, 1, 3).copy()


def rows(x, positions):
    """f(x, positions) that writes into x in calls of at most two rows (a small-call fast path), and not otherwise."""
    from ropespec.implementations.numpy_rope import make
    y = make(Expect(head_dim=32, dtype="float32", angle_dtype="exact", inv_freq_dtype="exact"))(x, positions)
    if len(x) <= 2:
        x[...] = y
        return x
    return y
'''


def test_input_mutated_says_which_shapes_wrote_in_place(tmp_path):
    """unsloth's kernel writes Q in place only when Q.transpose(1, 2) is already contiguous: input-mutated is true, and
    the message says when (which call shapes wrote), in a batched layout and in plain rows."""
    p = tmp_path / "unsloth_like.py"
    p.write_text(UNSLOTH_LIKE)
    layout = check(f"{p}:apply", {"head_dim": 32}, layout="bshd", seed=0, invariants=["rope.layout"])
    [r] = [r for r in layout.results if r.invariant == "rope.layout"]
    assert r.status == "fail" and r.diagnosis == "input-mutated", r.message
    assert "(batch 1, seq 1, heads 2)" in r.message.split(" did, ")[0] and \
        "(batch 2, seq 3, heads 2) did not" in r.message, r.message
    nd = check(f"{p}:rows", {"head_dim": 32}, seed=0, invariants=["contract.input-unmodified"])
    [r] = nd.results
    assert r.status == "fail" and "in calls of 1 and 2 rows, not of 5 and 64" in r.message, r.message
