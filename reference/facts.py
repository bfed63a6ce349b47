"""The figures the three seed tutorials (shared/seeds) quote, as facts computed by the reference.

Each fact states its parameters (found by reproducing the figure when the text does not give them),
the value the tutorial states, and computes it. A fact holds when the computed value rounds to the
stated one at the stated precision. Where the tutorial is wrong, ``correction`` says so and what is
right, and the fact checks the right value. Figures that depend on an interactive demo's hidden data
are marked ``demo_specific``: the phenomenon is reproduced with stated parameters, the number is not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from reference.encodings import sinusoidal_fast
from reference.rope import apply, thetas
from spec.expectation import Expect

SEEDS = {
    "000": "000_e099704d4a35ee33.txt (sinusoidal and toy encodings)",
    "001": "001_b883ddf7a4a489cf.txt",
    "004": "004_dc8565b0b929888b.txt",
}


@dataclass(frozen=True)
class Fact:
    id: str
    seed: str
    claim: str  # what the tutorial says, in English
    parameters: str
    stated: float
    decimals: int  # the precision the tutorial states the value to
    compute: Callable[[], float]
    correction: str | None = None
    demo_specific: bool = False  # the stated number depends on a demo's hidden data: only the phenomenon
    # (a value above zero, where the claim is that something differs or spreads) is checked

    def computed(self) -> float:
        return float(self.compute())

    def holds(self) -> bool:
        if self.demo_specific:
            return self.computed() > 1e-9
        return round(self.computed(), self.decimals) == round(self.stated, self.decimals)


def _th(d: int, base: float = 1e4) -> np.ndarray:
    return thetas(Expect(head_dim=d, rope_theta=base))


def _pe(p: int, d: int, base: float = 1e4) -> np.ndarray:
    """The paper's sinusoidal PE(p) (interleaved sin/cos)."""
    return sinusoidal_fast(Expect(head_dim=d, rope_theta=base, convention="interleaved"), [p])[0]


def _additive_spread(weight: float = 1.0, seed: int = 0, d: int = 32) -> float:
    """Spread of the score (x_m + P_m) W_Q . (x_n + P_n) W_K at gap 2 over starts 3, 10, 100, 4000."""
    rng = np.random.default_rng(seed)
    xq, xk = rng.standard_normal(d), rng.standard_normal(d)
    wq, wk = rng.standard_normal((d, d)) / math.sqrt(d), rng.standard_normal((d, d)) / math.sqrt(d)
    scores = [((xq + weight * _pe(m, d)) @ wq) @ ((xk + weight * _pe(m + 2, d)) @ wk) for m in (3, 10, 100, 4000)]
    return float(np.max(scores) - np.min(scores))


def _rope_spread(seed: int = 0, d: int = 32) -> float:
    rng = np.random.default_rng(seed)
    xq, xk = rng.standard_normal(d), rng.standard_normal(d)
    wq, wk = rng.standard_normal((d, d)) / math.sqrt(d), rng.standard_normal((d, d)) / math.sqrt(d)
    e = Expect(head_dim=d, dtype="float64", convention="interleaved")
    scores = []
    for m in (3, 10, 100, 4000):
        q = apply(e, (xq @ wq)[None], np.array([m]))[0]
        k = apply(e, (xk @ wk)[None], np.array([m + 2]))[0]
        scores.append(q @ k)
    return float(np.max(scores) - np.min(scores))


def _projected_gap_spread(seed: int = 0, d: int = 32, gap: int = 8) -> float:
    """Sinusoidal PE(p).PE(p + 8) after a random linear mix of the dims: no longer start-independent."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((d, d)) / math.sqrt(d)
    vals = [(_pe(p, d) @ w) @ (_pe(p + gap, d) @ w) for p in range(0, 512)]
    return float(np.max(vals) - np.min(vals))


FACTS = [
    Fact("sinusoidal.norm", "000", "||PE(p)|| = 4.00 at every p", "d = 32, base 1e4, p = 0 .. 4095", 4.00, 2,
         lambda: float(np.max([np.linalg.norm(_pe(p, 32)) for p in range(4096)]))),
    Fact("sinusoidal.period-0", "000", "pair 0 returns every 6.3 tokens", "d = 32, base 1e4", 6.3, 1,
         lambda: 2 * math.pi / _th(32)[0]),
    Fact("sinusoidal.period-7", "000", "pair 7 returns every 353 tokens", "d = 32, base 1e4", 353, 0,
         lambda: 2 * math.pi / _th(32)[7]),
    Fact("sinusoidal.period-15", "000", "pair 15 returns every 35333 tokens", "d = 32, base 1e4", 35333, 0,
         lambda: 2 * math.pi / _th(32)[15]),
    Fact("sinusoidal.no-full-turn", "000", "5 of 16 pairs do not complete a turn within a 2048-token window",
         "d = 32, base 1e4, window 2048", 5, 0, lambda: float(np.sum(2 * math.pi / _th(32) > 2048))),
    Fact("sinusoidal.gap-8", "000", "mean cos over pairs at gap 8 is 0.66, the same at any start",
         "d = 32, base 1e4; PE(p).PE(p+8) / (d/2)", 0.66, 2, lambda: float(np.mean(np.cos(8 * _th(32))))),
    Fact("sinusoidal.gap-1", "000", "mean cos over pairs at gap 1 is 0.96", "d = 32, base 1e4", 0.96, 2,
         lambda: float(np.mean(np.cos(1 * _th(32))))),
    Fact("toy.integer-index", "000", "the integer index encoding reaches 63 x the embedding scale at position 63",
         "PE(p) = p, embedding scale 1", 63, 0, lambda: 63.0),
    Fact("toy.normalised-8", "000", "slot 3 is 0.43 in an 8-token sequence", "PE(p) = p / (n - 1), n = 8", 0.43, 2,
         lambda: 3 / 7),
    Fact("toy.normalised-64", "000", "slot 3 is 0.05 in a 64-token sequence", "PE(p) = p / (n - 1), n = 64", 0.05, 2,
         lambda: 3 / 63),
    Fact("toy.binary-bit-3", "000", "bit 3 of the binary encoding repeats every 16 tokens (bit 0 every 2)",
         "PE(p) = bits of p", 16, 0, lambda: float(next(k for k in range(1, 64) if all(((p + k) >> 3 & 1) == (p >> 3 & 1) for p in range(64))))),
    Fact("toy.binary-flip", "000", "01111 -> 10000 flips 5 bits", "15 -> 16", 5, 0, lambda: float(bin(15 ^ 16).count("1"))),
    Fact("learned.gpt2", "000", "GPT-2 small's table: 1024 x 768 = 786432 parameters", "max_len 1024, d 768", 786432, 0,
         lambda: 1024 * 768),
    Fact("learned.32k", "000", "32768 positions cost 25165824 parameters", "max_len 32768, d 768", 25165824, 0,
         lambda: 32768 * 768),
    Fact("rope.turn-pair-0", "004", "at position 32 pair 0 has turned 32.0 rad (5 full turns)", "d = 32, base 1e4",
         32.0, 1, lambda: 32 * _th(32)[0]),
    Fact("rope.turn-pair-7", "004", "at position 32 pair 7 has turned 0.569 rad", "d = 32, base 1e4", 0.569, 3,
         lambda: 32 * _th(32)[7]),
    Fact("rope.decay-1e4", "004", "the score at gap 64 decays to 0.54 (base 1e4)",
         "d = 32, q = k, mean over pairs of cos(64 theta_i)", 0.54, 2, lambda: float(np.mean(np.cos(64 * _th(32))))),
    Fact("rope.decay-5e5", "004", "and to 0.67 with base 5e5", "d = 32, base 5e5", 0.67, 2,
         lambda: float(np.mean(np.cos(64 * _th(32, 5e5))))),
    Fact("rope.pairing-ratio", "004", "d = 16: slot 5 turns at theta_2 in one pairing and theta_5 in the other, 31.6x apart",
         "d = 16, base 1e4, interleaved vs half", 31.6, 1, lambda: _th(16)[2] / _th(16)[5]),
    Fact("rope.pi-pair-4", "004", "position interpolation: pair 4 reads 204.8 rad at 8192 instead of 819.2",
         "d = 32, base 1e4, trained 2048, asked 8192, scale 4", 204.8, 1, lambda: 8192 * _th(32)[4] / 4),
    Fact("rope.pi-pair-4-raw", "004", "... instead of 819.2 rad", "d = 32, base 1e4, position 8192", 819.2, 1,
         lambda: 8192 * _th(32)[4]),
    Fact("rope.cost-share", "004", "a Llama-3-8B layer: 3 x (4096 + 1024) = 15360 RoPE operations vs 83.9M for the "
         "four projections, 0.018%", "d_model 4096, kv 1024; projections counted as 2 flops per weight", 0.018, 3,
         lambda: 100 * 3 * (4096 + 1024) / (2 * (4096 * 4096 * 2 + 4096 * 1024 * 2))),
    Fact("rope.worked-fast", "001", "d_model = 4 at position 1: the fast pair turns 1 rad = 57.30 degrees",
         "d = 4, base 1e4, position 1", 57.30, 2, lambda: math.degrees(1 * _th(4)[0]),
         correction="one tutorial says 'about 54 degrees': 1 rad is 57.2958 degrees"),
    Fact("rope.worked-slow", "001", "and the slow pair 0.573 degrees", "d = 4, base 1e4, position 1", 0.573, 3,
         lambda: math.degrees(1 * _th(4)[1])),
    Fact("rope.ntk-simplified", "004", "the NTK-aware base for scale 4 quoted as 40000", "base 1e4, s = 4: base x s",
         40000, 0, lambda: 1e4 * 4,
         correction="40000 is the simplification base x s; the NTK-aware base is base s^(d/(d-2)) = 40890 at d = 128"),
    Fact("rope.ntk-exact", "004", "base s^(d/(d-2)) = 40890 at d = 128", "base 1e4, s = 4, d = 128", 40890, 0,
         lambda: 1e4 * 4 ** (128 / 126)),
    *(Fact(f"rope.first-turn-gap-{g}", "004", f"64 dims: {want} pairs are still inside their first turn at gap {g}",
           f"d = 64, base 1e4, gap {g}", want, 0, (lambda g=g: float(np.sum(g * _th(64) < 2 * math.pi))))
      for g, want in ((1, 32), (10, 30), (100, 22), (1000, 14), (10000, 6))),
    Fact("rope.gap-2-identical", "004", "gap 2 at starts 3, 10, 100, 4000: RoPE scores identical",
         "d = 32, seed 0, W_Q, W_K standard normal / sqrt(d); spread = max - min of the four scores", 0.0, 9,
         _rope_spread),
    Fact("additive.gap-2-spread", "004", "... while additive-encoding scores differ",
         "d = 32, seed 0, sinusoidal PE added with weight 1, same projections; spread of the four scores",
         float("nan"), 0, _additive_spread, demo_specific=True),
    Fact("sinusoidal.projected-spread", "000", "after a projection mixes the dims, the gap-8 dot product spreads "
         "(the tutorial's demo: 0.48)", "d = 32, seed 0, W standard normal / sqrt(d), starts 0 .. 511", 0.48, 2,
         _projected_gap_spread, demo_specific=True),
]

BY_ID = {f.id: f for f in FACTS}
