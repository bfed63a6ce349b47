"""The proofs prove: each runs on the project's own definitions, has an honest kind, and fails when
what it is about is broken (spec/proofs/mutations.py, and edits of spec/scaling.py's source)."""

import importlib.util
from pathlib import Path

import pytest

from ropespec import specdoc

from ropespec.spec import proofs
from ropespec.spec.invariants import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
#: symbolic proofs that use no definition (algebra about numbers), so no mutation of one can touch them
ABOUT_NOTHING = {"lemma.cauchy-schwarz-rotation"}


def test_every_invariant_has_a_proof_of_an_honest_kind():
    assert set(proofs.PROOFS) == set(REGISTRY)
    for pid, pr in proofs.ALL.items():
        assert pr.kind in proofs.KINDS, pid
        assert (pr.fn is None) == (pr.kind not in proofs.PROVEN_KINDS), pid
        if pr.fn is None:
            assert pr.note and not pr.about, pid


@pytest.mark.parametrize("proof_id", [k for k, v in proofs.ALL.items() if v.fn is not None])
def test_proof_verifies(proof_id, proved):
    """It verifies today, and docs/proofs.json (what ropespec spec renders) says so in the same words (the
    record's own test, tests/test_spec.py, checks the rest of it without proving anything again; README's
    `ropespec proofs` commands read the same session's proofs: tests/conftest.py's proved)."""
    ok, account = proved.verify(proof_id)
    assert ok, account
    got = specdoc.load_record()["results"][proof_id]
    assert (got["ok"], got["account"]) == (ok, account), \
        f"{proof_id}: stale record, run  ropespec proofs --record docs/proofs.json"


CASES = [(pid, mu) for pid, pr in proofs.ALL.items() for mu in pr.about]


@pytest.mark.parametrize("proof_id, mutation", CASES, ids=[f"{p}|{m}" for p, m in CASES])
def test_proof_fails_when_what_it_is_about_is_broken(proof_id, mutation, proved):
    """(The proof itself verifies in test_proof_verifies; here, the definition the mutation replaced is back, the same
    object, so that no later proof of this process runs on a mutant: proved.survives asserts it of every run.)"""
    obj, attr, _ = proofs.MUTATIONS[mutation]
    before = obj.__dict__[attr]
    assert not proved.survives(proof_id, mutation), f"{proof_id} still verifies with {mutation!r}"
    assert obj.__dict__[attr] is before, "the mutation was not undone"


def test_every_proof_is_about_something_and_every_mutation_breaks_a_proof():
    for pid, pr in proofs.ALL.items():
        if pr.fn is not None and pid not in ABOUT_NOTHING:
            assert pr.about, f"{pid}: a proof that no mutation of a definition can fail"
    used = {mu for pr in proofs.ALL.values() for mu in pr.about}
    assert used == set(proofs.MUTATIONS), set(proofs.MUTATIONS) - used


def test_every_rotation_mutant_fails_conformance(proved):
    """The mutants the issue names: reflection, 2R, shear, transposed R (and a bias)."""
    for mu in ("R: reflection", "R: doubled", "R: shear", "R: transposed", "R: plus a bias"):
        assert not proved.survives("rope.conformance", mu), mu


def _load_mutated_scaling(old: str, new: str):
    src = (ROOT / "spec" / "scaling.py").read_text()
    assert src.count(old) == 1, old
    spec = importlib.util.spec_from_loader("scaling_mutant", loader=None)
    mod = importlib.util.module_from_spec(spec)
    exec(compile(src.replace(old, new), "spec/scaling.py (mutated)", "exec"), mod.__dict__)
    return mod


@pytest.mark.parametrize("old, new, proof_id", [
    ("    return b * s ** (r / (r - 2))", "    return b * s", "scaling.ntk-endpoints"),
    ("    return corr(beta_fast), corr(beta_slow)", "    return corr(beta_slow), corr(beta_fast)", "scaling.band-edges"),
    ("    return s * l / L - (s - 1)", "    return s * l / L", "scaling.dynamic-length"),
    ("    return m * theta / s + (1 - m) * theta", "    return m * theta / s**2 + (1 - m) * theta", "scaling.bounded"),
])
def test_an_edit_of_scaling_py_fails_its_proof(monkeypatch, old, new, proof_id):
    """The proofs read spec/scaling.py's code: the file edited (not a function patched) fails them,
    and the same file unedited passes (the control)."""
    monkeypatch.setattr(proofs.scaling_methods, "scaling", _load_mutated_scaling(old, old))
    proofs.ALL[proof_id].fn()
    monkeypatch.setattr(proofs.scaling_methods, "scaling", _load_mutated_scaling(old, new))
    with pytest.raises(proofs.ProofError):
        proofs.ALL[proof_id].fn()


def test_a_false_statement_is_not_proven():
    with pytest.raises(proofs.ProofError):
        proofs._zero(proofs.R(proofs.a) * proofs.R(proofs.b_) - proofs.R(proofs.a - proofs.b_), "false")
    with pytest.raises(proofs.ProofError):
        proofs._sign(proofs.s - 1, "nonnegative", "s >= 1 is not known of a positive s")


def test_ropespec_proofs_exits_1_when_a_proof_fails_or_survives_its_mutations(monkeypatch, capsys, proved):
    """(The two proofs are the session's, proven once: proved.serving; under a mutation they are proven again.)"""
    from ropespec.cli import main

    monkeypatch.setattr(proofs, "holds_under", lambda pid, mu: pid == "rope.norm-per-pair")
    with proved.serving():
        assert main(["proofs", "rope.norm-per-pair", "rope.relative-position"]) == 1
    out = capsys.readouterr().out
    assert "still verifies with R: doubled" in out and "rope.norm-per-pair" in out
    assert "2 entries, 2 proofs" in out and "rope.conformance" not in out, out
    monkeypatch.undo()
    with proofs.mutated("R: shear"):
        assert main(["proofs", "--no-mutants", "rope.norm-per-pair"]) == 1
    assert "FAILED" in capsys.readouterr().out


@pytest.mark.parametrize("args, says", [(["rope.nothing"], "INVARIANT: 'rope.nothing' has no entry"),
                                        (["rope.conformance", "--record", "r.json"], "--record: the record states every")])
def test_a_bad_proof_selection_is_one_line(args, says, capsys, tmp_path, monkeypatch):
    from ropespec.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["proofs", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and says in err, err
    assert not (tmp_path / "r.json").exists()


def test_record_needs_the_mutations(tmp_path, capsys):
    from ropespec.cli import main

    assert main(["proofs", "--no-mutants", "--record", str(tmp_path / "r.json")]) == 2
    assert "--record" in capsys.readouterr().err


def test_a_record_path_that_cannot_be_written_is_refused_before_any_proof_runs(tmp_path, capsys, monkeypatch):
    """--record is a report like any other (ropespec.outputs): checked before the proofs run, written whole or not."""
    from ropespec.cli import main

    def boom(*a, **k):
        raise AssertionError("a proof ran")
    monkeypatch.setattr(proofs, "run_all", boom)
    assert main(["proofs", "--record", str(tmp_path / "missing" / "r.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--record" in err and "does not exist" in err, err
