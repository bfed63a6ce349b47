"""A decoder of one's own, checked whole by ropespec's model family (docs/howto/model.md):

    ropespec check examples/my_decoder.py:make --family model --expect '{"head_dim": 16, "dtype": "float64"}'

nanoGPT style, in torch: token embeddings, layers of causal self-attention with grouped-query heads whose q and k are
turned by RoPE from a cos/sin table gathered at each token's position (as gpt-fast's freqs_cis), and an MLP. Its KV
cache is a list of each layer's keys and values: forward hands it back and the next forward is handed it. What
ropespec asks of it:

* ``forward(ids, positions=None, mask=None, cache=None) -> (logits, cache)``: ids (batch, tokens); mask (batch, tokens
  so far, the cache's included) of 1 for a real token and 0 for a left pad, or None; positions (batch, tokens), or
  None to infer them from the mask;
* ``rope_positions``: the positions its last forward handed its RoPE, one per call of it;

and the doors the rest of the plumbing is checked through: ``forward(..., documents=[lengths])`` (one row of
documents packed end to end, each its own sequence), ``windows`` and ``hidden_states`` (each layer's window, here
none, and output), ``crop(cache, length)`` (drafts rejected).
"""

import torch

#: the tiny model's sizes
HEADS, KV_HEADS, LAYERS, VOCAB, MAX_LEN = 4, 2, 2, 64, 4096


class Attention(torch.nn.Module):
    def __init__(self, hidden: int, head_dim: int):
        super().__init__()
        self.d = head_dim
        self.q = torch.nn.Linear(hidden, HEADS * head_dim, bias=False)
        self.kv = torch.nn.Linear(hidden, 2 * KV_HEADS * head_dim, bias=False)
        self.o = torch.nn.Linear(HEADS * head_dim, hidden, bias=False)

    def forward(self, x, cos, sin, mask, kv, docs=None):
        b, t, _ = x.shape
        q = rotate(self.q(x).view(b, t, HEADS, self.d).transpose(1, 2), cos, sin)
        k, v = self.kv(x).view(b, t, 2, KV_HEADS, self.d).permute(2, 0, 3, 1, 4)
        k = rotate(k, cos, sin)
        if kv is not None:  # the cached keys (already turned) and values come first
            k, v = torch.cat([kv[0], k], dim=2), torch.cat([kv[1], v], dim=2)
        s = k.shape[2]
        causal = torch.arange(s)[None, :] <= torch.arange(s - t, s)[:, None]
        allowed = causal[None, None] & (mask[:, None, None, :] == 1)
        if docs is not None:  # packed documents: a token sees its own document's only
            allowed = allowed & (docs[:, None, :, None] == docs[:, None, None, :])
        scores = q @ k.repeat_interleave(HEADS // KV_HEADS, dim=1).transpose(-1, -2) / self.d ** 0.5
        scores = scores.masked_fill(~allowed, float("-inf")).nan_to_num(neginf=-1e300)  # a pad's query: any row
        out = scores.softmax(-1) @ v.repeat_interleave(HEADS // KV_HEADS, dim=1)
        return self.o(out.transpose(1, 2).reshape(b, t, -1)), (k, v)


def rotate(x, cos, sin):
    """x (batch, heads, tokens, d) turned by RoPE, pairs (i, i + d/2) (the half pairing); cos, sin (batch, tokens, d/2)."""
    x1, x2 = x.chunk(2, dim=-1)
    c, s = cos[:, None], sin[:, None]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)


class Decoder(torch.nn.Module):
    def __init__(self, head_dim: int, base: float = 10000.0):
        super().__init__()
        torch.manual_seed(0)
        hidden = HEADS * head_dim
        self.embed = torch.nn.Embedding(VOCAB, hidden)
        self.attn = torch.nn.ModuleList(Attention(hidden, head_dim) for _ in range(LAYERS))
        self.mlp = torch.nn.ModuleList(torch.nn.Sequential(torch.nn.Linear(hidden, 2 * hidden), torch.nn.GELU(),
                                                           torch.nn.Linear(2 * hidden, hidden)) for _ in range(LAYERS))
        self.out = torch.nn.Linear(hidden, VOCAB, bias=False)
        inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
        angles = torch.outer(torch.arange(MAX_LEN, dtype=torch.float64), inv_freq)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)
        self.double()
        with torch.no_grad():  # random weights: q and k scaled up, so that attention is peaked and positions tell
            for a in self.attn:
                a.q.weight.mul_(8.0)
                a.kv.weight[: KV_HEADS * head_dim].mul_(8.0)
        self.rope_positions, self.hidden_states = [], []
        self.windows = [None] * LAYERS  # every layer global

    @torch.no_grad()
    def forward(self, ids, positions=None, mask=None, cache=None, documents=None):
        ids = torch.as_tensor(ids)
        past = 0 if cache is None else cache[0][0].shape[2]
        mask = torch.ones(ids.shape[0], past + ids.shape[1], dtype=torch.long) if mask is None else torch.as_tensor(mask)
        docs = None
        if documents is not None:  # each document's tokens from position 0
            docs = torch.repeat_interleave(torch.arange(len(documents)), torch.as_tensor(documents))[None]
            positions = torch.cat([torch.arange(n) for n in documents])[None]
        if positions is None:  # each real token at the number of real tokens before it
            positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, past:]
        positions = torch.as_tensor(positions)
        self.rope_positions = [positions]
        cos, sin = self.cos[positions], self.sin[positions]
        x, new = self.embed(ids), []
        self.hidden_states = []
        for i, (attn, mlp) in enumerate(zip(self.attn, self.mlp)):
            h, kv = attn(norm(x), cos, sin, mask, None if cache is None else cache[i], docs)
            x = x + h
            x = x + mlp(norm(x))
            new.append(kv)
            self.hidden_states.append(x)
        return self.out(norm(x)), new

    def crop(self, cache, length):
        """The cache's first ``length`` tokens."""
        return [(k[:, :, :length], v[:, :, :length]) for k, v in cache]


def norm(x):
    return x / (x.pow(2).mean(-1, keepdim=True) + 1e-6).sqrt()


def make(expect):
    """ropespec's factory: the decoder of the expectation's head_dim and base."""
    return Decoder(expect.head_dim, expect.rope_theta)
