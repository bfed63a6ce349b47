"""A diagnosis's parts: a word with one sentence of evidence (:class:`Finding`, with what else was found), the
frequencies measured on an implementation, and frequencies compared modulo 2 pi."""

from __future__ import annotations

import numpy as np

from ropespec import reference
from ropespec.properties import probe
from ropespec.spec.expectation import Expect
from ropespec.spec.scaling import original_length
from ropespec.spec.tables import table_variant


def _close(a, b, tol) -> bool:
    """Frequencies equal to a relative tolerance, modulo 2 pi (integer positions cannot tell theta
    from theta + 2 pi)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    with np.errstate(invalid="ignore"):  # nan (a pair of frequency 0's ratio) compares as not close
        diff = np.angle(np.exp(1j * (a - b)))
    return bool(np.all(np.abs(diff) <= tol * np.abs(b) + 1e-300))


def _measured(f, e: Expect, seq: int | None = None):
    """The frequencies read off f along e's pairs, the expected ones, the relative precision each is known to,
    and the call length the table is read at (for the types whose table depends on it, or may switch at the
    original length under another policy, as LongRoPE's served by vLLM's: the original length unless ``seq`` is
    given, where a port of the other policy differs)."""
    if seq is None and (e.method.switches_at_length or table_variant(e, e.max_position) != table_variant(e, None)):
        seq = original_length(e)
    pairs = list(zip(e.pairs(), e.out_pairs()))
    fr = probe.frequencies(f, e.head_dim, pairs, max_position=e.max_position, seq_len=seq)
    th = reference.rates(e, seq)  # per unit of position, as the probe reads them
    tol = np.maximum(1e-6, 100 * np.nan_to_num(fr.precision, nan=1.0))  # per pair
    return fr, th, tol, seq


class Finding(tuple):
    """A diagnosis, (word, evidence), that knows the words of the other fields measured wrong (``also``), whose
    evidence its own is followed by."""

    also: tuple[str, ...] = ()

    def __new__(cls, word: str, evidence: str, also=()):
        found = super().__new__(cls, (word, evidence))
        found.also = tuple(also)
        return found

    def __getnewargs__(self):
        """What pickling rebuilds it from (a worker process hands its measured model back): a tuple subclass is
        otherwise rebuilt from its items alone, which this __new__ does not take."""
        return (self[0], self[1], self.also)


def also_of(found) -> tuple[str, ...]:
    """The other fields' words of a diagnosis (none for a plain (word, evidence))."""
    return getattr(found, "also", ())


def _with(first: tuple[str, str], then: tuple[str, str] | None) -> tuple[str, str]:
    """One word for a fault of several fields: the first found (the root), its evidence followed by each other
    field's word and evidence ("; and <word>: ..."), so that every field measured wrong is named."""
    if then is None or then[0] == first[0]:
        return first
    return Finding(first[0], f"{first[1]}; and {then[0]}: {then[1]}", (*also_of(first), then[0], *also_of(then)))
