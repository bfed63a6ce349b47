"""tests/conftest.py's session caches: a check with the same key runs once per session (per xdist worker) and hands
each test its own copy; another seed, expectation, invariant list or edited file runs again; a check without a seed
draws afresh every time. The proofs likewise: once per session on the session's own definitions, afresh under a
mutation."""

from ropespec import CheckResult

TARGET = "ropespec.implementations.numpy_rope:make"
NORM = ["rope.norm-per-pair"]


def test_an_identical_check_is_the_cached_one_and_a_copy_of_it(checked):
    runs = checked.runs
    first = checked(TARGET, {"head_dim": 8}, invariants=NORM, seed=1)
    again = checked(TARGET, {"head_dim": 8}, invariants=list(NORM), seed=1)
    assert checked.runs == runs + 1
    assert isinstance(again, CheckResult) and first.passed and again.passed
    assert again is not first and again.results[0] is not first.results[0]
    assert [(r.invariant, r.status, r.worst, r.examples) for r in again.results] == \
        [(r.invariant, r.status, r.worst, r.examples) for r in first.results]
    first.results[0].status = "fail"  # what one test changes in its copy, no other test sees
    assert checked(TARGET, {"head_dim": 8}, invariants=NORM, seed=1).results[0].status == "pass"
    assert checked.runs == runs + 1


def test_the_same_expectation_however_written_is_one_key(checked):
    """The key holds the expectation's canonical JSON: a dict, its JSON text and its Expect are the same run."""
    from ropespec.spec import Expect

    keys = {checked.key(TARGET, e, invariants=NORM, seed=1)
            for e in ({"head_dim": 8}, '{"head_dim": 8}', Expect(head_dim=8))}
    assert len(keys) == 1


def test_another_seed_expectation_or_invariant_runs_again(checked):
    runs = checked.runs
    base = checked(TARGET, {"head_dim": 8}, invariants=NORM, seed=2)
    other_seed = checked(TARGET, {"head_dim": 8}, invariants=NORM, seed=3)
    other_expect = checked(TARGET, {"head_dim": 16}, invariants=NORM, seed=2)
    other_invariants = checked(TARGET, {"head_dim": 8}, invariants=["contract.shape-finite"], seed=2)
    assert checked.runs == runs + 4
    assert (base.seed, other_seed.seed) == (2, 3)
    assert other_expect.reports[0].impl.expect.head_dim == 16
    assert {r.invariant for r in other_invariants.results} == {"contract.shape-finite"}
    assert all(r.passed for r in (base, other_seed, other_expect, other_invariants))


def test_a_check_without_a_seed_runs_every_time(checked):
    runs = checked.runs
    checked(TARGET, {"head_dim": 8}, invariants=NORM)
    checked(TARGET, {"head_dim": 8}, invariants=NORM)
    assert checked.runs == runs + 2


def test_an_edited_file_is_checked_again(checked, toy_rope):
    """A TARGET file is read into the key: the same path with other code is another run (and fails)."""
    target = f"{toy_rope / 'toy_rope.py'}:apply"
    runs = checked.runs
    assert checked(target, {"head_dim": 16}, invariants=NORM, seed=1).passed
    assert checked(target, {"head_dim": 16}, invariants=NORM, seed=1).passed
    (toy_rope / "toy_rope.py").write_text("def apply(x, positions):\n    return 2 * x\n")
    assert not checked(target, {"head_dim": 16}, invariants=NORM, seed=1).passed
    assert checked.runs == runs + 2


def test_a_zoo_member_s_run_is_the_session_s(checked):
    from ropespec.implementations.zoo import members
    from tests.test_zoo import target_property

    [member] = [m for m in members() if m.name == "off_by_one"]
    prop = target_property(member.targets[0])
    runs = checked.runs
    impl, r = checked.zoo(member, prop)
    impl2, r2 = checked.zoo(member, prop)
    assert r.status == r2.status == "fail" and r.diagnosis == r2.diagnosis and r2 is not r
    assert impl2 is impl and impl.name == "off_by_one"
    assert checked.runs <= runs + 1


def test_a_proof_is_proven_once_and_afresh_under_a_mutation(proved):
    from ropespec.spec import proofs

    pid, mutation = "rope.norm-per-pair", "R: doubled"
    ok, account = proved.verify(pid)
    assert ok and proved.verify(pid) == (ok, account)
    runs = proved.runs
    assert not proved.survives(pid, mutation) and not proved.survives(pid, mutation)
    assert proved.runs <= runs + 1
    with proofs.mutated(mutation):
        assert not proved.own()
        assert not proved.verify(pid)[0]  # the mutant's proof fails: nothing cached is read
        assert not proved.outcome(pid).ok
    assert proved.own() and proved.verify(pid)[0]


def test_ropespec_proofs_reads_the_session_s_proofs(proved, cli):
    """README's `ropespec proofs ID` through the cli fixture: each proof and each of its mutations run once per
    session, whichever test asks first; the command prints what it prints uncached."""
    pid = "rope.norm-per-pair"
    first = cli("proofs", pid)
    runs = proved.runs
    again = cli("proofs", pid)
    assert first.returncode == again.returncode == 0, first.stdout + first.stderr
    assert proved.runs == runs
    for out in (first.stdout, again.stdout):
        line = next(x for x in out.splitlines() if x.startswith(pid + " "))
        assert "verified" in line and "3/3" in line, line
