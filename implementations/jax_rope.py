"""RoPE in JAX (``--array jax``), in every form: ``make`` the apply function f(x, positions), ``table`` the cos/sin
builder, ``kernel`` the apply kernel kernel(x, cos, sin), ``qk`` transformers' apply(q, k, cos, sin) and ``vllm``
vLLM's forward(positions, query, key). float32, float16, bfloat16 and float64 (jax_enable_x64).

As the numpy and torch implementations: the angle is formed and reduced modulo 2 pi in float64 double-double
(:mod:`ropespec.spec.angles`, run on jax arrays), the rotation done in float64 (:func:`ropespec.spec.definitions.rotate`) and cast
once to the output dtype. jax is imported lazily: without it every factory declines with NotImplementedError.
"""

from __future__ import annotations

from functools import lru_cache, partial

import numpy as np

from ropespec.spec.angles import cos_sin, theta_hi_lo
from ropespec.spec.definitions import rotate
from ropespec.spec.expectation import Expect

ARRAY = "jax"
DTYPES = ("float32", "float16", "bfloat16", "float64")


def _jnp(expect: Expect):
    try:
        import jax
    except ImportError:
        raise NotImplementedError("jax is not installed (pip install -e '.[jax]')") from None
    if expect.dtype not in DTYPES:
        raise NotImplementedError(f"jax RoPE computes {', '.join(DTYPES)}, not {expect.dtype}")
    jax.config.update("jax_enable_x64", True)  # float64 angles, whatever the output dtype
    return jax.numpy


def _bucket(n: int, least: int) -> int:
    """The power of two >= n (at least ``least``) a shape is padded to, so that jax.jit compiles once per bucket,
    not once per shape (a compilation costs about 0.2 s; Hypothesis draws a new shape at nearly every example)."""
    return max(least, 1 << (max(n, 1) - 1).bit_length())


@lru_cache(maxsize=None)
def _compiled():
    import jax
    import jax.numpy as jnp

    @partial(jax.jit, static_argnames="small")
    def angles(pos, hi, lo, small):
        return cos_sin(pos[:, None], hi, lo, xp=jnp, small=small)

    @jax.jit
    def rotated(xf, c, s, a, b, oa, ob):  # indices past the padded width read 0 and are not written
        xa, xb = (jnp.take(xf, i, axis=1, mode="fill", fill_value=0) for i in (a, b))
        ya, yb = rotate(xa, xb, c, s)
        return xf.at[:, oa].set(ya, mode="drop").at[:, ob].set(yb, mode="drop")

    return angles, rotated


def _pad(t, shape) -> np.ndarray:
    t = np.asarray(t, dtype=np.float64)
    return np.pad(t, [(0, want - have) for have, want in zip(t.shape, shape)])


def _angles(expect: Expect, positions) -> tuple[np.ndarray, np.ndarray]:
    """(g cos p theta'_i, g sin p theta'_i) in float64, one row per position and one column per pair."""
    pos = np.asarray(positions, dtype=np.float64).reshape(-1)
    n = len(pos)
    # one call is one sequence: dynamic and longrope tables depend on its length, max(p) + 1
    hi, lo, g = theta_hi_lo(expect, int(pos.max()) + 1 if n else None)
    small = bool(n == 0 or pos.max() < 2**26)  # whether the positions' low halves vanish (ropespec.spec.angles)
    N, M = _bucket(n, 8), _bucket(len(hi), 4)
    c, s = (np.asarray(t) for t in _compiled()[0](_pad(pos, (N,)), _pad(hi, (M,)), _pad(lo, (M,)), small=small))
    return g * c[:n, : len(hi)], g * s[:n, : len(hi)]


def _rotation(jnp, expect: Expect):
    """rot(x, c, s): x (..., head_dim) rotated by per-pair c, s (broadcast to (..., r/2)), in float64, cast to x's
    dtype. The arithmetic runs in jax (compiled per padded shape); padding and slicing are numpy's (an eager jax
    operation compiles for every new shape too)."""
    d, m = expect.head_dim, expect.n_pairs
    D, M = _bucket(d + 1, 8), _bucket(m, 4)
    index = [np.arange(d)[ix] for ix in expect.pair_index()]
    a, b, oa, ob = (np.concatenate([ix, np.full(M - m, D)]) for ix in index)  # padding: out of range

    def rot(x, c, s):
        lead = x.shape[:-1]
        rows = int(np.prod(lead))
        N = _bucket(rows, 8)
        xf = _pad(np.asarray(x, dtype=np.float64).reshape(rows, d), (N, D))
        c, s = (_pad(np.broadcast_to(np.asarray(t, dtype=np.float64), (*lead, m)).reshape(rows, m), (N, M))
                for t in (c, s))
        out = np.asarray(_compiled()[1](xf, c, s, a, b, oa, ob))[:rows, :d].reshape(x.shape)
        return jnp.asarray(out.astype(x.dtype))

    return rot


def make(expect: Expect):
    jnp = _jnp(expect)
    rot = _rotation(jnp, expect)
    return lambda x, positions: rot(x, *_angles(expect, positions))


def table(expect: Expect):
    jnp = _jnp(expect)
    _, _, oa, ob = expect.pair_index()
    dtype = jnp.dtype(expect.dtype)

    def build(positions):
        c, s = _angles(expect, positions)
        out = []
        for t in (c, s):
            full = np.zeros((len(t), expect.rotary_dim))
            full[:, oa], full[:, ob] = t, t
            out.append(jnp.asarray(full.astype(dtype)))
        return out[0], out[1]

    return build


def kernel(expect: Expect):
    jnp = _jnp(expect)
    rot = _rotation(jnp, expect)
    _, _, oa, _ = expect.pair_index()
    # the table per dim (kernel.table = "dim"): each pair's value read from its first output dim
    return lambda x, cos, sin: rot(x, *(np.asarray(t, dtype=np.float64)[..., oa] for t in (cos, sin)))


def qk(expect: Expect):
    k_ = kernel(expect)

    def apply(q, k, cos, sin):
        cos, sin = (np.asarray(t)[:, None] for t in (cos, sin))  # (batch, 1, seq, rotary_dim): over every head
        return k_(q, cos, sin), k_(k, cos, sin)

    return apply


def vllm(expect: Expect):
    jnp = _jnp(expect)
    rot = _rotation(jnp, expect)
    d = expect.head_dim

    def forward(positions, query, key):
        c, s = _angles(expect, positions)
        c, s = c[:, None], s[:, None]  # over the heads
        out = []
        for t in (query, key):
            heads = np.asarray(t).reshape(t.shape[0], -1, d)
            out.append(jnp.asarray(np.asarray(rot(heads, c, s)).reshape(t.shape)))
        return out[0], out[1]

    return forward


#: the precision class these factories promise and are checked at (as numpy_rope's)
for _f in (make, table, kernel, qk, vllm):
    _f.promise = {"angle_dtype": "exact", "inv_freq_dtype": "exact"}
