"""Spec section "t5-bias": T5's relative-position buckets, bucket(relative_position, bidirectional, num_buckets,
max_distance), checked exactly against ropespec.reference.biases.t5_buckets (where T5's float32 logarithm lands within its
error of a whole number, either neighbour is T5's own answer, ropespec.spec.tolerance.t5_log_slack)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ropespec.implementations.contract import Failure
from ropespec.implementations.families.t5_bias import LOOKUP
from ropespec.properties.cases import listed, nearest_shift
from ropespec.properties.framework import rope_property
from ropespec.reference.biases import t5_buckets
from ropespec.spec import definitions, tolerance
from ropespec.spec.dtypes import exact_integer_limit
from ropespec.spec.expectation import Expect

#: the parameters every property tries first: T5's and mT5's (32, 128), a decoder's unidirectional buckets, and
#: LongT5's wider (64, 256)
PINNED = ((True, 32, 128), (False, 32, 128), (True, 64, 256))


def _params():
    """(bidirectional, num_buckets, max_distance): even bucket counts 4 to 128, max_distance past max_exact."""
    return st.tuples(st.booleans(), st.integers(2, 64).map(lambda h: 2 * h)).flatmap(
        lambda bn: st.tuples(st.just(bn[0]), st.just(bn[1]),
                             st.integers((bn[1] // (2 if bn[0] else 1)) // 2 + 1, 1024)))


def _all_distances(max_distance: int, e: Expect) -> np.ndarray:
    """Every relative position from -(2 max_distance + 8) to +(2 max_distance + 8): both signs, past saturation; as
    far as a query in the middle of the domain reaches both ways (a lookup's buckets are read so)."""
    s = min(2 * max_distance + 8, (e.max_position - 1) // 2)
    return np.arange(-s, s + 1, dtype=np.int64)


def _expect(impl) -> Expect:
    """The expectation the function is bound under: its buckets take no field of it (the properties draw T5's
    parameters), only its dtype and positions."""
    return impl.expect or Expect(dtype=impl.dtype, max_position=impl.max_position)


def _cases(impl):
    return _params().map(lambda p: {"expect": _expect(impl), "params": p})


def _pinned(impl):
    return [{"expect": _expect(impl), "params": p} for p in PINNED]


def _call(p) -> str:
    return f"bidirectional={p[0]}, num_buckets={p[1]}, max_distance={p[2]}"


def _buckets(bind, case):
    bi, nb, md = case["params"]
    rel = _all_distances(md, case["expect"])
    f = bind(case["expect"])
    got = f.buckets(rel, bi, nb, md)
    if f.kind() == "lookup":
        _same_wherever_the_query_is(f, rel, got, bi, nb, md)
    return rel, got


def _same_wherever_the_query_is(f, rel, got, bi, nb, md) -> None:
    """A lookup's buckets are read with the query at P = -min(rel) (keys before it need room); with the query at 0
    its keys at the distances >= 0 must give the same buckets, or the lookup depends on where the query is and its
    buckets are not T5's function of the distance: named from that evidence, not as a bucket fault."""
    ahead = rel >= 0
    at0 = np.rint(f.lookup(np.arange(nb, dtype=np.float64)[:, None], np.array([0]), rel[ahead], bi, md)[0, 0])
    if np.array_equal(at0, got[ahead]):
        return
    at = int(-rel.min())
    d = int(rel[ahead][int(np.argmax(at0 != got[ahead]))])
    msg = (f"the lookup gives distance {d} bucket {int(at0[rel[ahead] == d][0])} with the query at 0 and "
           f"{int(got[rel == d][0])} with the query at {at} [lookup(table, ..., {_call((bi, nb, md))})]")
    exact, other = t5_buckets(rel + at, bi, nb, md, tolerance.t5_log_slack)
    if np.all((got == exact) | (got == other)):
        raise Failure(msg, "position-offset", evidence=f"the query at {at} is bucketed as if at 0 (queries counted "
                                                        f"from the first one, as a decoding step's offset dropped)")
    raise Failure(msg, "absolute-position", evidence="the buckets depend on where the query is, not only on key - query")


def _split(rel: np.ndarray, bi: bool, nb: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(offset, distance, buckets of one sign) of every relative position, as ropespec.spec.definitions.t5_sign_split
    says them."""
    parts = np.array([definitions.t5_sign_split(int(d), bi, nb) for d in rel], dtype=np.int64).reshape(-1, 3)
    return parts[:, 0], parts[:, 1], definitions.t5_sign_split(0, bi, nb)[2]


def _exact_end(table: np.ndarray, rel: np.ndarray) -> int:
    """The first distance, at or before the query, whose bucket is not the distance itself: where a table's exact
    buckets end."""
    before = table[rel <= 0][::-1]  # distance 0, 1, 2, ... before the query
    own = before == np.arange(len(before))
    return int(np.argmin(own)) if not own.all() else len(before)


def _explain(got: np.ndarray, rel: np.ndarray, bi: bool, nb: int, md: int) -> tuple[str, str] | None:
    """The fault a wrong bucket table fits, from evidence: the halves swapped, a bucket outside the range, the exact
    buckets ending at another distance than T5's."""
    exact, _ = t5_buckets(rel, bi, nb, md, tolerance.t5_log_slack)
    if bi:
        e2, o2 = t5_buckets(-rel, bi, nb, md, tolerance.t5_log_slack)
        if np.all((got == e2) | (got == o2)):
            return "halves-swapped", "every bucket is the one of the opposite sign: the distance is read as i - j"
    if np.any(got >= nb) or np.any(got < 0):
        bad = int(np.argmax((got >= nb) | (got < 0)))
        return "bucket-range", f"distance {int(rel[bad])} lands in bucket {int(got[bad])}, outside [0, {nb})"
    mine, t5 = _exact_end(got, rel), _exact_end(exact, rel)
    n = definitions.t5_sign_split(0, bi, nb)[2]
    if mine != t5:
        return "bucket-boundary", (f"its exact buckets end at distance {mine}, T5's at {t5} (max_exact = "
                                   f"{n // 2} of {n} buckets of one sign)")
    return None


def _fail(what: str, got, rel, mask, bi, nb, md, expected=None, default: str | None = None) -> Failure:
    bad = int(np.argmax(mask))
    want = "" if expected is None else f", expected {int(expected[bad])}"
    msg = (f"{what}: relative position {int(rel[bad])} -> bucket {int(got[bad])}{want}; {int(mask.sum())} of {len(rel)} "
           f"distances [bucket(relative_position, {_call((bi, nb, md))})]")
    found = _explain(got, rel, bi, nb, md)
    if found is not None:
        return Failure(msg, found[0], evidence=found[1])
    return Failure(msg, default or "unknown")


@rope_property("t5-bias.conformance",
               rule="exact; where the log-spaced value lies within t5_log_slack of a whole number, either neighbour",
               cases=_cases, pinned=_pinned)
def test_t5_conformance(bind, case):
    bi, nb, md = case["params"]
    rel, got = _buckets(bind, case)
    exact, other = t5_buckets(rel, bi, nb, md, tolerance.t5_log_slack)
    bad = (got != exact) & (got != other)
    if bad.any():
        raise _fail("bucket differs from T5's", got, rel, bad, bi, nb, md, exact)
    return 0.0


@rope_property("t5-bias.exact-below", rule="exact", cases=_cases, pinned=_pinned)
def test_t5_exact_below(bind, case):
    bi, nb, md = case["params"]
    rel, got = _buckets(bind, case)
    offset, dist, n = _split(rel, bi, nb)
    small = (dist < n // 2) & ((rel <= 0) | bi)
    # one past the exact range starts the log-spaced range: its bucket is max_exact itself
    edge = (dist == n // 2) & ((rel <= 0) | bi)
    bad = (small & (got != offset + dist)) | (edge & (got != offset + n // 2))
    if bad.any():
        raise _fail(f"a distance below max_exact = {n // 2} (or max_exact itself) is not its own bucket", got, rel, bad,
                    bi, nb, md, np.where(small | edge, offset + dist, got), "bucket-boundary")
    return 0.0


@rope_property("t5-bias.saturates", rule="exact", cases=_cases, pinned=_pinned)
def test_t5_saturates(bind, case):
    bi, nb, md = case["params"]
    rel, got = _buckets(bind, case)
    offset, dist, n = _split(rel, bi, nb)
    last = offset + n - 1
    far = (dist >= md) & ((rel <= 0) | bi)
    bad = (far & (got != last)) | (got < 0) | (got >= nb)
    if bad.any():
        raise _fail(f"a distance at or past max_distance = {md} is not in the last bucket", got, rel, bad, bi, nb, md,
                    np.where(far, last, got), "bucket-range")
    return 0.0


@rope_property("t5-bias.monotone", rule="exact", cases=_cases, pinned=_pinned)
def test_t5_monotone(bind, case):
    bi, nb, md = case["params"]
    rel, got = _buckets(bind, case)
    zero = int(np.argmax(rel == 0))
    after, before = got[zero:], got[: zero + 1][::-1]  # keys after the query, and before it, by growing distance
    for side, seq, sign in (("after", after, 1), ("before", before, -1)):
        drop = np.flatnonzero(np.diff(seq) < 0)
        if drop.size and (bi or side == "before"):
            at = zero + sign * (int(drop[0]) + 1)
            mask = np.zeros(len(rel), bool)
            mask[at] = True
            word = "position-offset" if seq[drop[0] + 1] < seq[drop[0]] - 1 else "unknown"
            err = _fail(f"the bucket falls as the key moves {side} the query: distance {abs(int(rel[at])) - 1} has "
                        f"bucket {int(seq[drop[0]])}, distance {abs(int(rel[at]))}", got, rel, mask, bi, nb, md)
            if err.diagnosis == "unknown" and word == "position-offset":
                err = err.named("position-offset", "the buckets wrap around instead of saturating")
            raise err
    return 0.0


@rope_property("t5-bias.sign-split", rule="exact", cases=_cases, pinned=_pinned)
def test_t5_sign_split(bind, case):
    bi, nb, md = case["params"]
    rel, got = _buckets(bind, case)
    if bi:
        bad = ((rel > 0) & (got < nb // 2)) | ((rel <= 0) & (got >= nb // 2))
        what = f"keys after the query use buckets {nb // 2}..{nb - 1} and keys before it 0..{nb // 2 - 1}"
    else:
        bad = (rel > 0) & (got != 0)
        what = "unidirectional: every key after the query is bucket 0"
    if bad.any():
        raise _fail(f"the sign split does not hold ({what})", got, rel, bad, bi, nb, md, None, "halves-swapped")
    return 0.0


# -- the bias lookup: each (query, key) reads its bucket's row of the table, each head its own column ---------------
def _not_lookup(impl) -> str | None:
    try:
        kind = impl.bind(_expect(impl)).kind()
    except Exception:  # the property reports what binding does
        return None
    return None if kind == "lookup" else (f"TARGET is the bucket function; {LOOKUP} is checked where the TARGET is "
                                          f"the bias lookup")


def _lookup_cases(impl):
    e = _expect(impl)
    exact = exact_integer_limit(e.dtype)

    @st.composite
    def build(draw):
        bi, nb, md = draw(_params(), label="params")
        top = min(e.max_position, 4 * md) - 1  # keys past max_distance on both sides
        q = sorted(draw(st.lists(st.integers(0, top), min_size=1, max_size=4, unique=True), label="q_positions"))
        k = sorted(draw(st.lists(st.integers(0, top), min_size=1, max_size=8, unique=True), label="k_positions"))
        heads = draw(st.integers(1, max(1, min(8, exact // nb))), label="n_heads")  # table entries exact in the dtype
        return {"expect": e, "params": (bi, nb, md), "n_heads": heads, "q": np.array(q, dtype=np.int64),
                "k": np.array(k, dtype=np.int64), "shift": draw(st.integers(1, 1000), label="shift")}  # moved in the domain

    return build()


def _lookup_pinned(impl):
    e = _expect(impl)
    q, k = np.array([0, 5, 200], dtype=np.int64), np.array([0, 1, 4, 5, 6, 13, 150, 200, 399], dtype=np.int64)
    q, k = q[q < e.max_position], k[k < e.max_position]
    long_q, long_k = np.array([p for p in (0, 128, 256) if p < e.max_position]), np.arange(min(257, e.max_position))
    return [{"expect": e, "params": PINNED[0], "n_heads": min(12, max(1, exact_integer_limit(e.dtype) // 32)),
             "q": long_q, "k": long_k, "shift": 7}] + [{"expect": e, "params": p, "n_heads": min(4, max(1, exact_integer_limit(e.dtype) // p[1])), "q": q, "k": k,
             "shift": 7} for p in PINNED]


def _table(nb: int, heads: int) -> np.ndarray:
    """Bucket b of head h holds b + nb h: every entry its own, so each value says its bucket and its column."""
    return np.arange(nb)[:, None] + nb * np.arange(heads)[None, :].astype(np.float64)


def _expected(q, k, bi, nb, md, table, offset: int = 0, sign: int = 1):
    """(the table's entry for T5's bucket of sign (key - query) - offset at each (head, query, key), the other that
    a float32 logarithm next to a whole number may give)."""
    rel = sign * (k[None, :] - q[:, None]) - offset
    exact, other = t5_buckets(rel, bi, nb, md, tolerance.t5_log_slack)
    return table[exact].transpose(2, 0, 1), table[other].transpose(2, 0, 1)


@rope_property("t5-bias.lookup", rule="exact: each entry the table's, at T5's bucket of key - query (either neighbour "
                                      "where t5_log_slack allows)",
               cases=_lookup_cases, pinned=_lookup_pinned, not_about=_not_lookup)
def test_t5_lookup(bind, case):
    bi, nb, md = case["params"]
    q, k, heads, c = case["q"], case["k"], case["n_heads"], case["shift"]
    table = _table(nb, heads)
    f = bind(case["expect"])
    got = f.lookup(table, q, k, bi, md)
    want, other = _expected(q, k, bi, nb, md, table)
    bad = (got != want) & (got != other)
    call = f"{LOOKUP.split('(')[0]}(table ({nb}, {heads}), q_positions={listed(q)}, k_positions={listed(k)}, {bi}, {md})"
    if not bad.any():
        return 0.0
    h, i, j = (int(v) for v in np.argwhere(bad)[0])
    msg = (f"bias[head {h}, query {int(q[i])}, key {int(k[j])}] = {got[h, i, j]:g}, the table's bucket "
           f"{int(want[h, i, j]) - nb * h} of head {h} is {want[h, i, j]:g}; {int(bad.sum())} of {bad.size} entries "
           f"[{call}] (the table's bucket b of head h holds b + {nb} h)")

    def fits(model) -> bool:
        return bool(np.all((got == model[0]) | (got == model[1])))

    found = None
    if bi and fits(_expected(q, k, bi, nb, md, table, sign=-1)):
        found = "halves-swapped", "each entry is the bucket of query - key: the relative position's sign is flipped"
    elif heads > 1 and fits(tuple(m[::-1] for m in _expected(q, k, bi, nb, md, table))):
        found = "layout", "head h reads the table's column of head H - 1 - h: the heads take the columns in reverse"
    elif fits(_expected(q, k, bi, nb, md, table, offset=-int(q.min()))):
        found = "position-offset", (f"each entry is the bucket of key - (query - {int(q.min())}): the queries are "
                                    f"taken from the first query's position, as a decoding step's offset dropped")
    elif (c := nearest_shift(case["expect"], np.concatenate([q, k]), c)) is not None:
        moved = f.lookup(table, q + c, k + c, bi, md)
        if np.any(moved != got):
            found = "absolute-position", (f"shifting every query and key by {c} changes the bias: it depends on where "
                                          f"they are, not only on key - query")
    if found is None:
        raise Failure(msg, "unknown")
    raise Failure(msg, found[0], evidence=found[1])
