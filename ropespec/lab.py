"""The grader of the third tutorial's lab: ``ropespec check --module path/to/rope.py``.

It imports the module and checks each of these functions that it defines, at several dims, bases and
positions, against values it computes itself (the mpmath reference for the rotation, the tolerance
model's float64 class for the allowed error). A function the module lacks is reported as missing;
the rotation is also run through the RoPE properties, so a wrong one gets its diagnosis.
"""

from __future__ import annotations

import math

import numpy as np

from ropespec import reference
from ropespec.reference.encodings import sinusoidal_fast
from ropespec.implementations.contract import Failure, TargetError
from ropespec.implementations.boundary.workers import WorkerHost
from ropespec.implementations.shape import CallShape
from ropespec.properties.diagnose import diagnose
from ropespec.properties.numerics import output_bound
from ropespec.properties.results import Result
from ropespec.spec import tolerance
from ropespec.spec.expectation import Expect

FUNCTIONS = {
    "thetas": "thetas(d, base) -> list of d/2 frequencies",
    "rotate_pair": "rotate_pair(x0, x1, angle) -> (y0, y1)",
    "rope": "rope(vec, pos, base) -> list (interleaved pairs)",
    "rope_score": "rope_score(q, k, m, n, base) -> float",
    "additive_score": "additive_score(q, k, m, n, base) -> float",
    "turns": "turns(delta, d, base) -> list of turns per pair",
    "pairs_within_first_turn": "pairs_within_first_turn(delta, d, base) -> int",
}
DIMS, BASES, POSITIONS = (2, 4, 8, 32, 64), (10000.0, 500000.0, 10.0), (0, 1, 7, 100, 4000, 65521)
_LAB = lambda d, base: Expect(head_dim=d, rope_theta=base, convention="interleaved", dtype="float64",
                              angle_dtype="float64", inv_freq_dtype="float64", max_position=131072)


def _pe(pos, d, base):
    return sinusoidal_fast(_LAB(d, base), [pos])[0]


def _check_thetas(fn, rng):
    for d in DIMS:
        for base in BASES:
            got = np.asarray(fn(d, base), dtype=np.float64)
            e = _LAB(d, base)
            want = reference.thetas(e)
            # a float64 table: the tolerance model's inverse-frequency error in float64
            rel = tolerance.inv_freq_relative_error(e.replace(inv_freq_dtype="float64"))
            if got.shape != want.shape:
                raise Failure(f"thetas({d}, {base:g}) has {got.size} values, but should have d/2 = {want.size}", "shape")
            if not np.all(np.abs(got - want) <= rel * want):
                i = int(np.argmax(np.abs(got - want) / want))
                b = _ladder_base(got, d)
                raise Failure(f"thetas({d}, {base:g}) = {got[:4].tolist()}..., but should be {want[:4].tolist()}... "
                              f"(pair {i})", "base" if b is not None else "unknown",
                              evidence=f"the values are the ladder of base {b:.9g}, not {base:g}" if b is not None else None)
    return None


def _ladder_base(got: np.ndarray, d: int) -> float | None:
    """The base b' of got when it is a ladder b'^(-2i/d) (to 1e-9), else None."""
    if got.size < 2 or np.any(got <= 0) or abs(got[0] - 1.0) > 1e-9:
        return None
    i = np.arange(got.size)
    slope = np.polyfit(i, np.log(got), 1)[0]
    if np.max(np.abs(np.log(got) - slope * i)) > 1e-9:
        return None
    return float(np.exp(-slope * d / 2))


def _check_rotate_pair(fn, rng):
    for _ in range(20):
        x0, x1, a = rng.standard_normal(), rng.standard_normal(), rng.uniform(-10, 10)
        y = fn(x0, x1, a)
        want = (x0 * math.cos(a) - x1 * math.sin(a), x0 * math.sin(a) + x1 * math.cos(a))
        # a float64 rotation by an angle known exactly: the tolerance model's rotation error in float64
        tol = tolerance.rotation_rtol(_LAB(2, 1e4).replace(angle_dtype="float64")) * math.hypot(x0, x1)
        if abs(y[0] - want[0]) > tol or abs(y[1] - want[1]) > tol:
            diag = "direction" if abs(y[0] - (x0 * math.cos(a) + x1 * math.sin(a))) < 1e-9 else "not-a-rotation"
            raise Failure(f"rotate_pair({x0:.6g}, {x1:.6g}, {a:.6g}) = {tuple(y)}, but should be {want}", diag)
    return None


def _rope_as_f(fn, base):
    def f(x, positions):
        return np.array([fn(row.tolist(), int(p), base) for row, p in zip(x, positions)], dtype=np.float64)

    return f


def _check_rope(fn, rng):
    for d in (8, 64):
        for base in (10000.0, 500000.0):
            e = _LAB(d, base)
            x = rng.standard_normal((len(POSITIONS), d))
            pos = np.array(POSITIONS)
            got = _rope_as_f(fn, base)(x, pos)
            want = reference.apply(e, x, pos)
            if not np.all(np.abs(got - want) <= output_bound(e, x, pos)):
                found = diagnose(_rope_as_f(fn, base), e)
                k = np.unravel_index(int(np.argmax(np.abs(got - want))), got.shape)
                msg = f"rope(vec, {pos[k[0]]}, {base:g})[{k[1]}] = {float(got[k])!r}, but should be {float(want[k])!r} (d = {d})"
                raise Failure(msg, found[0] if found else "unknown", evidence=found[1] if found else None)
    return None


def _check_score(fn, rng, additive: bool):
    for d in (8, 32):
        for base in (10000.0, 500000.0):
            q, k = rng.standard_normal(d), rng.standard_normal(d)
            for m, n in ((3, 5), (10, 12), (100, 102), (4000, 4002), (7, 1)):
                got = fn(q.tolist(), k.tolist(), m, n, base)
                e = _LAB(d, base)
                if additive:  # each PE component within the bound of a unit pair at its position
                    a, b = q + _pe(m, d, base), k + _pe(n, d, base)
                    ta, tb = (output_bound(e, np.ones((1, d)) / math.sqrt(2), np.array([p]))[0] for p in (m, n))
                else:  # each rotated component within the model's bound at its position
                    y = reference.apply(e, np.stack([q, k]), np.array([m, n]))
                    a, b = y
                    ta, tb = output_bound(e, q[None], np.array([m]))[0], output_bound(e, k[None], np.array([n]))[0]
                want = a @ b
                # first-order error of a dot product of two vectors within (ta, tb), plus its own float64 sum
                bound = float(np.sum(np.abs(a) * tb + np.abs(b) * ta + ta * tb) + 2 * d * 2.0**-53 * np.sum(np.abs(a * b)))
                if not abs(got - want) <= bound:
                    name = "additive_score" if additive else "rope_score"
                    raise Failure(f"{name}(q, k, {m}, {n}, {base:g}) = {got!r}, but should be {float(want)!r} (d = {d})",
                                  "unknown")
    return None


def _check_turns(fn, rng):
    for d in (16, 64):
        for delta in (1, 10, 100, 1000, 10000):
            got = np.asarray(fn(delta, d, 10000.0), dtype=np.float64)
            want = delta * reference.thetas(_LAB(d, 10000.0)) / (2 * math.pi)
            # delta theta_i / 2 pi in float64: the float64 table's error, the product and the division
            rel = tolerance.inv_freq_relative_error(_LAB(d, 10000.0)) + 3 * 2.0**-53
            if got.shape != want.shape or not np.all(np.abs(got - want) <= rel * np.abs(want)):
                raise Failure(f"turns({delta}, {d}, 10000) = {got[:3].tolist()}..., but should be {want[:3].tolist()}...",
                              "unknown")
    return None


def _check_within(fn, rng):
    for d, want_list in ((64, (32, 30, 22, 14, 6)),):  # the tutorial's figures (reference/facts.py)
        for delta, want in zip((1, 10, 100, 1000, 10000), want_list):
            got = fn(delta, d, 10000.0)
            if got != want:
                raise Failure(f"pairs_within_first_turn({delta}, {d}, 10000) = {got!r}, but should be {want}", "unknown")
    return None


CHECKS = {
    "thetas": _check_thetas,
    "rotate_pair": _check_rotate_pair,
    "rope": _check_rope,
    "rope_score": lambda fn, rng: _check_score(fn, rng, False),
    "additive_score": lambda fn, rng: _check_score(fn, rng, True),
    "turns": _check_turns,
    "pairs_within_first_turn": _check_within,
}


def grade(path: str, *, seed: int = 0, timeout: float | None = 10.0, warmup_timeout: float | None = 300.0) -> list[Result]:
    """One Result per lab function: pass, fail (with its diagnosis) or missing. The module runs in a
    worker process of its own (:mod:`ropespec.implementations.boundary.workers`), each call under ``timeout``. ``path``
    must be a path to a .py file (TargetError otherwise: a bare name is never imported)."""
    if not (path.endswith(".py") or "/" in path or "\\" in path):
        raise TargetError(f"{path}: expected a path to the lab's .py file (a bare name is not imported)")
    host = WorkerHost({"module_path": path}, path, shape=CallShape(), array="list", device="cpu",
                      timeout=timeout or None, warmup_timeout=warmup_timeout or None)
    try:
        try:
            info = host.load("float64")
        except Failure as e:  # the import ended or stalled its process
            return [Result(f"module {path}", name, f"lab.{name}", "fail", e.diagnosis, "not run", seed=seed, failure=e)
                    for name in FUNCTIONS]
        module = {name: (lambda *args, name=name: host.attr(name, *args)) for name in info["callables"]}
        return _grade(module, path, seed)
    finally:
        host.close()


def _grade(module: dict, path: str, seed: int) -> list[Result]:
    results = []
    by_name = {}
    for name, signature in FUNCTIONS.items():
        res = Result(f"module {path}", name, f"lab.{name}", "pass", seed=seed)
        fn = module.get(name)
        if fn is None:
            res.status = "fail"
            res.message = f"missing: the module defines no {signature}"
        else:
            try:
                CHECKS[name](fn, np.random.default_rng(seed))
            except Failure as e:
                res.status, res.diagnosis, res.failure = "fail", e.diagnosis, e
                if name == "rope_score" and _follows_rope(module, fn) and by_name.get("rope"):
                    rope_res = by_name["rope"]
                    if rope_res.status == "fail":
                        res.name(rope_res.diagnosis, "it is <rope(q, m), rope(k, n)> of the module's rope", follows=True)
        by_name[name] = res
        results.append(res)
    return results


def _follows_rope(module: dict, score) -> bool:
    """Is the module's rope_score the dot product of its own rope's outputs?"""
    rope = module.get("rope")
    if rope is None:
        return False
    q, k = [0.3, -1.2, 0.7, 0.1], [1.1, 0.4, -0.5, 0.9]
    try:
        mine = sum(a * b for a, b in zip(rope(q, 7, 10000.0), rope(k, 19, 10000.0)))
        return abs(score(q, k, 7, 19, 10000.0) - mine) <= 1e-9 * (1 + abs(mine))
    except Failure:
        return False
