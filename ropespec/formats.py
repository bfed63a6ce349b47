"""The run's machine-readable reports: ``--json`` (strict JSON, non-finite numbers as strings) and ``--junit``
(JUnit XML that any message an implementation prints leaves valid)."""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET

from ropespec.replay import replay_text
from ropespec.report import result_label, shown_results


def strict(v):
    """JSON without Infinity/NaN tokens: a non-finite number is written as the string "Infinity",
    "-Infinity" or "NaN"."""
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if v != v else ("Infinity" if v > 0 else "-Infinity")
    if isinstance(v, dict):
        return {k: strict(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [strict(x) for x in v]
    return v


def to_json(result) -> dict:
    """The --json document of a :class:`ropespec.api.CheckResult`."""
    return {
        "passed": result.passed,
        "interrupted": result.interrupted,
        "stopped": result.stopped,
        "error": result.error,
        "checks_finished": result.finished,
        "seed": result.seed,
        "profile": result.profile,
        "resumed_from": result.resumed_from,
        "request": result.request.to_json() if result.request is not None else None,
        "implementations": [rep.to_json() for rep in result.reports],
    }


def json_text(result) -> str:
    """The --json file's text: strict JSON (non-finite numbers as strings)."""
    return json.dumps(strict(to_json(result)), indent=2, allow_nan=False) + "\n"


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: str) -> str:
    """Text XML 1.0 can hold: characters it forbids (control characters, lone surrogates) as \\xNN."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def junit_text(result) -> str:
    """JUnit XML: a testsuite per implementation (in a configuration matrix, named by its configuration and carrying
    it as properties), a testcase per property (skips and failures marked); an
    interrupted or stopped run says so on the root (``interrupted``, ``stopped``, ``error``). Whatever the implementation's
    messages hold, the text is valid XML."""
    root = ET.Element("testsuites", name="ropespec", passed=str(result.passed).lower())
    if result.interrupted:
        root.set("interrupted", result.interrupted)
    if result.stopped:
        root.set("stopped", _xml(result.stopped))
    if result.error:
        root.set("error", _xml(result.error))
    for rep in result.reports:
        shown = shown_results(rep)
        suite = ET.SubElement(root, "testsuite", name=rep.impl.name, tests=str(len(shown)),
                              failures=str(sum(r.status == "fail" for r in shown)),
                              errors=str(sum(r.status == "error" for r in shown)),
                              skipped=str(sum(r.status == "skip" for r in shown)))
        if rep.impl.configuration:  # its place in a configuration matrix, as JUnit readers show a suite's properties
            props = ET.SubElement(suite, "properties")
            for key, value in rep.impl.configuration.items():
                ET.SubElement(props, "property", name=key, value=_xml(str(value)))
        for r in shown:
            case = ET.SubElement(suite, "testcase", classname=rep.impl.name, name=result_label(r))
            if r.status == "fail":
                el = ET.SubElement(case, "failure", message=_xml((f"[{r.diagnosis}] " if r.diagnosis else "")
                                                                 + r.message[:500]), type=r.diagnosis or "fail")
                el.text = _xml(r.explain(replay_text(rep.impl, r), expect_words=rep.impl.expect_words))
            elif r.status == "error":
                ET.SubElement(case, "error", message=_xml(r.message[:500])).text = _xml(r.message)
            elif r.status == "skip":
                ET.SubElement(case, "skipped", message=_xml(r.message[:500]))
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
