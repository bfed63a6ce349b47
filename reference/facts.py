"""The figures the three seed tutorials (``docs/seeds``) quote, as facts computed by the reference.

Each fact quotes the tutorial verbatim (``quote``), names the number it states (``stated``, None
where the number is the project's own: then ``quote`` is what the number is about), the parameters
(those the tutorial does not give are listed in ``assumed``) and computes the value. A fact holds when
the computed value rounds to the value it checks at the stated precision: the stated one, or, where
the tutorial is wrong, the right one (``expected``, with ``correction`` saying what is wrong). Figures
that depend on an interactive demo's hidden data are ``demo_specific``: the phenomenon is reproduced
with stated parameters, the number is not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ropespec.reference.encodings import sinusoidal_fast
from ropespec.reference.rope import apply, attention_factor, thetas
from ropespec.spec.expectation import Expect

SEEDS = {
    "000": "000_e099704d4a35ee33.txt (interactive: sinusoidal, toy, learned and RoPE encodings, their costs)",
    "001": "001_b883ddf7a4a489cf.txt (a survey chapter: sinusoidal, learned, RoPE, PI, NTK, YaRN)",
    "004": "004_dc8565b0b929888b.txt (RoPE from the dot product, and its lab)",
}

Value = float | tuple


@dataclass(frozen=True)
class Fact:
    id: str
    seed: str
    quote: str  # the tutorial's words, verbatim
    claim: str  # what is checked, in English
    parameters: str
    stated: Value | None  # the tutorial's number (None: the number is the project's own)
    decimals: int  # the precision the value is checked to
    compute: Callable[[], Value]
    correction: str | None = None
    expected: Value | None = None  # the right value, where the tutorial's is wrong or absent
    assumed: str = ""  # parameters the tutorial does not state
    demo_specific: bool = False  # the number depends on a demo's hidden data: only the phenomenon
    # (a value above zero, where the claim is that something differs or spreads) is checked

    def computed(self) -> Value:
        """The reference's value, computed once per fact (the rendered spec reads it twice)."""
        if self.id not in _COMPUTED:
            v = self.compute()
            _COMPUTED[self.id] = tuple(float(x) for x in v) if isinstance(v, (tuple, list, np.ndarray)) else float(v)
        return _COMPUTED[self.id]

    @property
    def checked(self) -> Value:
        return self.expected if self.expected is not None else self.stated

    def holds(self) -> bool:
        got = self.computed()
        if self.demo_specific:
            return got > 1e-9
        want = self.checked
        if isinstance(want, tuple):
            return len(got) == len(want) and all(round(a, self.decimals) == round(b, self.decimals) for a, b in zip(got, want))
        return round(got, self.decimals) == round(want, self.decimals)


def _th(d: int, base: float = 1e4) -> np.ndarray:
    return thetas(Expect(head_dim=d, rope_theta=base))


#: each fact's computed value, by id: a fact's value does not change within a process
_COMPUTED: dict[str, Value] = {}


def _pes(ps, d: int, base: float = 1e4) -> np.ndarray:
    """The paper's sinusoidal PE(p) (interleaved sin/cos) of every p of ``ps``, in one call: (len(ps), d)."""
    return sinusoidal_fast(Expect(head_dim=d, rope_theta=base, convention="interleaved"), list(ps))


def _pe(p: int, d: int, base: float = 1e4) -> np.ndarray:
    """The paper's sinusoidal PE(p) (interleaved sin/cos)."""
    return _pes([p], d, base)[0]


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
    ps = np.arange(0, 512)
    vals = np.einsum("pi,pi->p", _pes(ps, d) @ w, _pes(ps + gap, d) @ w)
    return float(np.max(vals) - np.min(vals))


def _ntk_slowdown(pair: int, d: int = 128, s: float = 4, base: float = 1e4) -> float:
    """How many times slower pair ``pair`` turns with the tutorial's NTK base (base x s) than without."""
    return float(_th(d, base)[pair] / _th(d, base * s)[pair])


def _yarn(s: float = 4, d: int = 128, L: int = 2048) -> Expect:
    return Expect(head_dim=d, rope_scaling={"rope_type": "yarn", "factor": s, "original_max_position_embeddings": L},
                  max_position=int(s * L))


FACTS = [
    # -- seed 000 -----------------------------------------------------------------------------------------
    Fact("sinusoidal.norm", "000", "看 ‖PE(p)‖ 无论滑块拖到哪儿都停在 4.00：每一对槽位都是单位圆上的一个点，十六对加起来长度恒为 4",
         "||PE(p)|| = 4.00 at every p", "d = 32 (sixteen pairs), base 1e4", 4.00, 2,
         lambda: float(np.max(np.linalg.norm(_pes(range(4096), 32), axis=1))), assumed="p = 0 .. 4095 sampled"),
    Fact("sinusoidal.period-0", "000", "第 0 对每个 token 转 1.000 弧度，所以每 6.3 个 token 转回原处",
         "pair 0 returns every 6.3 tokens", "base 1e4", 6.3, 1, lambda: 2 * math.pi / _th(32)[0], assumed="d = 32"),
    Fact("sinusoidal.period-7", "000", "第 7 对要 353 个", "pair 7 returns every 353 tokens", "base 1e4 (论文用的底数 10000)",
         353, 0, lambda: 2 * math.pi / _th(32)[7], assumed="d = 32 (the sixteen pairs of the norm figure)"),
    Fact("sinusoidal.period-15", "000", "这把梯子从第 0 对的 6.3 个 token 一路到第 15 对的 35333 个",
         "pair 15 returns every 35333 tokens", "d = 32 (pair 15 is the last of sixteen), base 1e4", 35333, 0,
         lambda: 2 * math.pi / _th(32)[15]),
    Fact("sinusoidal.no-full-turn", "000", "十六级里有五级落在训练窗口之上，在里面转不满一圈",
         "5 of 16 pairs do not complete a turn within the training window", "d = 32, base 1e4", 5, 0,
         lambda: float(np.sum(2 * math.pi / _th(32) > 2048)), assumed="window 2048"),
    Fact("sinusoidal.gap-8", "000", "间隔为 8 时，不论这两刀落在哪里，读数都是 0.66",
         "mean cos over pairs at gap 8 is 0.66, the same at any start", "PE(p).PE(p+8) / (d/2), base 1e4", 0.66, 2,
         lambda: float(np.mean(np.cos(8 * _th(32)))), assumed="d = 32"),
    Fact("sinusoidal.gap-1", "000", "正弦曲线在间隔 1 处是 0.96", "mean cos over pairs at gap 1 is 0.96", "base 1e4", 0.96, 2,
         lambda: float(np.mean(np.cos(1 * _th(32)))), assumed="d = 32"),
    Fact("sinusoidal.projected-spread", "000", "混合到 1.00 时，间隔为 8 处的离散度是 0.48",
         "after a projection mixes the dims, the gap-8 dot product spreads", "gap 8", 0.48, 2, _projected_gap_spread,
         assumed="d = 32, seed 0, W standard normal / sqrt(d), starts 0 .. 511", demo_specific=True),
    Fact("toy.integer-index", "000", "到位置 63的时候，编码已经是它所加之物的六十三倍",
         "the integer index encoding reaches 63 x the embedding scale at position 63", "PE(p) = p, embedding scale about 1",
         63, 0, lambda: 63.0),
    Fact("toy.normalised-8", "000", "注意槽位 3 在8 个 token 的序列里是 0.43", "slot 3 is 0.43 in an 8-token sequence",
         "PE(p) = p / (n - 1), n = 8", 0.43, 2, lambda: 3 / 7, assumed="the normalisation p / (n - 1)"),
    Fact("toy.normalised-64", "000", "在 64 个 token 的序列里是 0.05", "slot 3 is 0.05 in a 64-token sequence",
         "PE(p) = p / (n - 1), n = 64", 0.05, 2, lambda: 3 / 63, assumed="the normalisation p / (n - 1)"),
    Fact("toy.binary-bit-3", "000", "第 0 位每 2 个 token 翻一次，第 3 位每 16 个翻一次",
         "bit 3 of the binary encoding repeats every 16 tokens (bit 0 every 2)", "PE(p) = bits of p", 16, 0,
         lambda: float(next(k for k in range(1, 64) if all(((p + k) >> 3 & 1) == (p >> 3 & 1) for p in range(64))))),
    Fact("toy.binary-flip", "000", "01111 走到 10000 一次翻掉五位", "01111 -> 10000 flips 5 bits", "15 -> 16", 5, 0,
         lambda: float(bin(15 ^ 16).count("1"))),
    Fact("learned.gpt2", "000", "GPT-2 small 为位置分配了 1024 × 768 = 786432 个参数",
         "GPT-2 small's table: 1024 x 768 = 786432 parameters", "max_len 1024, d 768", 786432, 0, lambda: 1024 * 768),
    Fact("learned.32k", "000", "到32768 就是 25165824 个", "32768 positions cost 25165824 parameters", "max_len 32768, d 768",
         25165824, 0, lambda: 32768 * 768),
    Fact("rope.turn-pair-0", "000", "在位置 32上，第 0 对已经转了 32.0 弧度 —— 整整五圈",
         "at position 32 pair 0 has turned 32.0 rad (5 full turns)", "base 1e4", 32.0, 1, lambda: 32 * _th(32)[0],
         assumed="d = 32"),
    Fact("rope.turn-pair-7", "000", "而第 7 对才走了 0.569", "at position 32 pair 7 has turned 0.569 rad", "base 1e4",
         0.569, 3, lambda: 32 * _th(32)[7], assumed="d = 32"),
    Fact("rope.decay-1e4", "000", "间隔 64 的分数在底数 10000 时是 0.54", "the score at gap 64 decays to 0.54 (base 1e4)",
         "q = k, mean over pairs of cos(64 theta_i)", 0.54, 2, lambda: float(np.mean(np.cos(64 * _th(32)))), assumed="d = 32"),
    Fact("rope.decay-5e5", "000", "在底数 500000时是 0.67", "and to 0.67 with base 5e5", "base 5e5", 0.67, 2,
         lambda: float(np.mean(np.cos(64 * _th(32, 5e5)))), assumed="d = 32"),
    Fact("rope.convention-ratio", "000", "到槽位 5，一种约定给它 θ2，另一种给 θ5 —— 慢了三十倍的频率",
         "slot 5 turns at theta_2 in one convention and theta_5 in the other", "base 1e4", 30, 2,
         lambda: _th(16)[2] / _th(16)[5], expected=31.62, assumed="d = 16 (the figure's eight sines and eight cosines)",
         correction="'thirty times' is 31.62 at d = 16; at d = 32, the d of the tutorial's other figures (sixteen pairs, "
                    "norm 4), theta_2 / theta_5 is 5.62"),
    Fact("rope.pi-pair-4", "000", "在缩放 4上，第 4 对读出的是 204.8 弧度而不是 819.2",
         "position interpolation: pair 4 reads 204.8 rad at 8192 instead of 819.2", "scale 4, position 8192, base 1e4",
         204.8, 1, lambda: 8192 * _th(32)[4] / 4, assumed="d = 32, trained 2048"),
    Fact("rope.pi-pair-4-raw", "000", "而不是 819.2", "... instead of 819.2 rad", "position 8192, base 1e4", 819.2, 1,
         lambda: 8192 * _th(32)[4], assumed="d = 32"),
    Fact("rope.cost-share", "000", "Llama-3-8B 的一层花 3 × (4096 + 1024) = 15360 次，对上四个投影矩阵的 8390 万次 —— 占 0.018%",
         "RoPE's share of a Llama-3-8B layer's operations is 0.018%", "d_model 4096, kv 1024", 0.018, 3,
         lambda: 100 * 3 * (4096 + 1024) / (2 * (4096 * 4096 * 2 + 4096 * 1024 * 2)),
         assumed="projections counted as 2 operations per weight (83.9M)"),
    # -- seed 001 -----------------------------------------------------------------------------------------
    Fact("sinusoidal.fastest-pair", "001", "秒针：转得很快，频率高（对应高维度，$2i$很大）",
         "which pair turns fastest (the index i of the largest theta_i)", "theta_i = 10000^(-2i/d_model)", None, 0,
         lambda: float(np.argmax(_th(16))), expected=0.0, assumed="d_model = 16",
         correction="reversed: theta_i falls with i, so dims 0 and 1 (2i = 0) turn fastest, the 'second hand'; large 2i "
                    "is the slow 'hour hand'"),
    Fact("sinusoidal.dmodel-4", "001", "假设 $d_{\\text{model}}=4$（简化），我们计算前3个位置的位置编码",
         "PE(1) at d_model = 4: (sin 1, cos 1, sin 0.01, cos 0.01) (PE(0) = (0, 1, 0, 1); the tutorial's values were "
         "formulas not kept in its text)", "d_model = 4, base 10000, pos = 1", None, 4,
         lambda: tuple(_pe(1, 4)), expected=(0.8415, 0.5403, 0.0100, 1.0000)),
    Fact("sinusoidal.dmodel-4-pos-2", "001", "位置 pos=2：", "PE(2) at d_model = 4: (sin 2, cos 2, sin 0.02, cos 0.02)",
         "d_model = 4, base 10000, pos = 2", None, 4, lambda: tuple(_pe(2, 4)), expected=(0.9093, -0.4161, 0.0200, 0.9998)),
    Fact("rope.worked-fast", "001", "第0-1维（高频）：旋转了约54度，变化明显",
         "d_model = 4 at position 1: the fast pair turns 1 rad", "d = 4, base 1e4, position 1", 54, 2,
         lambda: math.degrees(1 * _th(4)[0]), expected=57.30, correction="1 rad is 57.30 degrees, not about 54"),
    Fact("rope.worked-slow", "001", "第2-3维（低频）：只旋转了约0.57度，几乎不变", "and the slow pair 0.57 degrees",
         "d = 4, base 1e4, position 1", 0.57, 2, lambda: math.degrees(1 * _th(4)[1])),
    Fact("rope.pi-4096", "001", "推理时位置4096 → 压缩为 $4096\\times (2048\\mathrm{/}8192)=1024$",
         "with position interpolation at scale 4, position 4096 turns every pair as position 1024 did", "trained 2048, "
         "asked 8192 (scale 4)", 1024, 6, lambda: 4096 * thetas(Expect(head_dim=32, rope_scaling={"rope_type": "linear",
                                                                                                     "factor": 4.0}))[3] / _th(32)[3],
         assumed="d = 32, read at pair 3"),
    Fact("rope.ntk-simplified", "001", "基数从10000变为40000", "the NTK-aware base for scale 4", "base 1e4, s = 4",
         40000, 0, lambda: 1e4 * 4 ** (128 / 126), expected=40890, assumed="d = 128",
         correction="40000 is the simplification base x s; NTK-aware scaling's base is base s^(d/(d-2)) = 40890 at d = 128"),
    Fact("rope.ntk-slower", "001", "旋转速度降低4倍，适配4倍长的序列",
         "with the tutorial's base 40000, the lowest pair turns 3.91 x slower", "base 1e4 -> 4e4", 4, 2,
         lambda: _ntk_slowdown(63), expected=3.91, assumed="d = 128",
         correction="not every pair slows 4 x: pair 0 is unchanged (theta_0 = 1 at any base), the lowest pair slows "
                    "4^(126/128) = 3.91 x, the pairs between less"),
    Fact("rope.base-pair-0", "001", "基数从10000变为40000", "changing the base leaves pair 0 alone: it turns 1 rad per token "
         "at base 10000 and 40000", "theta_0 = base^0", None, 6, lambda: _ntk_slowdown(0), expected=1.0, assumed="d = 128"),
    Fact("rope.yarn-low-band", "001", "低频分量（$\\theta$小）：捕捉长距离依赖，使用NTK插值",
         "YaRN divides the low-frequency pairs by s (linear interpolation), not by NTK", "s = 4", None, 6,
         lambda: float(_th(128)[63] / thetas(_yarn())[63]), expected=4.0, assumed="d = 128, L = 2048",
         correction="YaRN interpolates the low band linearly (theta / s), keeps the high band unchanged and ramps between "
                    "them; NTK-aware scaling changes the base instead"),
    Fact("rope.yarn-attention-factor", "001", "方法3：YaRN（Yet another RoPE extensioN）",
         "YaRN's attention factor at s = 4: 0.1 ln 4 + 1", "s = 4", None, 3,
         lambda: attention_factor(_yarn()), expected=1.139,
         assumed="d = 128, L = 2048"),
    # -- seed 004 -----------------------------------------------------------------------------------------
    *(Fact(f"rope.first-turn-gap-{g}", "004",
           "间隔为 1 时，32 对全都在第一圈之内，但间隔越大，这个数量就越少" if g == 1 else
           "最后数一数间隔变远时每对转了几圈，测量还没有超过一圈的对还剩多少",
           f"64 dims: {want} pairs are still inside their first turn at gap {g}", f"d = 64, gap {g}",
           want if g == 1 else None, 0, (lambda g=g: float(np.sum(g * _th(64) < 2 * math.pi))),
           expected=None if g == 1 else want, assumed="base 1e4")
      for g, want in ((1, 32), (10, 30), (100, 22), (1000, 14), (10000, 6))),
    Fact("rope.gap-2-identical", "004", "把间隔固定为二，起始位置依次换成 3、10、100、4000，用两种方式测量分数。旋转一侧在四个位置上得到相同的值",
         "gap 2 at starts 3, 10, 100, 4000: RoPE scores identical", "gap 2, starts 3, 10, 100, 4000", 0.0, 9, _rope_spread,
         assumed="d = 32, seed 0, W_Q, W_K standard normal / sqrt(d); spread = max - min of the four scores"),
    Fact("additive.gap-2-spread", "004", "而相加一侧会抖动", "... while additive-encoding scores differ",
         "gap 2, starts 3, 10, 100, 4000", None, 0, _additive_spread,
         assumed="d = 32, seed 0, sinusoidal PE added with weight 1, same projections", demo_specific=True),
]

BY_ID = {f.id: f for f in FACTS}
