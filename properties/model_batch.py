"""What the model family's properties share (spec section "model"): the expectation a model is checked under, the
tokens drawn, a left-padded batch, the canonical positions and the comparison of two forwards' logits. A module of its
own, not a test module: pytest imports each test module under its own name, so one test module importing another
would register its properties twice."""

from __future__ import annotations

import numpy as np

from ropespec.implementations.contract import Failure
from ropespec.properties.cases import listed
from ropespec.spec import tolerance
from ropespec.spec.expectation import Expect

#: the token ids drawn are below this: a model checked whole has at least this many in its vocabulary
MIN_VOCAB = 32


def expect_of(impl) -> Expect:
    """The expectation a model is checked under: the implementation's, else a small default RoPE in its dtype."""
    if impl.expect is not None:
        return impl.expect
    return Expect(head_dim=16, max_position=min(4096, impl.max_position), dtype=impl.dtype, **impl.promise)


# -- what a batch is ---------------------------------------------------------------------------------------------------
def left_padded(rows):
    """Rows left-padded to one length: (ids (B, N), mask (B, N), pads per row)."""
    n = max(len(r) for r in rows)
    pads = np.array([n - len(r) for r in rows])
    ids = np.array([[0] * p + list(r) for p, r in zip(pads, rows)], dtype=np.int64)
    mask = (np.arange(n)[None, :] >= pads[:, None]).astype(np.int64)
    return ids, mask, pads


def canonical(e, mask: np.ndarray) -> np.ndarray:
    """Each token at the number of real tokens before it (every axis alike for a multi-axis RoPE); a pad's entry is
    not read."""
    count = np.cumsum(mask, axis=1) - 1
    return count[..., None].repeat(e.n_axes, axis=-1) if e.multi_axis else count


def real_mask(mask: np.ndarray, shape) -> np.ndarray:
    """The mask broadcast over a positions array's trailing axes."""
    return np.broadcast_to(mask.reshape(mask.shape + (1,) * (len(shape) - 2)), shape) == 1


def same_logits(e, got, want, real, what: str, why: str, word: str) -> float:
    """The worst difference of two forwards' logits at the real tokens, as a fraction of model_logits_bound; a
    Failure with ``word`` where it is past the bound."""
    bound = tolerance.model_logits_bound(e.dtype, want[real])
    err = float(np.max(np.abs(got[real] - want[real])))
    if not err <= bound:
        raise Failure(f"{what} by {err:.3g} > bound {bound:.3g}: {why}", word, err / bound if bound else float("inf"))
    return err / bound if bound else 0.0


# -- the positions a forward handed its RoPE ---------------------------------------------------------------------------
def said(p) -> str:
    """Positions as a message lists them (a multi-axis RoPE's by their first axis)."""
    return listed(np.asarray(p)[..., 0] if np.ndim(p) == 3 else p)


def check_positions(e, seen, want, mask, where: str, pads=None, past: int = 0) -> None:
    """Every array the model handed its RoPE equals the canonical positions at the real tokens, or the failure says
    which positions were used: counted with the pads, from 0 (the cache's length not added), or by how much."""
    if not seen:
        raise Failure(f"{where}: the model handed its RoPE no positions (none recorded)", "shape")
    for got in seen:
        if got.shape != want.shape:
            raise Failure(f"{where}: the model handed its RoPE positions of shape {got.shape}, expected {want.shape}",
                          "shape")
        real = real_mask(mask, want.shape)
        if np.array_equal(got[real], want[real]):
            continue
        bad = np.argwhere(~np.all((got == want) | ~real, axis=tuple(range(2, got.ndim)) or None)
                          if got.ndim == 3 else (got != want) & real)
        r = int(bad[0][0])
        g, w = got[r][mask[r] == 1], want[r][mask[r] == 1]
        whose = f"row {r}'s real tokens" if len(got) > 1 else "its tokens"
        told = f"{where}: {whose} were turned at positions {said(g)} where {said(w)} are due"
        if pads is not None and pads[r] and np.array_equal(g, w + pads[r]):
            raise Failure(f"{told}: {pads[r]} more, its left padding counted", "padding-shift")
        if pads is not None and pads[r] and np.array_equal(g, w - pads[r]):
            raise Failure(f"{told}: {pads[r]} less, its left padding subtracted", "padding-shift")
        if past and np.array_equal(g, w - past):
            raise Failure(f"{told}: from 0, the {past} cached tokens' offset not added", "cache-offset")
        restarts = _restarts(g, w)
        if restarts:
            raise Failure(f"{told}: {restarts}", "cache-offset")
        if past and np.all(g == g.flat[0]) and g.size > 1 or past and g.size == 1 and int(g.flat[0]) in (0, past - 1):
            raise Failure(f"{told}: the cached tokens' offset not added", "cache-offset")
        shift = np.unique(g - w)
        if len(shift) == 1:
            raise Failure(f"{told}: every one {int(shift[0]):+d}", "position-offset")
        raise Failure(told, "unknown")


def _restarts(g: np.ndarray, w: np.ndarray) -> str | None:
    """Where one forward's positions ``g`` (a row's real tokens, ``w`` due, consecutive) run in chunks that each restart
    at the first position handed: the chunks of a prefill run as a loop inside one forward, each turned as if no token
    were cached before it. None where they do not."""
    g, w = np.asarray(g).reshape(len(g), -1)[:, 0], np.asarray(w).reshape(len(w), -1)[:, 0]
    if len(g) < 2 or not np.array_equal(np.diff(w), np.ones(len(w) - 1, dtype=w.dtype)):
        return None
    starts = [0] + [i for i in range(1, len(g)) if g[i] != g[i - 1] + 1]
    if len(starts) < 2 or g[0] != w[0] or any(g[i] != g[0] for i in starts):
        return None
    return (f"the tokens from {starts[1]} on restart at {int(g[0])}, in chunks starting at tokens "
            f"{', '.join(str(i) for i in starts)}: each chunk of the forward is turned from the first position, the "
            f"offset of the tokens before it not added")


def reference_forward(e, model, ids, where: str, *, cache=None, past: int = 0):
    """``model.forward(ids, cache=cache)`` of one unpadded sequence whose logits a property compares another forward
    with, its positions checked first (the tokens after ``past`` cached ones, each at its own index): a reference
    turned at wrong positions makes a right forward look wrong, so its own fault is said, never the compared one's.
    (logits, positions handed, cache)."""
    ids = np.asarray(ids)
    logits, seen, new = model.forward(ids, cache=cache)
    whole = np.ones((ids.shape[0], past + ids.shape[1]), dtype=np.int64)
    check_positions(e, seen, canonical(e, whole)[:, past:], whole[:, past:], where, past=past)
    return logits, seen, new
