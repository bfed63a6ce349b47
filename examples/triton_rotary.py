# triton_rotary.py — a user's Triton RoPE kernel in flash-attention's manner: one cos and one sin per pair, a
# launcher that enters torch.cuda.device(x.device.index), a mask for a rotary_dim whose half is not a power of two,
# and a backward that is the forward with the sine negated (conjugate=True). ropespec checks it on a CPU through
# Triton's interpreter (pip install -e '.[triton]'), forward and backward:
#
#   ropespec check examples/triton_rotary.py:kernel --form kernel --array torch --expect '{"head_dim": 64, "rotary_dim": 48}'
#
# kernel_backward_unsigned is its twin with the backward's sign error: every forward check passes, and
# autograd.inverse-rotation fails with the word direction.
import torch
import triton
import triton.language as tl


@triton.jit
def _rotary(OUT, X, COS, SIN, half, stride_x, stride_c, CONJUGATE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    i = tl.arange(0, BLOCK)
    m = i < half
    c = tl.load(COS + row * stride_c + i, mask=m, other=1.0).to(tl.float32)
    s = tl.load(SIN + row * stride_c + i, mask=m, other=0.0).to(tl.float32)
    if CONJUGATE:
        s = -s
    x1 = tl.load(X + row * stride_x + i, mask=m, other=0.0).to(tl.float32)
    x2 = tl.load(X + row * stride_x + half + i, mask=m, other=0.0).to(tl.float32)
    tl.store(OUT + row * stride_x + i, (x1 * c - x2 * s).to(OUT.dtype.element_ty), mask=m)
    tl.store(OUT + row * stride_x + half + i, (x2 * c + x1 * s).to(OUT.dtype.element_ty), mask=m)


def apply_rotary(x, cos, sin, conjugate=False):
    """x (n, head_dim), cos and sin (n, rotary_dim / 2); the dims past rotary_dim pass through."""
    x = x.contiguous()
    out = x.clone()
    half = cos.shape[-1]
    with torch.cuda.device(x.device.index):
        _rotary[(x.shape[0],)](out, x, cos.contiguous(), sin.contiguous(), half, x.stride(0), cos.stride(0),
                               CONJUGATE=conjugate, BLOCK=triton.next_power_of_2(half))
    return out


def _function(backward_conjugate):
    class ApplyRotary(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, cos, sin):
            ctx.save_for_backward(cos, sin)
            return apply_rotary(x, cos, sin)

        @staticmethod
        def backward(ctx, g):
            cos, sin = ctx.saved_tensors
            return apply_rotary(g, cos, sin, conjugate=backward_conjugate), None, None

    return ApplyRotary


_RIGHT, _UNSIGNED = _function(True), _function(False)


def kernel(x, cos, sin):
    return _RIGHT.apply(x, cos, sin)


def kernel_backward_unsigned(x, cos, sin):
    return _UNSIGNED.apply(x, cos, sin)


kernel.table = kernel_backward_unsigned.table = "pair"
