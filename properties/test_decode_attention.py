"""Spec section "decode" (attention): a KV-cache decoder against the full causal pass, step by step."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ropespec import reference
from ropespec.implementations.contract import Failure
from ropespec.properties.assertions import assert_close
from ropespec.properties.cases import expect_strategy
from ropespec.properties.framework import rope_property
from ropespec.properties.decoding import offset_words
from ropespec.properties.strategies import positions, vectors
from ropespec.reference.encodings import attention
from ropespec.spec import tolerance


def _cases(impl):
    @st.composite
    def build(draw):
        e = draw(expect_strategy(impl, partial=False), label="expect")
        if impl.expect is None:
            e = e.replace(head_dim=min(e.head_dim, 32), max_position=min(e.max_position, 8192))
        n0 = draw(st.integers(1, 5), label="prefill length")
        steps = draw(st.integers(1, 5), label="steps")
        start = draw(st.one_of(st.just(0), positions(max_value=e.max_position - n0 - steps)), label="first position")
        return {"expect": e, "prefill": n0, "steps": steps, "start": start,
                "q, k, v": draw(vectors(e.replace(dtype="float64"), 3 * (n0 + steps)), label="q, k, v")}

    return build()


@rope_property("decode.attention-consistency",
               rule=("attention_bound of the step and the full pass"),
               cases=_cases, max_examples=15)
def test_attention_decode(bind, case):
    e, n0, k_, start = case["expect"], case["prefill"], case["steps"], case["start"]
    n = n0 + k_
    qkv = case["q, k, v"]
    q, k, v = qkv[:n], qkv[n : 2 * n], qkv[2 * n :]
    pos = np.arange(start, start + n, dtype=np.int64)
    dec = bind.fresh(e)
    full = attention(e, q, k, v, pos, True)
    bound = tolerance.attention_bound(e, q, k, v, pos)
    worst = 0.0
    for t in range(n0 - 1, n):
        if t == n0 - 1:
            got, want, what = dec.attend_prefill(q[:n0], k[:n0], v[:n0], pos[:n0]), full[:n0], "prefill"
        else:
            got, want, what = dec.attend_step(q[t : t + 1], k[t : t + 1], v[t : t + 1], int(pos[t])), full[t : t + 1], f"step {t - n0 + 1}"
        try:
            worst = max(worst, assert_close("decoded output", got, want, bound, call=f"{what} at position {pos[t]}",
                                            dtype=e.dtype))
        except Failure as err:
            found = _explain(e, q, k, v, pos, t, n0, got, bound)
            word, evidence = found if found else (err.diagnosis, err.evidence)
            raise err.named(word, evidence, what=f"decoding diverges from the full causal pass first at {what} "
                                                 f"(position {pos[t]}, positions from {start}): {err.what}") from None
    return worst


def _row(e, q, k, v, qpos, kpos, rows):
    """Causal attention outputs for ``rows`` with the queries at qpos and the keys at kpos."""
    qr, kr = reference.apply(e, q, qpos), reference.apply(e, k, kpos)
    out = []
    for t in rows:
        s = qr[t] @ kr[: t + 1].T / np.sqrt(q.shape[1])
        w = np.exp(s - s.max())
        out.append((w / w.sum()) @ v[: t + 1])
    return np.array(out)


def _explain(e, q, k, v, pos, t, n0, got, bound):
    """Which mistaken decoder reproduces the diverging output: the evidence for its diagnosis. A step's query and key
    are read at the one position their output fits (:func:`_step_at`); the other mistakes are candidates, a word said
    only where one alone fits."""
    if t >= n0:
        at = _step_at(e, q, k, v, pos, t, got, bound)
        if at is not None:
            step = t - n0 + 1
            before = f"; steps 1 to {step - 1} used their own positions" if step > 2 else \
                "; step 1 used its own position" if step == 2 else ""
            how = offset_words(at, int(pos[t]))
            return "position-offset", (f"step {step} turns its query and key at position {at} where {pos[t]} is due "
                                       f"({how}){before}, and the prefill is right")
    rows = list(range(n0)) if t == n0 - 1 else [t]
    step_pos = pos.copy()
    step_pos[n0:] = 0
    candidates = [
        ("position-offset", "the new token is rotated at position 0: the frequencies are not sliced to its position",
         step_pos, step_pos),
        ("position-offset", f"the query is rotated without the offset {pos[0]}: keys and query disagree on positions",
         pos - pos[0] * (np.arange(len(pos)) >= n0), pos),
        ("double-rotation", "the cached keys are rotated twice: once when stored, again when read", pos, 2 * pos),
        ("position-offset", "positions are counted from 0, not from the first position given", pos - pos[0], pos - pos[0]),
    ]
    fits = [(word, what) for word, what, qpos, kpos in candidates
            if np.all(np.abs(got - _row(e, q, k, v, qpos, kpos, rows)) <= bound)]
    if len(fits) > 1:  # the case cannot tell these decoders apart: no word of theirs is earned
        return "unknown", "the output matches decoders where " + " and where ".join(what for _, what in fits)
    return (fits[0][0], f"the output matches a decoder where {fits[0][1]}") if fits else None


#: positions a step's query and key are read among: 0, the first position, and this many on either side of its own
_STEP_WINDOW = 64


def _step_at(e, q, k, v, pos, t, got, bound) -> int | None:
    """The one position at which step t's query and key (both: a decoder's offset is one number) give its output,
    with the rows before it at their own positions; None where none does or several do."""
    own = int(pos[t])
    near = range(max(0, own - _STEP_WINDOW), min(e.max_position, own + _STEP_WINDOW + 1))
    fits = []
    for p in dict.fromkeys([0, int(pos[0]), *near]):
        at = pos[: t + 1].copy()
        at[t] = p
        if np.all(np.abs(got - attention(e, q[: t + 1], k[: t + 1], v[: t + 1], at, True)[t : t + 1]) <= bound):
            fits.append(p)
            if len(fits) > 1:
                return None
    return fits[0] if fits and fits[0] != own else None
