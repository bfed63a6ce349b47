"""The invariant registry: every invariant the suite checks, stated once.

Each entry has a stable id (scripts and reports depend on it), the spec section it belongs to
(properties/test_<section>.py checks it) and a one-sentence statement. Properties name the id they
check; nothing else restates an invariant.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Invariant:
    id: str
    section: str
    statement: str


_ENTRIES = [
    Invariant(
        "rope.conformance",
        "conformance",
        "Each pair (x_a, x_b) of the rotary dims is rotated by the angle p * theta_i with "
        "theta_i = rope_theta^(-2i/rotary_dim), to within the error bound of the expectation's precision class.",
    ),
    Invariant(
        "rope.norm-per-pair",
        "rotation",
        "The rotation preserves the Euclidean norm of every pair: ||f(x, p)_pair|| = ||x_pair||.",
    ),
    Invariant(
        "rope.relative-position",
        "rotation",
        "Scores depend only on the position difference: <f(q, m), f(k, n)> = <f(q, m + s), f(k, n + s)>.",
    ),
    Invariant(
        "rope.identity-at-zero",
        "rotation",
        "At position 0 the encoding is the identity: f(x, 0) = x.",
    ),
    Invariant(
        "rope.composition",
        "rotation",
        "Rotations compose by adding positions: f(f(x, a), b) = f(x, a + b).",
    ),
    Invariant(
        "rope.linearity",
        "structure",
        "The encoding is linear in x: f(alpha x + beta y, p) = alpha f(x, p) + beta f(y, p).",
    ),
    Invariant(
        "rope.locality",
        "structure",
        "Each output pair depends only on its own input pair, under the expectation's pairing.",
    ),
    Invariant(
        "rope.partial-passthrough",
        "structure",
        "Dims at and beyond rotary_dim pass through bit-exactly unchanged.",
    ),
    Invariant(
        "contract.input-unmodified",
        "contract",
        "The caller's input array is not modified.",
    ),
    Invariant(
        "contract.deterministic",
        "contract",
        "The same input gives the same output, bit for bit.",
    ),
    Invariant(
        "contract.shape-finite",
        "contract",
        "The output has the input's array type, shape and dtype, and every value is finite.",
    ),
]

_ENTRIES += [
    Invariant(
        "scaling.bounded",
        "scaling",
        "Every scaled frequency lies between theta_i / s and theta_i (linear, ntk, yarn, llama3; dynamic at "
        "length l > L with its effective s l / L - (s - 1)), and a factor of 1 gives the default table (all but dynamic).",
    ),
    Invariant(
        "scaling.linear-positions",
        "scaling",
        "Linear scaling is position interpolation: f_linear(x, s q) = f(x, q) for the unscaled f.",
    ),
    Invariant(
        "scaling.ntk-endpoints",
        "scaling",
        "NTK-aware scaling keeps theta_0 and divides the lowest frequency by exactly s.",
    ),
    Invariant(
        "scaling.band-edges",
        "scaling",
        "YaRN and Llama 3 leave the pairs below their band unchanged, divide the pairs above it by s, and "
        "move monotonically from one to the other in between.",
    ),
    Invariant(
        "scaling.dynamic-length",
        "scaling",
        "Dynamic NTK computes the default table for sequence lengths up to its original length, and its "
        "frequencies only decrease as the length grows beyond it.",
    ),
    Invariant(
        "scaling.attention-factor",
        "scaling",
        "Every rotated pair comes out scaled by the attention factor: ||f(x, p)_pair|| = g ||x_pair|| "
        "(q and k each carry g, so logits carry g^2).",
    ),
    Invariant(
        "scaling.longrope-switch",
        "scaling",
        "LongRoPE uses the short factors for sequences up to its original length and the long factors beyond it.",
    ),
    Invariant(
        "decode.consistency",
        "decode",
        "Prefill followed by single-token steps yields the same rotated keys as a fresh pass over the whole "
        "sequence at every step.",
    ),
]

REGISTRY: dict[str, Invariant] = {inv.id: inv for inv in _ENTRIES}
assert len(REGISTRY) == len(_ENTRIES), "duplicate invariant id"

SECTIONS = tuple(dict.fromkeys(inv.section for inv in _ENTRIES))


def get(invariant_id: str) -> Invariant:
    try:
        return REGISTRY[invariant_id]
    except KeyError:
        raise KeyError(f"unknown invariant {invariant_id!r} (known: {', '.join(REGISTRY)})") from None
