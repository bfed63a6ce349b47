"""``ropespec check --resume REPORT.json``: run only the checks an earlier report of the same command does not hold.

An implementation is held when the report has a result for every selected property of it (an interrupted run's
last implementations are partial or absent, and run again whole, so no check counts twice). The run takes the
report's seed (each property's examples are drawn from the run's seed, so a resumed check draws what the whole run
would have) and must have its profile; an implementation the report holds that this command does not check means
another command, and is bad usage. Held implementations keep their report entries as written."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass

from ropespec.implementations.implementation import Implementation
from ropespec.implementations.loader import LoadRequest
from ropespec.properties.framework import Property
from ropespec.properties.results import Result
from ropespec.inputs import UsageError
from ropespec.replay import replay_command
from ropespec.request import CheckRequest
from ropespec.results import ImplementationReport
from ropespec.spec.expectation import Expect


@dataclass
class Resumed:
    path: str
    seed: int
    profile: str
    entries: list[dict]

    def held(self, requests: list[LoadRequest], props: list[Property]) -> dict[int, ImplementationReport]:
        """The implementations (by their index in ``requests``) the report holds whole, as reports."""
        wanted = sorted((p.invariant, p.name) for p in props)
        unclaimed = list(self.entries)
        out: dict[int, ImplementationReport] = {}
        for i, request in enumerate(requests):
            entry = next((e for e in unclaimed if e.get("name") == request.name), None)
            if entry is None:
                continue
            unclaimed.remove(entry)
            if sorted((r["invariant"], r["property"]) for r in entry["results"]) == wanted:
                out[i] = _report(entry, request, self.seed, self.profile)
        if unclaimed:
            raise UsageError(f"--resume: {self.path} holds {unclaimed[0].get('name')!r}, which this command does not "
                             f"check: resume with the command that wrote it")
        return out


def read(path: str, req: CheckRequest) -> Resumed:
    """The report at ``path``, validated against this run's request (its --seed and --profile, and what it checks, read
    back from the request the report states); UsageError (one line) otherwise."""
    seed, profile = req.seed, req.profile
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise UsageError(f"--resume: cannot read {path}: {e.strerror or e}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise UsageError(f"--resume: {path} is not JSON ({e})") from None
    ok = (isinstance(data, dict) and isinstance(data.get("implementations"), list) and isinstance(data.get("seed"), int)
          and all(isinstance(e, dict) and isinstance(e.get("results"), list) for e in data["implementations"]))
    if not ok:
        raise UsageError(f"--resume: {path} is not a report of ropespec check --json")
    if seed is not None and seed != data["seed"]:
        raise UsageError(f"--resume: {path} was run with --seed {data['seed']}, which a resumed run keeps "
                         f"(drop --seed {seed})")
    if data.get("profile") != profile:
        raise UsageError(f"--resume: {path} was run with --profile {data.get('profile')}; resume with the same "
                         f"profile (this command: --profile {profile})")
    if isinstance(data.get("request"), dict):  # the request that wrote it: resumed only by one checking the same
        try:
            asked = CheckRequest.from_json(data["request"])
        except (TypeError, ValueError, UsageError):
            raise UsageError(f"--resume: {path} states a request this ropespec does not read") from None
        differ = req.checks_otherwise(asked)
        if differ:
            again = asked.replace(seed=None, json=None, junit=None, resume=path)
            raise UsageError(f"--resume: {path} was written by a run that checks other {', '.join(differ)}: resume "
                             f"with its command, {again.command_line()}")
    return Resumed(path, data["seed"], profile, data["implementations"])


def _report(entry: dict, request: LoadRequest, seed: int, profile: str) -> ImplementationReport:
    """A held implementation as the report renders it: rebuilt from its entry and this command's request of it (its
    call shape); its JSON is the entry as written."""
    impl = Implementation(name=entry["name"], target=entry["target"], mode=entry["mode"], array=entry["array"],
                          dtype=entry["dtype"], max_position=entry.get("max_position") or request.max_position or 0,
                          expect=Expect.from_dict(entry["expect"]) if entry.get("expect") else None,
                          device=entry.get("device") or request.device or "cpu", shape=request.shape,
                          notes=list(entry.get("notes") or []), configuration=entry.get("configuration"),
                          isolation=entry.get("isolation") or "worker process",
                          left_behind=list(entry.get("left_behind") or []))
    impl.__dict__["_warmup"] = entry.get("warmup_seconds")
    results = []
    for r in entry["results"]:
        result = Result.from_json(r, implementation=impl.name, seed=seed, profile=profile)
        if r.get("replay"):  # what the failure needs beyond its command (a --replay blob): the stored command's tail
            base = shlex.split(replay_command(impl, result) or "")
            stored = shlex.split(r["replay"])
            result.replay = stored[len(base):] if stored[:len(base)] == base else []
        results.append(result)
    return ImplementationReport(impl, results, stored=entry)


__all__ = ["Resumed", "read"]
