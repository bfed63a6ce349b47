"""The outcome of one property on one implementation, and how it reads as text."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ropespec.implementations.contract import Failure, summarised
from ropespec.spec.expectation import Expect


@dataclass
class Result:
    """The outcome of one property on one implementation."""

    implementation: str
    property: str
    invariant: str
    status: str  # "pass" | "fail" | "skip" | "error" | "xfail" (a declared, documented failure)
    diagnosis: str | None = None
    note: str = ""  # what a result says besides its failure (a skip's reason; before a declared failure: why)
    counterexample: dict | None = None
    worst: float | None = None  # worst error seen, as a fraction of its bound
    examples: int = 0
    replay: list[str] = field(default_factory=list)  # extra CLI arguments that replay the failure
    seed: int | None = None
    profile: str | None = None
    applicable: bool = True  # False: the property is for the other mode (rope vs decode); reports hide it
    failure: Failure | None = None  # what failed, as a record (ropespec.implementations.contract.Failure)

    @property
    def message(self) -> str:
        """The result in words: its note, and its failure rendered (ropespec.implementations.contract.render)."""
        if self.failure is None:
            return self.note
        return f"{self.note}: {self.failure.message}" if self.note else self.failure.message

    @message.setter
    def message(self, text: str) -> None:
        """A result said in other words than a failure (a skip, an error of ropespec's): the failure record goes."""
        self.note, self.failure = text, None

    def name(self, word: str, evidence: str | None = None, *, follows: bool = False, also=()) -> None:
        """Give the failure its word and what earns it (``follows``: the root cause it follows from; ``also``: the
        other fields' words)."""
        self.diagnosis = word
        if self.failure is not None:
            self.failure = self.failure.named(word, evidence, follows=follows, also=also)

    @property
    def passed(self) -> bool:
        return self.status in ("pass", "skip", "xfail")

    def to_json(self) -> dict:
        return {
            "invariant": self.invariant,
            "property": self.property,
            "status": self.status,
            "diagnosis": self.diagnosis,
            "message": self.message,
            "note": self.note,
            "failure": self.failure.to_dict() if self.failure is not None else None,
            "counterexample": self.counterexample,
            "worst": self.worst,
            "examples": self.examples,
            "applicable": self.applicable,
        }

    @classmethod
    def from_json(cls, d: dict, *, implementation: str, seed: int | None, profile: str | None) -> "Result":
        """A result as :meth:`to_json` wrote it (a non-finite ``worst`` written as a string read back)."""
        worst = d.get("worst")
        failure = Failure.from_dict(d["failure"]) if isinstance(d.get("failure"), dict) else None
        note = d.get("note") if "note" in d else d.get("message")
        return cls(implementation, d["property"], d["invariant"], d["status"], diagnosis=d.get("diagnosis"),
                   note=note or "", counterexample=d.get("counterexample"),
                   worst=float(worst) if isinstance(worst, str) else worst, examples=d.get("examples") or 0,
                   seed=seed, profile=profile, applicable=d.get("applicable", True), failure=failure)

    def explain(self, replay_command: str | None = None, values: str = "the replay command with --json PATH",
                expect_words: Callable[[dict], str | None] | None = None) -> str:
        """The failure as text: message, minimal counterexample, and the command that replays it.
        ``values``: where the counterexample's full values are (a --json file, or how to get one);
        ``expect_words``: the counterexample's expectation in its family's words (None: its dict)."""
        lines = [f"{self.implementation} :: {self.invariant} ({self.property}): {self.status}"
                 + (f" [{self.diagnosis}]" if self.diagnosis else "")]
        lines.append(f"  {self.message}")
        if self.counterexample:
            lines.append(f"  counterexample (full values: {values}):")
            for k, v in self.counterexample.items():
                words = expect_words(v) if expect_words and k == "expect" and isinstance(v, dict) else None
                lines.append(f"    {k} = {words or _brief(v)}")
        if replay_command:
            lines.append(f"  replay: {replay_command}")
        return "\n".join(lines)


def _brief(v: Any) -> str:
    """A short rendering of a counterexample value for the text report."""
    if isinstance(v, dict):
        return json.dumps(v, separators=(",", ":"))
    if isinstance(v, list) and v and isinstance(v[0], list):
        whole = all(isinstance(x, int) and not isinstance(x, bool) for row in v if isinstance(row, list) for x in row)
        try:  # integers (token ids, positions) as integers
            a = np.array(v, dtype=np.int64 if whole else np.float64)
        except (TypeError, ValueError):  # not a rectangle of numbers (segments of a sequence): as JSON
            return json.dumps(v)
        return f"array{a.shape} " + np.array2string(a, precision=9, threshold=12, edgeitems=3, separator=", ",
                                                  max_line_width=10**6).replace("\n", "")
    return summarised(json.dumps(v))  # a long call's positions: their ends and count (whole in the JSON)


def jsonable(v: Any) -> Any:
    """A case's value as JSON can hold it (an expectation as its dict, arrays as lists)."""
    if isinstance(v, Expect):
        return v.to_dict()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    return v
