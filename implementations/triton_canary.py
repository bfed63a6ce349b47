"""A canary for Triton's interpreter: does it compute a dtype at all? Imported only in a process where the interpreter
is on (a CPU worker), by :func:`ropespec.implementations.triton_mode.interpreter_fault`.

triton 3.9.0's interpreter returns 3.7e19 for a bfloat16 tensor times 1.0: a kernel that computes in bfloat16 (as
unsloth's and Liger's do) comes back as noise or inf there, with no fault of its own. The canary computes in the dtype
itself, as such kernels do: ``x * 1.0`` (which must be x, exactly) and ``x * y + x`` (within the two roundings to the
dtype that computing it there allows).
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def _canary(x_ptr, y_ptr, same_ptr, fma_ptr, n, BLOCK: tl.constexpr):
    k = tl.arange(0, BLOCK)
    m = k < n
    x = tl.load(x_ptr + k, mask=m, other=0.0)
    y = tl.load(y_ptr + k, mask=m, other=0.0)
    tl.store(same_ptr + k, x * 1.0, mask=m)
    tl.store(fma_ptr + k, x * y + x, mask=m)


def fault(dtype: str) -> str | None:
    """What the interpreter gets wrong in ``dtype`` (one phrase), or None when it computes it."""
    import torch

    t = getattr(torch, dtype)
    n = 64
    x = torch.linspace(-3.0, 3.0, n, dtype=torch.float32).to(t)
    y = torch.linspace(0.5, -2.0, n, dtype=torch.float32).to(t)
    same, fma = torch.empty_like(x), torch.empty_like(x)
    _canary[(1,)](x, y, same, fma, n, BLOCK=n)
    if not torch.equal(same, x):
        i = int(torch.nonzero(same != x)[0])
        return f"a {dtype} tensor times 1.0 came back as {float(same[i]):.3g} for {float(x[i]):.3g}"
    xy = x.float() * y.float()
    want = xy + x.float()
    # two roundings to the dtype (the product's, the sum's), each at most half an eps of its value, or one if fused
    allowed = torch.finfo(t).eps * (xy.abs() + want.abs()) + torch.finfo(t).tiny
    off = (fma.float() - want).abs() > allowed
    if off.any():
        i = int(torch.nonzero(off)[0])
        return f"x * y + x in {dtype} came back as {float(fma[i]):.3g} where it is {float(want[i]):.3g}"
    return None
