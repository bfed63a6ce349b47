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
* the cache: every layer's turned keys and values so far, and how many tokens it holds;
* documents (lengths): one row of documents packed end to end, each its own sequence: its positions from 0 and its
  attention within it; without documents, a row given positions that restart, and no mask or cache, is split where
  they restart (transformers' padding-free door).

Each layer is global or a sliding window (``windows``: the keys a token sees, itself included, or None); each layer's
output is recorded in ``hidden_states``. ``shift(cache, d)`` re-rotates the cached keys by d (a context shift), and
``crop(cache, length)`` cuts a cache back (rejected drafts), and
``shard_positions(lengths, cp_size, rank, scheme)`` says which tokens of a packed row a context-parallel rank owns and
their positions.

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
    def __init__(self, expect, seed: int = 0, *, vocab: int = VOCAB, layers: int = LAYERS, windows=None):
        self.e = expect
        self.windows = list(windows) if windows is not None else [None] * layers
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
        self.hidden_states: list = []
        self._documents, self._window = None, None

    # -- what it is asked -----------------------------------------------------------------------------------------
    def forward(self, ids, positions=None, mask=None, cache=None, documents=None):
        ids = np.asarray(ids, dtype=np.int64)
        b, t = ids.shape
        past = cache["length"] if cache else 0
        self._documents = self.documents_of(ids, positions, mask, cache, documents, past)
        mask = np.ones((b, past + t), dtype=np.int64) if mask is None else np.asarray(mask, dtype=np.int64)
        if positions is None:
            positions = self.inferred(mask)[:, past:] if documents is None else self.packed_positions(documents)
        positions = np.asarray(positions, dtype=np.int64)
        self.rope_positions = [positions]
        x = self.embed[ids]
        keys = [] if cache is None else list(cache["layers"])
        self.hidden_states = []
        for i, layer in enumerate(self.layers):
            kv = keys[i] if i < len(keys) else None
            self._window = self.windows[i]
            h, kv = self._attention(layer, _norm(x), positions, mask, kv, past)
            x = x + h
            x = x + np.maximum(_norm(x) @ layer["up"], 0.0) @ layer["down"]
            keys[i:i + 1] = [kv]
            self.hidden_states.append(x)
        self._documents = self._window = None  # this call's, never the next's
        return _norm(x) @ self.out, {"length": past + t, "layers": keys}

    def generate(self, ids, mask=None, steps: int = 2, copies: int = 1):
        """The tokens greedy generation appends, (B copies, steps): each the argmax of its row's last logits, decoded
        from the cache. ``copies``: each row continued that many times (a request's n samples), the prefill once per
        row and then its cache and mask repeated in place (row i's copies at i copies ... i copies + copies - 1)."""
        ids = np.asarray(ids, dtype=np.int64)
        mask = np.ones(ids.shape, dtype=np.int64) if mask is None else np.asarray(mask, dtype=np.int64)
        logits, cache = self.forward(ids, mask=mask)
        if copies > 1:
            logits, mask, cache = self.expand(logits, mask, cache, copies)
        out = []
        for i in range(steps):
            out.append(logits[:, -1].argmax(axis=-1)[:, None])
            if i + 1 < steps:
                mask = np.concatenate([mask, np.ones_like(out[-1])], axis=1)
                logits, cache = self.forward(out[-1], mask=mask, cache=cache)
        return np.concatenate(out, axis=1)

    @staticmethod
    def expand(logits, mask, cache, copies: int):
        """Every row repeated ``copies`` times in place: its logits, mask and cached keys and values."""
        rep = lambda a: np.repeat(a, copies, axis=0)  # noqa: E731
        return rep(logits), rep(mask), {**cache, "layers": [(rep(k), rep(v)) for k, v in cache["layers"]]}

    # -- packing, a context shift, context parallelism --------------------------------------------------------------
    def documents_of(self, ids, positions, mask, cache, documents, past: int):
        """(each new token's document (B, t), each key's (B, past + t)), or None for one sequence a row: the documents
        said, else, as transformers' padding-free door reads them, a row without an attention mask or a cache whose
        given positions do not step by one (2-D positions only: a multi-axis RoPE's ids are one sequence)."""
        if documents is not None:
            d = np.repeat(np.arange(len(documents)), documents)[None, :np.shape(ids)[1]]
            return d, d
        if positions is None or mask is not None or cache is not None or np.ndim(positions) != 2:
            return None
        d = self.split(np.asarray(positions))
        return (d, d) if d is not None else None

    @staticmethod
    def split(positions: np.ndarray):
        """Each token's document where a row's positions do not step by one, (B, t); None where none restarts."""
        step = np.diff(positions, axis=-1, prepend=positions[:, :1] - 1)
        d = np.cumsum(step != 1, axis=-1)
        return d if d[:, -1].any() else None

    def packed_positions(self, lengths) -> np.ndarray:
        """Each document's tokens from 0, (1, t[, axes])."""
        p = np.concatenate([np.arange(n) for n in lengths])[None]
        return p[..., None].repeat(self.e.n_axes, axis=-1) if self.e.multi_axis else p

    def crop(self, cache, length: int):
        """The cache's first ``length`` tokens (drafts rejected)."""
        return {"length": length, "layers": [(k[:, :length], v[:, :length]) for k, v in cache["layers"]]}

    def shift(self, cache, d: int):
        """The cache with every cached key re-rotated by d: keys turned at p become keys turned at p + d."""
        layers = []
        for k, v in cache["layers"]:
            b, s, h, _ = k.shape
            delta = np.full((b, s) + ((self.e.n_axes,) if self.e.multi_axis else ()), d, dtype=np.int64)
            layers.append((self._turn(k, delta), v))
        return {"length": cache["length"], "layers": layers}

    @staticmethod
    def shard_positions(lengths, cp_size: int, rank: int, scheme: str):
        """(indices, positions) of the tokens rank ``rank`` owns: each document cut into cp_size contiguous pieces
        ("contiguous") or into 2 cp_size chunks, rank r owning chunks r and 2 cp_size - 1 - r ("load-balanced"); the
        positions each token's in its own document."""
        idx, pos, start = [], [], 0
        for n in lengths:
            cuts = cp_size if scheme == "contiguous" else 2 * cp_size
            bounds = [n * c // cuts for c in range(cuts + 1)]
            chunks = [rank] if scheme == "contiguous" else [rank, cuts - 1 - rank]
            for c in chunks:
                local = np.arange(bounds[c], bounds[c + 1])
                idx.append(start + local)
                pos.append(local)
            start += n
        return np.concatenate(idx).astype(np.int64), np.concatenate(pos).astype(np.int64)

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
        if self._window is not None:  # the last w keys, the query's own included
            causal &= np.arange(s)[None, :] > (past + np.arange(t))[:, None] - self._window
        seen = causal[None, None] & (mask[:, None, None, :] == 1)
        if self._documents is not None:  # packed: a document's tokens see their own document's only
            queries, keys = self._documents
            seen = seen & (queries[:, None, :, None] == keys[:, None, None, :])
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
