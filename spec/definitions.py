"""The RoPE map and the sinusoidal encoding, defined once: the rotation of a pair with its sign
convention, how the pairs are laid out (:meth:`spec.expectation.Expect.pairs` and ``out_pairs``), the
attention factor, the pass-through dims, and softmax attention.

Every function is plain arithmetic plus the ``cos``/``sin``/``exp`` it is given, so one definition
serves sympy (:mod:`spec.proofs` proves the invariants on these functions) and mpmath or floats (the
tests check the references against them at many points, ``tests/test_reference.py``).
"""

from __future__ import annotations

from typing import Callable, Sequence


def rotate(xa, xb, c, s):
    """The rotation of one pair by the angle with cosine c and sine s, counter-clockwise:
    (x_a, x_b) -> (x_a c - x_b s, x_a s + x_b c), i.e. R(phi) = [[cos phi, -sin phi], [sin phi, cos phi]]."""
    return xa * c - xb * s, xa * s + xb * c


def token_positions(offsets, cu_seqlens):
    """A packed variable-length batch (the thd layout): the position of every token, ``offsets[i] + j -
    cu_seqlens[i]`` for token j of sequence i (cu_seqlens: the sequences' starts and the end, as flash-attention
    takes them; offsets: where each sequence's positions start, as decode uses). numpy arrays in and out."""
    import numpy as np

    cu = np.asarray(cu_seqlens, dtype=np.int64)
    seq = np.repeat(np.arange(len(cu) - 1), np.diff(cu))
    return np.asarray(offsets, dtype=np.int64)[seq] + np.arange(cu[-1]) - cu[seq]


def encode(expect, x: Sequence, angles: Sequence, cos: Callable, sin: Callable, gain=1) -> list:
    """f(x): pair i of x, at :meth:`Expect.pairs` ``[i]``, rotated by ``angles[i]`` (p theta'_i), scaled
    by ``gain`` (the attention factor) and written at ``out_pairs()[i]``; dims at and beyond the
    rotary dim are copied."""
    y = list(x)
    for (a, b), (oa, ob), phi in zip(expect.pairs(), expect.out_pairs(), angles):
        ya, yb = rotate(x[a], x[b], cos(phi), sin(phi))
        y[oa], y[ob] = gain * ya, gain * yb
    return y


def axis_angles(pair_axes: Sequence[int], position: Sequence, thetas: Sequence) -> list:
    """The angles of a multi-axis RoPE: pair j turns by phi_j = p[a(j)] theta_j, the position on its own axis
    a(j) (:meth:`spec.expectation.Expect.pair_axes`) times its frequency (:meth:`~spec.expectation.Expect.ladder`)."""
    return [position[a] * t for a, t in zip(pair_axes, thetas)]


def pe_pair(phi, cos: Callable, sin: Callable):
    """The sinusoidal encoding's pair at angle phi = p theta_i: (sin phi, cos phi) (Vaswani et al. 2017:
    sin at dim 2i, cos at 2i + 1)."""
    return sin(phi), cos(phi)


def attention_weights(scores: Sequence[Sequence], exp: Callable, causal: bool = False) -> list[list]:
    """softmax over each row of the scores (over j <= i when causal)."""
    out = []
    for i, row in enumerate(scores):
        e = [exp(v) if not causal or j <= i else 0 for j, v in enumerate(row)]
        total = sum(e)
        out.append([v / total for v in e])
    return out
