"""Triton kernels checked on a CPU (the `triton` extra): a launcher's torch.cuda.device of a CPU tensor is a no-op
in the worker, ropespec's own Triton RoPE passes in every form, forward and backward, and Liger's Llama 4 kernel is
caught writing into its input. A library's kernels behind its own launcher (tests/fixtures/rope_lib, shaped like
unsloth's: heuristics- and autotune-wrapped, defined in another module, imported before the TARGET) are never
blamed for what the interpreter miscomputes. README's commands check a user's kernel file without a flag (the
interpreter and the no-op said in the header), its backward's sign error, and Liger's kernels (tests/test_readme.py)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")

from ropespec import check  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

def _env():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}  # the user sets nothing
    env.setdefault("COLUMNS", "200")
    return env


def test_torch_cuda_device_of_a_cpu_tensor_raises_and_the_worker_makes_it_a_noop():
    """torch.cuda.device(x.device.index) of a CPU tensor raises in torch 2.13 (flash-attention's launcher enters it);
    with the interpreter on, triton_mode makes it a no-op for a CPU device and leaves a CUDA index to torch."""
    code = ("import contextlib, os, torch\n"
            "try:\n    torch.cuda.device(None).__enter__()\nexcept TypeError as err:\n    print('raises', err)\n"
            "from implementations import triton_mode\n"
            "print('patched', triton_mode.cuda_device_noop())\n"
            "with torch.cuda.device(torch.zeros(1).device.index), torch.cuda.device(torch.device('cpu')):\n"
            "    print('entered')\n"
            "print('cuda index left to torch', not isinstance(torch.cuda.device(0), contextlib.nullcontext))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**_env(), "TRITON_INTERPRET": "1"},
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "raises '<' not supported" in out.stdout and "patched True" in out.stdout, out.stdout
    assert "entered" in out.stdout and "cuda index left to torch True" in out.stdout, out.stdout


FORMS = {  # TARGET, options, the form's own invariant
    "make": ({}, "rope.conformance"),
    "kernel": ({"form": "kernel"}, "kernel.rotation"),
    "qk": ({"form": "qk"}, "kernel.qk"),
    "bshd": ({"layout": "bshd"}, "rope.layout"),
    "thd": ({"layout": "thd"}, "rope.layout"),
    "thd_per_token": ({"layout": "thd", "positions": "per-token"}, "rope.layout"),
}


@pytest.mark.parametrize("name", list(FORMS))
def test_ropespecs_triton_rope_passes_in_every_form_forward_and_backward(name):
    """ropespec.implementations.triton_rope, through the interpreter: the form's own invariant and the backward hold (the
    full checks of each are README's commands)."""
    options, own = FORMS[name]
    result = check(f"ropespec.implementations.triton_rope:{name}", array="torch", seed=3,
                   invariants=[own, "autograd.inverse-rotation"], **options)
    rows = {r.invariant: r for r in result.results}
    assert {i: r.status for i, r in rows.items()} == {own: "pass", "autograd.inverse-rotation": "pass"}, \
        result.report()
    notes = result.reports[0].impl.notes
    assert any("Triton's interpreter" in n for n in notes), notes


def test_ligers_llama4_kernel_writes_its_input():
    """LigerLlama4RopeFunction writes its result into q: without --inplace that is input-mutated (README's command
    checks it with --inplace, where every batch row turns by batch row 0's positions)."""
    pytest.importorskip("liger_kernel")
    result = check("ropespec.implementations.adapters.liger:llama4", expect={"head_dim": 64, "convention": "interleaved"},
                   layout="bshd", array="torch", seed=1, invariants=["contract.input-unmodified"])
    [r] = result.results
    assert r.status == "fail" and r.diagnosis == "input-mutated", r.message


def test_the_interpreter_is_for_cpu_workers_only_and_a_users_setting_stands():
    """A CPU worker gets TRITON_INTERPRET=1; a CUDA worker runs the compiled kernel; TRITON_INTERPRET set by the
    user is kept either way."""
    from ropespec.implementations import triton_mode

    assert triton_mode.environment({}, "cpu") == {"TRITON_INTERPRET": "1"}
    assert triton_mode.environment({}, "cuda") == {}
    assert triton_mode.environment({"TRITON_INTERPRET": "0"}, "cpu") == {"TRITON_INTERPRET": "0"}


NATIVE = '''
import torch
import triton
import triton.language as tl


@triton.jit
def _rope(OUT, X, COS, SIN, half, BLOCK: tl.constexpr):
    """unsloth's manner: the arithmetic in the tensors' own dtype, no cast to float32."""
    row = tl.program_id(0)
    i = tl.arange(0, BLOCK)
    m = i < half
    c = tl.load(COS + row * half + i, mask=m, other=1.0)
    s = tl.load(SIN + row * half + i, mask=m, other=0.0)
    x1 = tl.load(X + row * 2 * half + i, mask=m, other=0.0)
    x2 = tl.load(X + row * 2 * half + half + i, mask=m, other=0.0)
    tl.store(OUT + row * 2 * half + i, x1 * c - x2 * s, mask=m)
    tl.store(OUT + row * 2 * half + half + i, x2 * c + x1 * s, mask=m)


def kernel(x, cos, sin):
    x = x.contiguous()
    out = torch.empty_like(x)
    half = cos.shape[-1]
    _rope[(x.shape[0],)](out, x, cos.to(x.dtype).contiguous(), sin.to(x.dtype).contiguous(), half,
                         BLOCK=triton.next_power_of_2(half))
    return out

kernel.table = "pair"
'''


def test_a_dtype_the_interpreter_miscomputes_is_not_judged_and_says_why(tmp_path, monkeypatch):
    """Triton 3.9's interpreter computes bfloat16 wrongly (a bfloat16 tensor times 1.0 is 3.7e19): a correct kernel
    that computes in its tensors' dtype failed not-a-rotation and non-finite there. ropespec runs a canary kernel
    first (cached per triton version) and, where the interpreter miscomputes the dtype, does not judge the kernel in
    it and says why; in float32 the same kernel holds."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "native.py").write_text(NATIVE)
    target = f"{tmp_path / 'native.py'}:kernel"
    expect = {"head_dim": 32}
    f32 = check(target, expect, form="kernel", array="torch", dtype="float32", seed=0, invariants=["kernel.rotation"])
    assert f32.passed, f32.report()
    import subprocess as sp
    probe = sp.run([sys.executable, "-c", "import torch; from ropespec.implementations.triton_canary import fault; "
                    "print(fault('bfloat16'))"], cwd=ROOT, env={**_env(), "TRITON_INTERPRET": "1"},
                   capture_output=True, text=True, timeout=120)
    broken = probe.stdout.strip() != "None"
    bf16 = check(target, expect, form="kernel", array="torch", dtype="bfloat16", seed=0, invariants=["kernel.rotation"],
                 allow_skip=True)
    if not broken:  # a Triton whose interpreter computes bfloat16: the kernel is judged, and holds
        assert bf16.passed, bf16.report()
        return
    [r] = [r for r in bf16.results if r.invariant == "kernel.rotation"]
    assert r.status == "skip" and "interpreter miscomputes bfloat16" in r.message and "--device cuda" in r.message, \
        r.message
    import triton
    assert f"Triton {triton.__version__}" in r.message
    cached = (tmp_path / "cache" / "ropespec" / "triton-interpreter.json").read_text()
    assert triton.__version__ in cached and "bfloat16" in cached


# -- a library's kernels behind its own launcher (tests/fixtures/rope_lib, shaped like unsloth's rope_embedding.py) --
FIXTURES = ROOT / "tests" / "fixtures"
LIBRARY = {  # TARGET: the module that defines the kernels the header names
    # the heuristics-wrapped kernel and its launcher in one module, unsloth's layout
    "rope_lib.rope_embedding:fast_rope_embedding": "1 kernel of rope_lib.rope_embedding",
    # kernels of another module, imported when the launcher is first called (nothing to read at load)
    "rope_lib.launch:fast_rope": "of rope_lib.kernels",
    # the same kernel under triton.autotune(triton.heuristics(triton.jit(fn)))
    "rope_lib.launch:tuned_rope": "of rope_lib.kernels",
    # a kernel the launcher reaches only past the warm-up's two rows: launched in a property's call
    "rope_lib.launch:sized_rope": None,
}


@pytest.fixture(scope="module")
def interpreter_cache(tmp_path_factory):
    """One canary cache for this module's runs (the workers inherit XDG_CACHE_HOME), apart from the user's."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture(scope="module")
def miscomputed(interpreter_cache):
    """What this Triton's interpreter gets wrong in bfloat16 (the canary's phrase), or None where it computes it."""
    probe = subprocess.run([sys.executable, "-c", "import torch; from ropespec.implementations.triton_canary import "
                            "fault; print(fault('bfloat16'))"], cwd=ROOT, env={**_env(), "TRITON_INTERPRET": "1"},
                           capture_output=True, text=True, timeout=120)
    assert probe.returncode == 0, probe.stderr
    said = probe.stdout.strip()
    return None if said == "None" else said


@pytest.mark.parametrize("target", list(LIBRARY))
def test_a_kernel_behind_its_librarys_launcher_is_never_blamed_for_the_interpreters_bfloat16(
        target, checked, miscomputed, monkeypatch):
    """unsloth's fast_rope_embedding (a triton.heuristics-wrapped kernel launched from the library's own function)
    failed not-a-rotation and non-finite in bfloat16 with no word of the interpreter: its kernels were not read as
    kernels. Wherever the worker's interpreter runs a kernel, however wrapped and wherever defined (its launches are
    recorded), the header says so and a dtype the interpreter miscomputes is not judged; float32 holds."""
    monkeypatch.syspath_prepend(str(FIXTURES))
    expect = {"head_dim": 16}
    f32 = checked(target, expect, form="kernel", array="torch", dtype="float32", seed=0,
                  invariants=["kernel.rotation"])
    assert f32.passed, f32.report()
    if LIBRARY[target] is not None:  # read or launched before any property
        [note] = [n for n in f32.reports[0].impl.notes if "Triton's interpreter" in n]
        assert LIBRARY[target] in note, note
    bf16 = checked(target, expect, form="kernel", array="torch", dtype="bfloat16", seed=0,
                   invariants=["kernel.rotation", "autograd.inverse-rotation"], allow_skip=True)
    if miscomputed is None:  # a Triton whose interpreter computes bfloat16: the kernel is judged, and holds
        assert bf16.passed, bf16.report()
        return
    # nothing blamed: a property is skipped for the reason, or (a launcher whose small calls never reach the kernel)
    # holds on the cases that did not run the interpreter, and says the others were not judged, and why
    assert {r.status for r in bf16.results} == ({"skip"} if LIBRARY[target] else {"pass"}), bf16.report()
    for r in bf16.results:
        assert "interpreter miscomputes bfloat16" in r.message and miscomputed in r.message, r.message
    if LIBRARY[target] is not None:
        assert any("Triton's interpreter" in n for n in bf16.reports[0].impl.notes), bf16.reports[0].impl.notes


def test_a_kernel_run_by_the_interpreter_under_a_launcher_skips_bfloat16_with_exit_2(cli, miscomputed, monkeypatch):
    """The command line as the user runs it: an interpreter that miscomputes bfloat16 leaves nothing to check, one line
    and exit 2 as for any skipped TARGET; --allow-skip runs it, every property skipped with the reason."""
    if miscomputed is None:
        pytest.skip("this Triton's interpreter computes bfloat16")
    monkeypatch.syspath_prepend(str(FIXTURES))
    args = ("check", "rope_lib.rope_embedding:fast_rope_embedding", "--form", "kernel", "--array", "torch",
            "--dtype", "bfloat16", "--expect", '{"head_dim": 16}', "--seed", "0")
    code, out, err = cli(*args)
    assert code == 2 and "interpreter miscomputes bfloat16" in err and "--allow-skip" in err, (code, out, err)
    code, out, err = cli(*args, "--allow-skip")
    assert code == 0 and "0 failed" in out and "Triton kernels run in Triton's interpreter" in out, (out, err)


PREIMPORTED = '''
import json, sys
sys.path.insert(0, sys.argv[1])
import rope_lib.kernels  # a library the worker holds before the TARGET is loaded (a fork server's preload)
from ropespec.implementations.boundary.host import load_target
from ropespec.implementations.shape import CallShape
from ropespec.spec.expectation import Expect

said = {}
for dtype in ("float32", "bfloat16"):
    host, info = load_target({"target": "rope_lib.launch:fast_rope"}, CallShape(form="kernel"), "fast_rope", "torch",
                             dtype, "cpu")
    host.bind(1, Expect(head_dim=16, dtype=dtype))
    said[dtype] = {"load": info.get("notes"), "warmup": host.warmup(1)}
print(json.dumps(said))
'''


def test_a_kernel_of_a_module_imported_before_the_target_is_known_by_its_launch(miscomputed):
    """The worker's side, with the library's kernel module imported before the TARGET: no module that loading or the
    warm-up call imports holds a kernel, yet the warm-up's launch is recorded, names the kernel by the module that
    defines it, and gives bfloat16 the interpreter's skip reason (float32 none)."""
    out = subprocess.run([sys.executable, "-c", PREIMPORTED, str(FIXTURES)], cwd=ROOT,
                         env={**_env(), "TRITON_INTERPRET": "1"}, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    import json

    said = json.loads(out.stdout.strip().splitlines()[-1])
    for dtype, seen in said.items():
        assert seen["load"] is None, seen  # nothing new to read, nothing run yet
        warmup = seen["warmup"]
        assert warmup["said"] is None and "Triton kernels run in Triton's interpreter (1 kernel of rope_lib.kernels;" \
            in warmup["notes"][0], warmup
    assert said["float32"]["warmup"]["skip_reason"] is None
    if miscomputed is not None:
        assert "interpreter miscomputes bfloat16" in said["bfloat16"]["warmup"]["skip_reason"], said


def test_wrapped_kernels_are_named_by_the_module_that_defines_them(monkeypatch):
    """The module scan reads through every wrapper (Heuristics, Autotuner, nested) to the kernel that runs and names it
    once, by the module that defines it and that module's name for it, wherever it is found; a launch that no module
    names still tells the header the interpreter ran."""
    import importlib
    import types

    from ropespec.implementations import triton_mode

    monkeypatch.syspath_prepend(str(FIXTURES))
    try:  # read, never launched
        kernels = importlib.import_module("rope_lib.kernels")
        elsewhere = types.ModuleType("a_launcher")  # a launcher's module that imported the kernel by its own name
        elsewhere.rope = kernels._rope_embedding
        assert triton_mode.kernels([elsewhere]) == ["rope_lib.kernels._rope_embedding"]
        assert sorted(triton_mode.kernels([elsewhere, kernels])) == ["rope_lib.kernels._rope_embedding",
                                                                     "rope_lib.kernels._rope_embedding_tuned"]
    finally:
        for name in [m for m in sys.modules if m.split(".")[0] == "rope_lib"]:
            del sys.modules[name]
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert triton_mode.describe([], False, launched_from="lib.py:launch") == [
        "Triton kernels run in Triton's interpreter (launched from lib.py:launch; one program instance at a time)"]
