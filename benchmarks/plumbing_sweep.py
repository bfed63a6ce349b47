"""Every text model type of the installed transformers, its plumbing checked: the table docs/plumbing_sweep.md holds.

    python benchmarks/plumbing_sweep.py [-j 2 | --cluster local] [--profile sweep] [--only llama,qwen3] [--json PATH]

The text model types are every causal LM model type of transformers (AutoModelForCausalLM's mapping) and every
image-text-to-text model type whose text path turns by M-RoPE (its modeling code reads mrope sections or computes M-RoPE
position ids, get_rope_index), driven on its text path. Each is built tiny from its config class's defaults, written as
a config.json and checked through the config.json door a user has (``ropespec check config.json --family model``): its
RoPE, sliding window (shrunk to 4 keys) and layer types as its config class makes them, float64, every invariant of the
model family (padding, caches, chunks, canonical positions, state, length, packing, windows, drafts; a context shift and
shards where the model has them). A type whose modeling code has no RoPE, or never calls the rotary functions it
defines (hf_models' source tests), is said so without being built; one whose default config.json the reader refuses is
said with the reader's one line (what a user is told, exit 2); one the builder cannot make or run in float64 is said
with the builder's reason. Prints the summary line, the table (one row per model type), then the types not checked with
the reason each.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import sys
import tempfile
import time
import warnings
from datetime import date
from pathlib import Path

from verdict_time import machine  # benchmarks/: one way to name the machine

from ropespec import formats, report
from ropespec.cluster import Cluster, check_on_cluster
from ropespec.request import CheckRequest
from ropespec.results import CheckResult
from ropespec.scheduler import check_in_processes
from ropespec.spec.invariants import REGISTRY
from ropespec.spec.schema import ExpectationError
from ropespec.inputs import UsageError

#: the model family's invariants, in the spec's order: one column each
INVARIANTS = [i for i in REGISTRY if i.startswith("model.")]


def text_types() -> dict[str, str]:
    """Every text model type: model type -> "causal LM" or "M-RoPE text path"."""
    from transformers.models.auto import modeling_auto

    out = {t: "causal LM" for t in modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES}
    for t in modeling_auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES:
        if t not in out and _mrope(_source(t)):
            out[t] = "M-RoPE text path"
    return dict(sorted(out.items()))


def _mrope(source: str) -> bool:
    """Whether a modeling module's text path turns by M-RoPE: it reads mrope sections, or computes M-RoPE position ids
    (get_rope_index; a model whose language model is another type's, Cosmos 3 Omni's, has only this)."""
    return "mrope_section" in source or "get_rope_index" in source


def _source(model_type: str) -> str:
    """The source of the modeling module that defines the model type's model class (its causal LM, else its
    image-text-to-text model): its own module's, or another type's where transformers maps it there (EXAONE's and
    InternLM3's LlamaForCausalLM, Sarvam-MoE's Glm4MoeForCausalLM); "" where none is found."""
    from transformers.models.auto import modeling_auto

    name = (modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(model_type)
            or modeling_auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES.get(model_type))
    name = name[0] if isinstance(name, (list, tuple)) else name
    path = _defined().get(name)
    return path.read_text() if path else ""


def _text_source(text: dict) -> str:
    """The modeling source of a composite config's language model where its text config names another model type
    (Cosmos 3 Omni's qwen3_vl_text: the M-RoPE sections its text path reads are that module's); "" otherwise."""
    import transformers
    from transformers.models.auto.configuration_auto import model_type_to_module_name

    if not isinstance(text.get("model_type"), str):
        return ""
    module = model_type_to_module_name(text["model_type"])
    path = Path(transformers.__file__).parent / "models" / module / f"modeling_{module}.py"
    return path.read_text() if path.is_file() else ""


@functools.lru_cache(maxsize=None)
def _defined() -> dict[str, Path]:
    """Every class a modeling module of the installed transformers defines, by name -> that module's file (read, not
    imported)."""
    import transformers

    out: dict[str, Path] = {}
    for path in sorted((Path(transformers.__file__).parent / "models").glob("*/modeling_*.py")):
        for name in re.findall(r"^class (\w+)\(", path.read_text(), re.M):
            out.setdefault(name, path)
    return out


#: the share of an M-RoPE's pairs each axis (t, h, w) turns where the config class gives no sections (Qwen2-VL's
#: released [16, 24, 24] of 64 pairs)
SECTIONS = (1 / 4, 3 / 8, 3 / 8)


def sections(source: str, text: dict, params: dict) -> list[int]:
    """The M-RoPE sections a config class leaves out: its modeling code's own default (``rope_parameters.get(
    "mrope_section", [11, 11, 10])``) where it has one that covers its rotary pairs, else SECTIONS of its rotary pairs
    (head_dim x partial_rotary_factor / 2)."""
    head_dim = text.get("head_dim") or text["hidden_size"] // text["num_attention_heads"]
    factor = params.get("partial_rotary_factor") or text.get("partial_rotary_factor") or 1.0
    pairs = int(head_dim * factor) // 2
    for found in re.findall(r"""get\(\s*["']mrope_section["']\s*,\s*\[([\d,\s]+)\]""", source):
        own = [int(x) for x in found.split(",") if x.strip()]
        if own and sum(own) == pairs:
            return own
    out = [int(pairs * f) for f in SECTIONS]
    out[0] += pairs - sum(out)
    return out


def why_not_rope(model_type: str) -> str | None:
    """Why the model type is no RoPE model, read from its modeling module's source without importing it (None: it may
    be one, and the config.json door decides): no rotary code at all (hf_models' source test), or apply functions its
    attention never calls (hf_models' reason). An M-RoPE text path whose language model is another type's module
    (get_rope_index alone) is tried."""
    from ropespec.implementations.adapters import hf_models

    source = _source(model_type)
    if not source:
        return "no modeling module of transformers defines its model class"
    if not re.search(hf_models._ROPE_SOURCE, source, re.M) and "get_rope_index" not in source:
        return "no RoPE in its modeling code (not a RoPE model)"
    return hf_models._unused_applies(source)


def config_of(model_type: str, folder: Path) -> Path | str:
    """Its config class's defaults written as ``folder/<type>/config.json``, or the reason none can be."""
    from transformers import AutoConfig

    try:
        d = AutoConfig.for_model(model_type).to_dict()
    except Exception as e:  # noqa: BLE001
        return f"its config class cannot be made with its defaults ({type(e).__name__}: {str(e)[:120]})"
    d["model_type"] = model_type
    text = d.get("text_config") if isinstance(d.get("text_config"), dict) else d
    params = text.get("rope_parameters")
    source = _source(model_type) + _text_source(text)
    if "mrope_section" in source and isinstance(params, dict) and "mrope_section" not in params:
        params["mrope_section"] = sections(source, text, params)  # its modeling code reads sections the config
        # class does not give
    path = folder / model_type / "config.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(d, default=str))
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--cluster", help="a Ray head node's HOST:PORT, or local")
    ap.add_argument("--profile", default="sweep")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", help="comma-separated model types")
    ap.add_argument("--json", help="write the run's report (ropespec check --json's schema)")
    args = ap.parse_args()
    # each of the -j workers computes on one thread: a tiny model's ops are too small to share, and torch's threads
    # of two workers on two cores wait on each other (a whole battery took twice as long)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    warnings.filterwarnings("ignore")
    import transformers

    types = text_types()
    if args.only:
        types = {t: k for t, k in types.items() if t in args.only.split(",")}
    folder = Path(tempfile.mkdtemp(prefix="plumbing-sweep-"))
    said: dict[str, str] = {}  # model type -> why it is not checked
    requests, of_target = [], {}
    for t in types:
        why = why_not_rope(t)
        if why:
            said[t] = why
            continue
        path = config_of(t, folder)
        if isinstance(path, str):
            said[t] = path
            continue
        try:
            loaded = CheckRequest(targets=(str(path),), family="model", profile=args.profile,
                                  seed=args.seed).load_requests()
        except (UsageError, ExpectationError) as e:  # what a user would be told in one line, exit 2
            said[t] = f"its default config.json is refused: {e}"
            continue
        for r in loaded:
            requests.append(r)
            of_target[str(path)] = t
    t0 = time.perf_counter()
    seconds: dict[str, float] = {}
    first: dict[str, float] = {}

    def finished(rep):
        seconds[rep.impl.name] = (rep.impl.warmup_seconds or 0.0) + time.perf_counter() - first.pop(rep.impl.name, t0)
        print(f"{of_target.get(rep.impl.target, rep.impl.name)}: {report.counts_text(rep.results)}", file=sys.stderr,
              flush=True)

    def result(r):
        first.setdefault(r.implementation, time.perf_counter())

    shown = dict(on_result=result, on_implementation=finished)
    asked = CheckRequest(profile=args.profile, seed=args.seed, family="model")
    if args.cluster:
        with Cluster(args.cluster) as cluster:
            reports = check_on_cluster(cluster, requests, asked, **shown)
    else:
        reports = check_in_processes(requests, asked, jobs=args.j, **shown)
    took = time.perf_counter() - t0
    if args.json:
        with open(args.json, "w") as out:
            out.write(formats.json_text(CheckResult(reports, args.seed, args.profile)))
    rows = []
    for rep in reports:
        t = of_target[rep.impl.target]
        if not rep.checked:
            said[t] = f"not built here: {rep.why_unchecked()}"
            continue
        rows.append((t, rep))
    held = [t for t, rep in rows if not any(r.status in ("fail", "error") for r in rep.results)]
    command = "python benchmarks/plumbing_sweep.py " + " ".join(sys.argv[1:])
    print(f"`{command.strip()}`, transformers {transformers.__version__}, {date.today()}, {machine()}: "
          f"{len(types)} text model types, {len(rows)} checked, {len(held)} of them holding every invariant, "
          f"{len(rows) - len(held)} failing one or more, {len(said)} not checked; {len(requests)} implementations, "
          f"{took:.0f} s\n")
    short = [i.split(".", 1)[1] for i in INVARIANTS]
    print(f"| model type | expectation | {' | '.join(short)} | failed (word) | s |")
    print("|---|---|" + "---|" * len(short) + "---|---|")
    for t, rep in sorted(rows, key=lambda x: x[0]):
        by = {r.invariant: r for r in rep.results}
        cells = [cell(by.get(i)) for i in INVARIANTS]
        words = "; ".join(f"{r.invariant} [{r.diagnosis or r.status}]" for r in rep.results
                          if r.status in ("fail", "error"))
        expect = rep.impl.expect.describe() if rep.impl.expect else ""
        kind = "" if types[t] == "causal LM" else f" ({types[t]})"
        print(f"| {t}{kind} | {expect} | {' | '.join(cells)} | {words} | {seconds.get(rep.impl.name, 0.0):.1f} |")
    print("\nnot checked:\n")
    for t in sorted(said):
        print(f"- {t}: {said[t]}")


def cell(r) -> str:
    """held / fail / error / skip (the model has no such door, or its RoPE does not depend on the length)."""
    if r is None:
        return "not run"
    return {"pass": "held", "fail": "**fail**", "error": "**error**"}.get(r.status, "skip")


if __name__ == "__main__":
    main()
