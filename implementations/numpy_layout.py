"""numpy RoPE in the batched layouts (``ropespec check --layout``, ``--form vllm``): one factory per layout, each
returning the function of that layout's signature (ropespec.spec.layouts), built on the numpy apply
function (:mod:`ropespec.implementations.numpy_rope`): every row of every head is rotated by its own position, read
through whatever strides x has; ``*_inplace`` write the result into x (and return it).
"""

from __future__ import annotations

import numpy as np

from ropespec.implementations import numpy_rope
from ropespec.spec.definitions import token_positions
from ropespec.spec.expectation import Expect


def _rows(expect: Expect):
    rope = numpy_rope.make(expect)

    tail = (expect.n_axes,) if expect.multi_axis else ()  # a multi-axis RoPE's positions are vectors

    def rotate(x, positions):
        """x (..., d) and per-row positions broadcast to x.shape[:-1] (and a last axis of A for a multi-axis RoPE):
        the rotated rows, x's shape."""
        x = np.asarray(x)
        pos = np.broadcast_to(np.asarray(positions, dtype=np.int64), x.shape[:-1] + tail).reshape((-1,) + tail)
        return rope(x.reshape(-1, x.shape[-1]), pos).reshape(x.shape)

    return rotate


def _batched(where):
    """A factory for a (batch, seq) position layout; ``where(P)`` puts P (batch, seq) on x's leading axes."""
    def make(expect: Expect):
        rotate = _rows(expect)
        return lambda x, positions: rotate(x, where(np.asarray(positions)))

    make.promise = numpy_rope.make.promise
    make.axes = numpy_rope.make.axes
    return make


bshd = _batched(lambda p: p[:, :, None])
bhsd = _batched(lambda p: p[:, None, :])
sbhd = _batched(lambda p: np.swapaxes(p, 0, 1)[:, :, None])


def thd(expect: Expect):
    rotate = _rows(expect)

    def apply(x, positions, cu_seqlens):
        return rotate(x, token_positions(positions, cu_seqlens)[:, None])

    return apply


def thd_per_token(expect: Expect):
    """Packed rows with one position per token (``--layout thd --positions per-token``): FlashInfer's
    apply_rope_pos_ids, transformers' packed position_ids."""
    rotate = _rows(expect)

    def apply(x, positions, cu_seqlens):
        return rotate(x, np.asarray(positions)[:, None])

    return apply


def vllm(expect: Expect):
    rotate = _rows(expect)
    d = expect.head_dim

    def forward(positions, query, key):
        pos = np.asarray(positions)[:, None]
        heads = lambda t: np.asarray(t).reshape(len(t), -1, d)  # noqa: E731 (a copy when t is a strided view)
        return (rotate(heads(query), pos).reshape(query.shape), rotate(heads(key), pos).reshape(key.shape))

    return forward


def bshd_inplace(expect: Expect):
    f = bshd(expect)

    def apply(x, positions):
        x[...] = f(x, positions)
        return x

    return apply


def vllm_inplace(expect: Expect):
    f = vllm(expect)

    def forward(positions, query, key):
        q, k = f(positions, query, key)
        query[...], key[...] = q, k
        return query, key

    return forward


for _f in (thd, thd_per_token, vllm, bshd_inplace, vllm_inplace):
    _f.promise = numpy_rope.make.promise
for _f in (vllm, bshd_inplace, vllm_inplace):
    _f.axes = numpy_rope.make.axes
