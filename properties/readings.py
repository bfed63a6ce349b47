"""A library's reading of a config.json, measured: the RoPE it builds from the file, called as a model calls it, against
the reference reading's expectation and against each other reading of the file (:mod:`ropespec.spec.readings`).

The library agrees where its RoPE holds under the reference reading on every probe. Where it does not, the word is the
one of the other readings under which it holds on every probe, when those readings share one word; where readings of
two words hold, or none, no word is given (the numbers are). A probe is a call as a model makes it: a prefill of a few
tokens from 0, and decoding steps (one row per head) at 1, 2, around the original length and at the largest position,
compared to the reference of each reading within its float32 bound (:func:`ropespec.properties.numerics.output_bound`).
Pairs that the reference writes elsewhere but turns alike (rope_interleave written in place: interleaved) are the same
reading: attention scores do not see where q and k write their pairs, when both write them alike.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from ropespec.properties.numerics import exact, output_bound
from ropespec.reference import rope as reference
from ropespec.spec import scaling, tolerance
from ropespec.spec.expectation import Expect
from ropespec.spec.schema import CONVENTIONS
from ropespec.spec.readings import Reading, readings

#: tokens of the prefill probe, and rows (heads) of each decoding step
PREFILL = 8
HEADS = 4


@dataclass
class Measured:
    """What one library's RoPE for one config computes, against the reference reading."""

    agrees: bool
    word: str | None = None  # the field read otherwise (:data:`ropespec.spec.readings.WORDS`), where one is shown
    holds_under: list[str] = field(default_factory=list)  # what each other reading it holds under reads
    words: list[str] = field(default_factory=list)  # the words of those readings (one, where the word is given)
    pairs_off: int = 0  # pairs outside the reference's bound on some probe
    n_pairs: int = 0
    freq_error: float = 0.0  # largest |theta_lib / theta_ref - 1| over the pairs, measured at position 1
    magnitude: float = 1.0  # median norm of a turned pair of norm 1, at position 1
    expected_magnitude: float = 1.0
    output_error: float = 0.0  # largest ||y - y_ref|| / ||x|| at the largest position (the model door: of the logits)
    output_bound: float = float("nan")  # what the reference reading's bound allows there, in the same measure
    largest: int = 0
    probes: list[int] = field(default_factory=list)  # the decoding steps' positions

    def to_dict(self) -> dict:
        return asdict(self)


def decode_positions(e: Expect) -> list[int]:
    """The decoding steps' positions: 1, 2, each side of the original length where the method has one, the largest."""
    top = e.max_position
    at = {1, 2, top - 1}
    if e.rope_scaling and "original_max_position_embeddings" in e.method.keys:
        L = scaling.original_length(e)
        at |= {L - 1, L, L + 1}
    return sorted(p for p in at if 0 <= p < top)


def _calls(e: Expect, rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    calls = [(rng.standard_normal((PREFILL, e.head_dim)).astype(np.float32), np.arange(PREFILL))]
    for p in decode_positions(e):
        calls.append((rng.standard_normal((HEADS, e.head_dim)).astype(np.float32), np.full(HEADS, p)))
    return calls


def _alike(e: Expect) -> list[Expect]:
    """``e`` and the expectations that turn the same input pairs and write them elsewhere."""
    out = [e]
    for c in CONVENTIONS:
        if c != e.convention:
            other = e.replace(convention=c)
            if other.pairs() == e.pairs():
                out.append(other)
    return out


def _holds(e: Expect, outputs) -> bool:
    for x, pos, y in outputs:
        ref, own = exact(e, x, pos, fast=True)
        bound = output_bound(e, x, pos) + own
        if y is None or y.shape != ref.shape or not np.all(np.abs(y - ref) <= bound):
            return False
    return True


def _holds_alike(e: Expect, outputs) -> Expect | None:
    return next((c for c in _alike(e) if _holds(c, outputs)), None)


def measure(f, e: Expect, seed: int = 0) -> Measured:
    """``f`` (a library's door "rope") against the reference reading ``e`` and every other reading of its config."""
    e = e.replace(dtype="float32")
    rng = np.random.default_rng(seed)
    outputs = [(x, pos, np.asarray(f(x, pos), dtype=np.float64)) for x, pos in _calls(e, rng)]
    out = Measured(agrees=False, n_pairs=e.n_pairs, largest=e.max_position - 1, probes=decode_positions(e))
    matched = _holds_alike(e, outputs)
    layout = matched or e
    if matched is None:
        held: list[tuple[Reading, Expect]] = []
        for r in readings(e):
            c = _holds_alike(r.expect, outputs)
            if c is not None:
                held.append((r, c))
        out.holds_under = [r.what for r, _ in held]
        out.words = sorted({r.word for r, _ in held})
        out.word = out.words[0] if len(out.words) == 1 else None
        if held:
            layout = e.replace(convention=held[0][1].convention)
    else:
        out.agrees = True
    _numbers(f, e, layout, outputs, out)
    return out


def _numbers(f, e: Expect, layout: Expect, outputs, out: Measured) -> None:
    """Pairs off, frequencies and magnitude at position 1, and the error at the largest position, against ``e``
    written as ``layout`` writes its pairs."""
    a, b = (np.array(ix) for ix in zip(*layout.pairs()))
    oa, ob = (np.array(ix) for ix in zip(*layout.out_pairs()))
    off = np.zeros(e.n_pairs, dtype=bool)
    for x, pos, y in outputs:
        ref, own = exact(layout, x, pos, fast=True)
        bad = ~(np.abs(y - ref) <= output_bound(layout, x, pos) + own)
        off |= bad[:, oa].any(axis=0) | bad[:, ob].any(axis=0)
        if pos[0] == e.max_position - 1 and pos[0] == pos[-1]:
            norms = np.linalg.norm(x, axis=1)
            out.output_error = float(np.max(np.linalg.norm(y - ref, axis=1) / norms))
            out.output_bound = float(np.max(np.linalg.norm(output_bound(layout, x, pos) + own, axis=1) / norms))
    out.pairs_off = int(off.sum())
    x = np.zeros((HEADS, e.head_dim), dtype=np.float32)
    x[:, a] = 1.0  # every pair (1, 0): it comes out as g (cos phi, sin phi)
    y = np.asarray(f(x, np.full(HEADS, 1)), dtype=np.float64)[0]
    phi = np.arctan2(y[ob], y[oa]) * (1 if e.direction == "forward" else -1)
    want = reference.thetas(e, seq_len=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(want > 0, np.abs(phi / want - 1), np.abs(phi))
    out.freq_error = float(np.max(rel))
    out.magnitude = float(np.median(np.hypot(y[oa], y[ob])))
    out.expected_magnitude = float(reference.attention_factor(e))


#: the model door's calls: a prefill of PROMPT tokens from 0, and a chunk of CHUNK tokens ending at the largest position
PROMPT = 64
CHUNK = 16


def _table(e: Expect):
    """A rotary embedding module computing the reference table of ``e`` (cos and sin of each pair's angle, times the
    attention factor, in the half layout a Llama's apply function takes), put in a carrier model's place."""
    import torch

    class Table(torch.nn.Module):
        def forward(self, x, position_ids, *args, **kwargs):
            pos = position_ids[0].numpy().astype(np.float64)
            th = reference.thetas(e, seq_len=int(pos.max()) + 1)
            g = reference.attention_factor(e)
            angle = pos[:, None] * th[None, :]
            cos = np.concatenate([np.cos(angle)] * 2, axis=-1) * g
            sin = np.concatenate([np.sin(angle)] * 2, axis=-1) * g
            as_x = dict(dtype=x.dtype, device=x.device)
            return torch.tensor(cos, **as_x)[None], torch.tensor(sin, **as_x)[None]

    return Table()


def _reference_logits(model, e: Expect, tokens, positions) -> np.ndarray:
    import torch

    kept = model.model.rotary_emb
    model.model.rotary_emb = _table(e)
    try:
        with torch.no_grad():
            out = model(torch.tensor([list(tokens)]), position_ids=torch.tensor([list(positions)]))
            return out.logits[0].double().numpy()
    finally:
        model.model.rotary_emb = kept


#: the longest prefill a library whose calls start at 0 is given (to cross an original length up to it)
LONGEST_PREFILL = 8192


def model_calls(e: Expect, vocab: int, seed: int = 0, from_zero: bool = False) -> list[tuple[np.ndarray, np.ndarray]]:
    """(tokens, positions) of the model door's calls: a prefill from 0, then a chunk ending at the largest position;
    where the library's calls start at 0 (``from_zero``), instead a prefill past the original length where the table
    changes there (LongRoPE's switch, dynamic's growth) and that length is at most LONGEST_PREFILL."""
    rng = np.random.default_rng(seed)
    top = e.max_position
    calls = [(rng.integers(4, vocab, PROMPT), np.arange(PROMPT))]
    if not from_zero:
        chunk = min(CHUNK, top)
        return calls + [(rng.integers(4, vocab, chunk), np.arange(top - chunk, top))]
    if e.method.length_dependent:
        n = min(scaling.original_length(e) + CHUNK, top)
        if PROMPT < n <= LONGEST_PREFILL:
            calls.append((rng.integers(4, vocab, n), np.arange(n)))
    return calls


def measure_model(logits_of, model, e: Expect, seed: int = 0, from_zero: bool = False) -> Measured:
    """A library's door "model" (``logits_of(tokens, positions)``) against the carrier ``model`` (transformers, the
    same weights) turned by the reference table of the reading ``e``, and of every other reading, within
    :func:`ropespec.spec.tolerance.model_offset_bound` at the call's largest position."""
    e = e.replace(dtype="float32", convention="half")
    calls = model_calls(e, model.config.vocab_size, seed, from_zero)
    got = [(tokens, pos, logits_of(tokens, pos)) for tokens, pos in calls]

    def holds(x: Expect) -> bool:
        for tokens, pos, y in got:
            ref = _reference_logits(model, x, tokens, pos)
            if not np.all(np.abs(y - ref) <= tolerance.model_offset_bound(x, ref, int(pos.max()))):
                return False
        return True

    out = Measured(agrees=holds(e), n_pairs=e.n_pairs, largest=int(calls[-1][1][-1]),
                   probes=[int(c[1][0]) for c in calls], pairs_off=-1, freq_error=float("nan"),
                   magnitude=float("nan"), expected_magnitude=float(reference.attention_factor(e)))
    tokens, pos, y = got[-1]
    ref = _reference_logits(model, e, tokens, pos)
    out.output_error = float(np.max(np.abs(y - ref)))
    out.output_bound = tolerance.model_offset_bound(e, ref, int(pos.max()))
    if not out.agrees:
        held = [r for r in readings(e) if holds(r.expect.replace(convention="half"))]
        out.holds_under = [r.what for r in held]
        out.words = sorted({r.word for r in held})
        out.word = out.words[0] if len(out.words) == 1 else None
    return out
