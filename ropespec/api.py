"""The Python API: :func:`check` and :func:`fingerprint`, thin over the requests the command line builds
(:class:`ropespec.request.CheckRequest`, :class:`ropespec.request.FingerprintRequest`): their keywords are the requests'
fields, documented there once, and listed in each function's help from them."""

from __future__ import annotations

import inspect
import random

from ropespec.properties.profiles import DEFAULT_PROFILE
from ropespec.engine import check_implementations
from ropespec.properties.fingerprint import fingerprint as _fingerprint
from ropespec.inputs import load_all, load_implementations, parse_expect
from ropespec.request import CheckRequest, FingerprintRequest, api_keywords
from ropespec.results import CheckResult
from ropespec.spec import DEFAULT


def check(fn, expect=None, **keywords) -> CheckResult:
    """Check ``fn`` — a function f(x, positions), a factory make(expect), or a TARGET string — against every invariant
    (or ``invariants``). ``expect`` is a preset name, a dict, JSON, a config.json path or an
    :class:`~ropespec.spec.Expect`. ``fn`` runs in a worker process of its own (a TARGET string, or a function its
    module names); a callable no other process can load (a lambda, a closure, a function defined in ``__main__``) runs
    in-process, and the report's header says so."""
    req = CheckRequest.from_keywords(fn, expect, **keywords)
    impls = load_all(req.load_requests())
    profile = req.profile or DEFAULT_PROFILE
    seed = req.seed if req.seed is not None else random.randrange(2**31)
    reports = check_implementations(impls, req.properties(), profile=profile, seed=seed, replay=req.replayed())
    return CheckResult(reports, seed, profile, allow_skip=req.allow_skip, request=req.replace(seed=seed, profile=profile))


def fingerprint(fn, expect=None, **keywords):
    """Fingerprint ``fn`` (see :mod:`ropespec.properties.fingerprint`); ``expect`` gives head_dim, dtype and the probe
    range. ``fn`` runs in its own worker process, as in :func:`check`."""
    req = FingerprintRequest.from_keywords(fn, expect, **keywords)
    [impl] = load_implementations([req.target], expect=parse_expect(req.expect) or DEFAULT, **req.loading())
    try:
        return _fingerprint(impl.as_rope(impl.expect), impl.expect)
    finally:
        impl.close()


def _documented(function, request) -> None:
    """The function's signature and help from its request's fields: each keyword, its default and what it is."""
    fields = {f.name: f for f in request.__dataclass_fields__.values()}
    said = api_keywords(request)
    parameters = [inspect.Parameter("fn", inspect.Parameter.POSITIONAL_OR_KEYWORD),
                  inspect.Parameter("expect", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)]
    parameters += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=fields[name].default)
                   for name in said]
    function.__signature__ = inspect.Signature(parameters)
    function.__doc__ += "\n\nKeywords (each a field of :class:`ropespec.request." + request.__name__ + "`):\n\n" + \
        "\n".join(f"- ``{name}`` (default {fields[name].default!r}): {help}" for name, help in said.items())


_documented(check, CheckRequest)
_documented(fingerprint, FingerprintRequest)
