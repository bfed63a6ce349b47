"""ropespec's own Triton RoPE kernel, written to be checked on a CPU through Triton's interpreter (and compiled on a
GPU): one program per row of x, rotating the row's pairs by its table row. Imported by ropespec.implementations.triton_rope
when a factory is called, so that Triton's interpreter, switched on for a CPU worker, applies to it.

``rope_rows(x, cos, sin, index, ...)``: x (R, d) rows, cos/sin (T, r/2) one value per pair, ``index`` (R,) the table
row of each x row (heads and batch rows share a position's row); ``sign`` -1 rotates back (the backward pass).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _rope_rows(x_ptr, out_ptr, cos_ptr, sin_ptr, index_ptr, d, half, rest, sign,
               INTERLEAVED: tl.constexpr, BLOCK: tl.constexpr, REST_BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    t = tl.load(index_ptr + row).to(tl.int64)
    k = tl.arange(0, BLOCK)
    mask = k < half
    c = tl.load(cos_ptr + t * half + k, mask=mask, other=1.0).to(tl.float32)
    s = tl.load(sin_ptr + t * half + k, mask=mask, other=0.0).to(tl.float32) * sign
    if INTERLEAVED:
        ia = 2 * k
        ib = 2 * k + 1
    else:
        ia = k
        ib = k + half
    base = x_ptr + row * d
    xa = tl.load(base + ia, mask=mask, other=0.0).to(tl.float32)
    xb = tl.load(base + ib, mask=mask, other=0.0).to(tl.float32)
    out = out_ptr + row * d
    tl.store(out + ia, (xa * c - xb * s).to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(out + ib, (xa * s + xb * c).to(out_ptr.dtype.element_ty), mask=mask)
    j = tl.arange(0, REST_BLOCK)  # the pass-through dims, copied
    tail = j < rest
    tl.store(out + 2 * half + j, tl.load(base + 2 * half + j, mask=tail, other=0.0), mask=tail)


def rope_rows(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, index: torch.Tensor, *, interleaved: bool,
              sign: float = 1.0, block: int | None = None) -> torch.Tensor:
    """The kernel's launcher: a new tensor of x's shape and dtype (x is read, never written)."""
    x = x.contiguous()
    rows, d = x.shape
    half = cos.shape[-1]
    rest = d - 2 * half
    out = torch.empty_like(x)
    cos, sin = cos.contiguous(), sin.contiguous()
    index = index.to(torch.int64).contiguous()
    if rows:
        _rope_rows[(rows,)](x, out, cos, sin, index, d, half, rest, sign, INTERLEAVED=interleaved,
                            BLOCK=block or triton.next_power_of_2(max(half, 1)),
                            REST_BLOCK=triton.next_power_of_2(max(rest, 1)))
    return out


class RopeRows(torch.autograd.Function):
    """rope_rows with its backward: the gradient of <g, R(p) x> in x is R(p)^T g = R(-p) g, the same kernel with
    the sine negated (pass-through dims get g unchanged)."""

    @staticmethod
    def forward(ctx, x, cos, sin, index, interleaved: bool):
        ctx.save_for_backward(cos, sin, index)
        ctx.interleaved = interleaved
        return rope_rows(x, cos, sin, index, interleaved=interleaved)

    @staticmethod
    def backward(ctx, g):
        cos, sin, index = ctx.saved_tensors
        return rope_rows(g, cos, sin, index, interleaved=ctx.interleaved, sign=-1.0), None, None, None, None
