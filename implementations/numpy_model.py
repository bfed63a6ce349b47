"""A decoder-only transformer in numpy, float64, with its own KV cache: the model family's protocol written as a user
writes a decoder of their own (gpt-fast, nanoGPT style).

``make(expect)`` returns a :class:`Decoder`: token embeddings, ``LAYERS`` layers of pre-RMSNorm causal attention whose q
and k are turned by the expectation's RoPE (:mod:`ropespec.implementations.numpy_rope`) and an MLP, a final norm and the
output projection. ``forward(ids, positions=None, mask=None, cache=None) -> (logits, cache)``:

* ids (batch, tokens); mask (batch, tokens so far, the cache's included) of 1 for a real token and 0 for a pad (left
  padding), all ones when None;
* positions (batch, tokens), or (batch, tokens, axes) for a multi-axis RoPE; inferred when None: each real token at the
  number of real tokens before it, as transformers' generate infers them from the mask (a pad at 1, which no real
  token's key sees);
* the cache: every layer's turned keys and values so far, and how many tokens it holds.

Its weights are drawn from a fixed seed, q and k scaled so that attention is far from uniform (a uniform attention
would hide a wrong position). It records the positions it hands its RoPE in ``rope_positions``.
"""

from __future__ import annotations

import numpy as np

from ropespec.implementations.numpy_rope import make as make_rope

#: the tiny model's sizes: vocabulary, layers, the MLP's width per hidden unit
VOCAB, LAYERS, MLP = 48, 2, 2
#: q and k are scaled by this, so that the softmax is peaked: a position error moves the logits by O(1)
SHARPEN = 3.0


class Decoder:
    def __init__(self, expect, seed: int = 0, *, vocab: int = VOCAB, layers: int = LAYERS):
        self.e = expect
        self.heads = max(2, expect.n_heads)
        self.kv_heads = self.heads if expect.n_kv_heads == expect.n_heads else max(1, expect.n_kv_heads)
        self.d = expect.head_dim
        hidden = self.heads * self.d
        rng = np.random.default_rng(seed)
        w = lambda *shape: rng.standard_normal(shape) / np.sqrt(shape[0])  # noqa: E731
        self.embed = rng.standard_normal((vocab, hidden))
        self.layers = [dict(q=SHARPEN * w(hidden, self.heads * self.d), k=SHARPEN * w(hidden, self.kv_heads * self.d),
                            v=w(hidden, self.kv_heads * self.d), o=w(self.heads * self.d, hidden),
                            up=w(hidden, MLP * hidden), down=w(MLP * hidden, hidden)) for _ in range(layers)]
        self.out = w(hidden, vocab)
        self.rope = make_rope(expect.replace(dtype="float64"))
        self.rope_positions: list = []

    # -- what it is asked -----------------------------------------------------------------------------------------
    def forward(self, ids, positions=None, mask=None, cache=None):
        ids = np.asarray(ids, dtype=np.int64)
        b, t = ids.shape
        past = cache["length"] if cache else 0
        mask = np.ones((b, past + t), dtype=np.int64) if mask is None else np.asarray(mask, dtype=np.int64)
        if positions is None:
            positions = self.inferred(mask)[:, past:]
        positions = np.asarray(positions, dtype=np.int64)
        self.rope_positions = [positions]
        x = self.embed[ids]
        keys = [] if cache is None else list(cache["layers"])
        for i, layer in enumerate(self.layers):
            kv = keys[i] if i < len(keys) else None
            h, kv = self._attention(layer, _norm(x), positions, mask, kv, past)
            x = x + h
            x = x + np.maximum(_norm(x) @ layer["up"], 0.0) @ layer["down"]
            keys[i:i + 1] = [kv]
        return _norm(x) @ self.out, {"length": past + t, "layers": keys}

    def inferred(self, mask: np.ndarray) -> np.ndarray:
        """Each real token at the count of real tokens before it; a pad at 1 (transformers' masked_fill)."""
        count = np.cumsum(mask, axis=1) - 1
        count = np.where(mask == 1, count, 1)
        return count[..., None].repeat(self.e.n_axes, axis=-1) if self.e.multi_axis else count

    # -- one layer ------------------------------------------------------------------------------------------------
    def _turn(self, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """x (b, t, heads, d) turned at positions (b, t[, axes]), row by row."""
        b, t, h, d = x.shape
        rows = x.transpose(0, 2, 1, 3).reshape(b * h * t, d)
        pos = np.repeat(positions[:, None], h, axis=1).reshape(b * h * t, *positions.shape[2:])
        return self.rope(rows, pos).reshape(b, h, t, d).transpose(0, 2, 1, 3)

    def _attention(self, layer, x, positions, mask, kv, past):
        b, t, _ = x.shape
        q = self._turn((x @ layer["q"]).reshape(b, t, self.heads, self.d), positions)
        k = self._turn((x @ layer["k"]).reshape(b, t, self.kv_heads, self.d), positions)
        v = (x @ layer["v"]).reshape(b, t, self.kv_heads, self.d)
        if kv is not None:
            k, v = np.concatenate([kv[0], k], axis=1), np.concatenate([kv[1], v], axis=1)
        group = self.heads // self.kv_heads
        k_, v_ = np.repeat(k, group, axis=2), np.repeat(v, group, axis=2)
        scores = np.einsum("bqhd,bkhd->bhqk", q, k_) / np.sqrt(self.d)
        s = past + t
        causal = np.arange(s)[None, :] <= (past + np.arange(t))[:, None]  # (t, s): key j sees query i if j <= i
        seen = causal[None, None] & (mask[:, None, None, :] == 1)
        scores = np.where(seen, scores, -np.inf)
        scores = np.where(seen.any(axis=-1, keepdims=True), scores, 0.0)  # a pad's query sees nothing: any row
        w = np.exp(scores - scores.max(axis=-1, keepdims=True))
        out = np.einsum("bhqk,bkhd->bqhd", w / w.sum(axis=-1, keepdims=True), v_).reshape(b, t, self.heads * self.d)
        return out @ layer["o"], (k, v)


def _norm(x: np.ndarray) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6)


def make(expect):
    if expect.dtype != "float64":
        raise NotImplementedError("the numpy model computes float64")
    if expect.method.length_dependent:
        raise NotImplementedError("its cached keys keep the table of their own length (a dynamic or LongRoPE table "
                                  "changes with it)")
    return Decoder(expect)
