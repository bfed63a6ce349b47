"""The complex form in numpy, as Meta's Llama reference code computes it: ``make(expect)`` returns
``apply_rotary_emb(xq, xk, freqs_cis) -> (xq_out, xk_out)`` with xq (batch, seq, h_q, head_dim), xk (batch, seq, h_kv,
head_dim) and freqs_cis (seq, rotary_dim/2) complex, one value per pair shared by every batch row: each pair read as
one complex number (the expectation's convention says which dims) and multiplied by its freqs_cis; pass-through dims
copied. Complex128 arithmetic, one rounding to the output dtype. ``heads_first(expect)`` is the form as transformers'
deepseek_v2 takes it: xq (batch, h_q, seq, head_dim) and freqs_cis (batch, seq, rotary_dim/2), a table per batch row
(``apply_rotary_emb.table = "batch"``; checked with ``--layout bhsd``).
"""

from __future__ import annotations

import numpy as np

from ropespec.spec.expectation import Expect

DTYPES = ("float64", "float32", "float16")


def make(expect: Expect):
    if expect.dtype not in DTYPES:
        raise NotImplementedError(f"numpy complex computes {', '.join(DTYPES)}, not {expect.dtype}")
    a, b, oa, ob = expect.pair_index()

    def rotate(x, freqs):
        xf = np.asarray(x, dtype=np.float64)
        z = (xf[..., a] + 1j * xf[..., b]) * freqs
        out = xf.copy()
        out[..., oa], out[..., ob] = z.real, z.imag
        return out.astype(x.dtype)

    def apply_rotary_emb(xq, xk, freqs_cis):
        freqs = np.asarray(freqs_cis, dtype=np.complex128)[None, :, None, :]  # over the batch rows and the heads
        return rotate(xq, freqs), rotate(xk, freqs)

    return apply_rotary_emb


def heads_first(expect: Expect):
    rotate = make(expect)

    def apply_rotary_emb(xq, xk, freqs_cis):
        per_row = [rotate(q.transpose(1, 0, 2)[None], k.transpose(1, 0, 2)[None], f)
                   for q, k, f in zip(xq, xk, np.asarray(freqs_cis))]  # each batch row at its own table
        return tuple(np.concatenate([out[i][0].transpose(1, 0, 2)[None] for out in per_row]) for i in (0, 1))

    apply_rotary_emb.table = "batch"
    return apply_rotary_emb
