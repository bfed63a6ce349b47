"""Triton kernels checked on a CPU (the `triton` extra): a launcher's torch.cuda.device of a CPU tensor is a no-op
in the worker, ropespec's own Triton RoPE passes in every form, forward and backward, and Liger's Llama 4 kernel is
caught writing into its input. README's commands check a user's kernel file without a flag (the interpreter and the
no-op said in the header), its backward's sign error, and Liger's kernels (tests/test_readme.py)."""

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
