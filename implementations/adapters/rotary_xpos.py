"""rotary-embedding-torch's xPos (``RotaryEmbedding(dim, use_xpos=True)``) as xpos(q, k, q_positions, k_positions)
factories, called as its users call it:

    ropespec check ropespec.implementations.adapters.rotary_xpos:queries_and_keys --family xpos --array torch
    ropespec check ropespec.implementations.adapters.rotary_xpos:cached_keys --family xpos --array torch

``queries_and_keys`` is ``rotate_queries_and_keys(q, k)`` over one sequence (the rows placed at their positions in a
sequence of zeros long enough for all of them, then read back: each position's rotation and scale depend on the
sequence's length alone); ``cached_keys`` is ``rotate_queries_with_cached_keys(q, k)`` as a decoder calls it, the
query the last row of a sequence of keys (one call per query row; keys after a query are not representable and are
declined). Its rotary dims are the expectation's ``rotary_dim`` (``RotaryEmbedding(dim=rotary_dim)``), its pairs
interleaved, base ``rope_theta``, ``xpos_scale_base`` the decay. Needs ``torch`` and ``rotary-embedding-torch``
(``pip install -e '.[hf]'``).
"""

from __future__ import annotations

import importlib

ARRAY = "torch"


def _module(expect):
    if expect.convention != "interleaved":
        raise NotImplementedError(f"rotary-embedding-torch pairs interleaved, not {expect.convention}")
    if expect.rope_scaling:
        raise NotImplementedError("rotary-embedding-torch's xPos has no length-extension method")
    try:
        return importlib.import_module("torch"), importlib.import_module("rotary_embedding_torch")
    except ImportError:
        raise NotImplementedError("rotary-embedding-torch is not installed (pip install -e '.[hf]')") from None


def _rotary(expect):
    torch, ret = _module(expect)
    rot = ret.RotaryEmbedding(dim=expect.rotary_dim, theta=expect.rope_theta, use_xpos=True,
                              xpos_scale_base=expect.params("xpos").xpos_scale_base, cache_if_possible=False)
    return torch, rot.to(getattr(torch, expect.dtype))


def queries_and_keys(expect):
    """rotate_queries_and_keys over one sequence holding every row at its position."""
    torch, rot = _rotary(expect)

    def apply(q, k, q_positions, k_positions):
        length = int(max(int(q_positions.max()), int(k_positions.max()))) + 1
        if len(set(q_positions.tolist())) < len(q_positions) or len(set(k_positions.tolist())) < len(k_positions):
            raise NotImplementedError("one sequence holds one row per position")
        Q = q.new_zeros((1, 1, length, q.shape[-1]))
        K = k.new_zeros((1, 1, length, k.shape[-1]))
        Q[0, 0, q_positions.long()] = q
        K[0, 0, k_positions.long()] = k
        with torch.no_grad():
            rq, rk = rot.rotate_queries_and_keys(Q, K)
        return rq[0, 0, q_positions.long()], rk[0, 0, k_positions.long()]

    return apply


def cached_keys(expect):
    """rotate_queries_with_cached_keys: each query the last row of the keys' sequence, as in decoding."""
    torch, rot = _rotary(expect)

    def apply(q, k, q_positions, k_positions):
        out_q, out_k = [], None
        for row, m in enumerate(q_positions.tolist()):
            if int(k_positions.max()) > m:
                raise NotImplementedError("a cached-key call has no keys after its query")
            K = k.new_zeros((1, 1, m + 1, k.shape[-1]))
            K[0, 0, k_positions.long()] = k
            with torch.no_grad():
                rq, rk = rot.rotate_queries_with_cached_keys(q[row][None, None, None], K)
            out_q.append(rq[0, 0, -1])
            out_k = rk[0, 0, k_positions.long()] if out_k is None else out_k
        return torch.stack(out_q), out_k

    return apply
