"""What the suite's own tests share: ropespec's command line, run in the test's process or as a process of its own, and
a toy RoPE to check with it.

Fixtures (a test names them as arguments; a conftest is not imported by name):

* ``cli(*args, cwd=None)``: ``ropespec`` run in this test's process (``ropespec.cli.main``) from ``cwd``, as a
  ``subprocess.CompletedProcess`` (returncode, stdout, stderr; or unpacked, ``code, out, err``): the same code as the
  console script without another interpreter's start and imports; TARGETs still run in worker processes.
* ``ropespec_process(*args, cwd=None, timeout=..., **popen)``: ``python -m ropespec`` as a process of its own, for what
  only a process shows (the console script's exit status, signals, closed streams, what is left running).
* ``toy_rope``: a folder holding ``toy_rope.py`` (:data:`TOY_ROPE`), a correct plain numpy RoPE of the half
  convention at two bases (``toy_rope.py:apply``: 10000; ``toy_rope.py:llama``: 500000).
* ``checked(target, expect=None, **options)`` (session): ``ropespec.check`` run once per session (per xdist worker)
  for each key: the target (a TARGET string with the file it names read, or the callable itself), the expectation's
  canonical JSON, every option (call shape, array, dtype, invariants, profile, seed, ...), the working directory and
  ``sys.path``; each call hands back a copy, so a test that changes its result changes no other test's. A run
  without a seed draws a fresh one, and runs every time. ``checked.zoo(member, prop)``: a zoo member's run of one
  property (profile ci, seed 0, as tests/test_zoo.py runs it), as ``(implementation, result)``, once per session.
* ``proved`` (session): the proofs of spec/proofs/ once per session: ``proved.verify(id)``, ``proved.survives(id,
  mutation)`` (:func:`ropespec.spec.proofs.holds_under`) and ``proved.serving()``, under which ``ropespec proofs``
  reads them; the ``cli`` fixture runs ``ropespec proofs`` under it. A definition that is not the session's own (a
  mutation applied, spec/scaling.py's module replaced, a proof swapped) is proven afresh, uncached.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import hashlib
import os
import re
import subprocess
import sys
import time

import pytest

#: a plain numpy RoPE as a user writes it: the half convention, float64 angles, the result in x's dtype
TOY_ROPE = '''
import numpy as np


def _rope(x, positions, base):
    d = x.shape[1]
    inv = base ** (-np.arange(0, d, 2) / d)
    ang = np.asarray(positions)[:, None].astype(np.float64) * inv
    c, s = np.cos(ang), np.sin(ang)
    x1, x2 = x[:, : d // 2].astype(np.float64), x[:, d // 2 :].astype(np.float64)
    return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=1).astype(x.dtype)


def apply(x, positions):
    return _rope(x, positions, 10000.0)


def llama(x, positions):
    return _rope(x, positions, 500000.0)
'''

class Ran(subprocess.CompletedProcess):
    """A run's outcome, also unpacked as ``code, out, err``."""

    def __iter__(self):
        return iter((self.returncode, self.stdout, self.stderr))


#: a run that outlasts this is stuck, not slow: generous, since a loaded 2-core machine takes many times the usual
PROCESS_TIMEOUT = 1800


@pytest.fixture
def cli(capsys, monkeypatch, request):
    from ropespec.cli import main

    def run(*args, cwd=None) -> Ran:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        capsys.readouterr()
        # `ropespec proofs` reads the session's proofs (each proven once, by whichever test asks first)
        serving = (request.getfixturevalue("proved").serving() if args and str(args[0]) == "proofs"
                   else contextlib.nullcontext())
        try:
            with serving:
                code = main([str(a) for a in args])
        except SystemExit as e:  # argparse's own exits (a usage error, --help)
            code = e.code if isinstance(e.code, int) else 1
        out = capsys.readouterr()
        return Ran(["ropespec", *map(str, args)], code, out.out, out.err)

    return run


@pytest.fixture
def ropespec_process():
    def run(*args, cwd=None, timeout=PROCESS_TIMEOUT, **popen) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "ropespec", *map(str, args)], cwd=cwd, capture_output=True,
                              text=True, timeout=timeout, **popen)

    return run


@pytest.fixture
def toy_rope(tmp_path):
    (tmp_path / "toy_rope.py").write_text(TOY_ROPE)
    return tmp_path


def _file_of(target: str):
    """The file a TARGET string names (``path.py:name``), as read now, so that an edited file is checked again; None
    for a module's dotted name (keyed by the name, the working directory and sys.path)."""
    path = target.rpartition(":")[0] if ":" in target else target
    if not path.endswith(".py"):
        return None
    try:
        return os.path.abspath(path), hashlib.sha256(open(path, "rb").read()).hexdigest()
    except OSError:
        return os.path.abspath(path), None


def _part(value):
    """One part of a check's key: what makes two runs the same run."""
    if isinstance(value, str):
        return ("str", value, _file_of(value))
    if isinstance(value, (list, tuple)):
        return ("seq", tuple(_part(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, _part(v)) for k, v in value.items())))
    hash(value)  # a callable by identity (the cache holds it, so its id is not reused); unhashable: not cached
    return ("obj", value)


class Checked:
    """``ropespec.check`` memoised for the session (see the module's docstring)."""

    def __init__(self):
        self.cache: dict = {}
        self.runs = 0  # how many times a check was actually run (tests/test_session_cache.py reads it)

    def key(self, target, expect=None, **options):
        """The run's key, or None when it is not to be cached (no seed: a fresh draw every time)."""
        from ropespec.inputs import parse_expect
        from ropespec.properties.profiles import DEFAULT_PROFILE

        if options.get("seed") is None:
            return None
        e = parse_expect(expect)
        options = {**options, "profile": options.get("profile") or DEFAULT_PROFILE}
        try:
            return (_part(target), e.to_json() if e is not None else None,
                    tuple(sorted((k, _part(v)) for k, v in options.items())), os.getcwd(), tuple(sys.path))
        except TypeError:  # something unhashable handed over
            return None

    def __call__(self, target, expect=None, **options):
        import ropespec

        key = self.key(target, expect, **options)
        if key is None:
            self.runs += 1
            return ropespec.check(target, expect, **options)
        if key not in self.cache:
            self.runs += 1
            self.cache[key] = ropespec.check(target, expect, **options)  # what raises is raised again next time
        return copy.deepcopy(self.cache[key])

    def zoo(self, member, prop, *, profile: str = "ci", seed: int = 0):
        """``member``'s run of the property ``prop`` (tests/test_zoo.py's target_property of a TARGETS entry), as
        tests/test_zoo.py runs it: ``(implementation, result)``, the implementation's worker stopped once it ran."""
        from ropespec.properties.framework import run_property

        key = ("zoo", member.name, member.target, prop.invariant, prop.name, profile, seed)
        if key not in self.cache:
            impl = member.impl()
            self.runs += 1
            try:
                self.cache[key] = (impl, run_property(prop, impl, profile=profile, seed_value=seed))
            finally:
                impl.close()
        impl, result = self.cache[key]
        return impl, copy.deepcopy(result)


@pytest.fixture(scope="session")
def checked():
    return Checked()


class Proved:
    """The proofs of spec/proofs/ once per session, on the session's own definitions (see the module's docstring)."""

    def __init__(self):
        from ropespec.spec import proofs

        self.proofs = proofs
        self.run_all, self.holds_under = proofs.run_all, proofs.holds_under
        self.pristine = self._definitions()
        self.entries = {**proofs.PROOFS, **proofs.LEMMAS}  # what ALL is made of
        self.verified: dict = {}
        self.survived: dict = {}
        self.runs = 0

    def _definitions(self) -> tuple:
        return tuple(obj.__dict__.get(attr) for obj, attr, _ in self.proofs.MUTATIONS.values())

    def own(self) -> bool:
        """The definitions are the session's own: no mutation applied, spec/scaling.py's module and every proof the
        ones imported, and all of it as it was when the session first asked (by identity)."""
        p = self.proofs
        if any(obj.__dict__.get(attr) is new for obj, attr, new in p.MUTATIONS.values()):
            return False
        if p.scaling_methods.scaling is not sys.modules.get("ropespec.spec.scaling") or p.ALL.keys() != self.entries.keys() \
                or any(p.ALL[k] is not v for k, v in self.entries.items()):
            return False
        now = self._definitions()
        return all(a is b for a, b in zip(now, self.pristine))

    def outcome(self, proof_id: str):
        """What :func:`ropespec.spec.proofs.run_all` gives for this entry (a copy: ``audit`` fills it in)."""
        if not self.own():
            return self.run_all([proof_id])[0]
        pr = self.proofs.ALL[proof_id]
        ok, account = self.verify(proof_id)
        seconds = self.verified[proof_id][1] if pr.fn is not None else 0.0  # the proof's own time, when it ran
        return self.proofs.Outcome(proof_id, pr.kind, ok, account, seconds)

    def verify(self, proof_id: str) -> tuple[bool, str]:
        """:func:`ropespec.spec.proofs.verify` (whose per-process cache tests/test_proofs.py's own calls share);
        proven afresh, uncached, on definitions that are not the session's own."""
        if not self.own():
            pr = self.proofs.ALL[proof_id]
            if pr.fn is None:
                return True, pr.note
            try:
                return True, pr.fn()
            except self.proofs.ProofError as e:
                return False, str(e)
        if proof_id not in self.verified:
            self.runs += 1
            t0 = time.perf_counter()
            self.verified[proof_id] = self.proofs.verify(proof_id), time.perf_counter() - t0
        return self.verified[proof_id][0]

    def survives(self, proof_id: str, mutation: str) -> bool:
        """:func:`ropespec.spec.proofs.holds_under`, once per (proof, mutation); each run leaves the definitions
        as it found them (asserted)."""
        if not self.own():
            return self.holds_under(proof_id, mutation)
        key = (proof_id, mutation)
        if key not in self.survived:
            self.runs += 1
            self.survived[key] = self.holds_under(proof_id, mutation)
            assert self.own(), f"holds_under({proof_id!r}, {mutation!r}) left a definition mutated"
        return self.survived[key]

    @contextlib.contextmanager
    def serving(self):
        """``ropespec proofs`` (``proofs.run_all`` and ``proofs.holds_under``) reads this session's proofs; what a test
        has put in their place itself is left alone, and so are definitions that are not the session's own."""
        p = self.proofs
        with contextlib.ExitStack() as undo:
            if self.own():
                for name, own, ours in (("run_all", self.run_all, self._run_all),
                                        ("holds_under", self.holds_under, self.survives)):
                    if getattr(p, name) is own:
                        setattr(p, name, ours)
                        undo.callback(setattr, p, name, own)
            yield

    def _run_all(self, ids=None):
        return [self.outcome(pid) for pid in ids or self.proofs.ALL]


@pytest.fixture(scope="session")
def proved():
    return Proved()
