"""Proofs of the invariants, in sympy, on the project's own definitions.

Every proof builds its objects from :mod:`ropespec.spec.definitions` (the rotation, its sign, the conventions,
the pass-through dims, the attention factor, the sinusoidal pair, softmax) and :mod:`ropespec.spec.scaling` (the
frequency ladder and every scaling method), evaluated on sympy symbols, so a change to a definition
that breaks an invariant fails its proof. :data:`MUTATIONS` are such changes; each symbolic proof
names, in ``about``, the mutations of what it is about, and ``tests/test_proofs.py`` checks that it
fails under every one of them.

Each invariant has one proof with an honest kind:

* ``symbolic``: for all values of its symbols;
* ``symbolic, d <= 16`` (or ``n = 3``): for all values of its symbols, for every even head dim (or
  sequence length) up to the bound said;
* ``symbolic, listed sections``: for all values of its symbols, on the small multi-axis expectations of each kind
  that :func:`axes_expects` lists (unequal sections, every convention the models use);
* ``definition``: the invariant is what the definition says; no proof is needed and none is claimed;
* ``tested only``: a property of code (its memory, its state, its errors) that the mathematics does not
  speak to: the property tests it, nothing proves it.

The proofs live in one module per subject (:mod:`.rope`, :mod:`.axes`, :mod:`.scaling_methods`, :mod:`.encodings`,
:mod:`.biases`, :mod:`.lemmas`; :mod:`.unproven` says why the others have none), built from :mod:`.core`; the
mutations are in :mod:`.mutations`. A proof is a function of no arguments that returns a one-line account and raises :class:`ProofError`
when sympy does not establish the statement; :func:`verify` runs one and caches the outcome.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache

from ropespec.spec.invariants import REGISTRY
# every subject's module registers its proofs (proves, declare) when imported
from ropespec.spec.proofs import axes, biases, encodings, rope, scaling_methods, unproven  # noqa: F401
from ropespec.spec.proofs.core import (BOUNDED, BOUNDED_N, DEFINITION, KINDS, MAX_D, PROOFS, PROVEN_KINDS, SECTIONS,
                                       SYM, SYMBOLIC, TESTED, Proof, ProofError, R, _sign, _zero, a, b_, s)
from ropespec.spec.proofs.lemmas import LEMMAS
from ropespec.spec.proofs.mutations import MUTATIONS, mutated

__all__ = ["ALL", "BOUNDED", "BOUNDED_N", "DEFINITION", "KINDS", "LEMMAS", "MAX_D", "MUTATIONS", "Outcome", "PROOFS",
           "PROVEN_KINDS", "Proof", "ProofError", "R", "SECTIONS", "SYM", "SYMBOLIC", "TESTED", "_sign", "_zero", "a",
           "audit", "b_", "holds_under", "mutated", "run_all", "s", "verify"]

ALL: dict[str, Proof] = {**{i: PROOFS[i] for i in REGISTRY}, **LEMMAS}  # in the registry's order


def holds_under(proof_id: str, mutation: str) -> bool:
    """Whether the proof still verifies with the mutation applied (uncached)."""
    with mutated(mutation):
        try:
            ALL[proof_id].fn()
        except (ProofError, ZeroDivisionError, TypeError, ValueError):
            return False
    return True


@lru_cache(maxsize=None)
def verify(proof_id: str) -> tuple[bool, str]:
    """(holds, account): a proven kind runs its proof (cached per process); definition and tested only
    return their note and hold by construction (there is nothing to fail)."""
    pr = ALL[proof_id]
    if pr.fn is None:
        return True, pr.note
    try:
        return True, pr.fn()
    except ProofError as e:
        return False, str(e)


@dataclass
class Outcome:
    id: str
    kind: str
    ok: bool
    account: str
    seconds: float = 0.0
    #: (mutations it failed under, mutations of what it is about) once audited (:func:`audit`), else None
    killed: tuple[int, int] | None = None

    def to_json(self) -> dict:
        return {"kind": self.kind, "ok": self.ok, "account": self.account, "seconds": round(self.seconds, 3),
                **({"mutants": list(self.killed)} if self.killed else {})}


def run_all(ids=None) -> list[Outcome]:
    """Run every proof (uncached), timing each."""
    out = []
    for pid in ids or ALL:
        t0 = time.perf_counter()
        pr = ALL[pid]
        if pr.fn is None:
            out.append(Outcome(pid, pr.kind, True, pr.note))
            continue
        try:
            ok, account = True, pr.fn()
        except ProofError as e:
            ok, account = False, str(e)
        out.append(Outcome(pid, pr.kind, ok, account, time.perf_counter() - t0))
    return out


def audit(outcome: Outcome) -> Outcome:
    """A proof that verified, run again under each mutation of what it is about: it must fail under every one. One
    that survives a mutation proves nothing about it, and fails the audit; ``killed`` counts them."""
    pr = ALL[outcome.id]
    if pr.fn is None or not pr.about or not outcome.ok:
        return outcome
    survived = [mu for mu in pr.about if holds_under(outcome.id, mu)]
    outcome.killed = (len(pr.about) - len(survived), len(pr.about))
    if survived:
        outcome.ok = False
        outcome.account = f"still verifies with {', '.join(survived)}: it does not prove what it claims"
    return outcome
