"""transformers' RoPE of forms of their own, as factories: each model's code built from its config class (no weights)
for the expectation it computes and called as the model calls it, on rows x (n, head_dim) at positions (n,).

    ropespec check ropespec.implementations.adapters.hf_other:roformer --array torch --expect path/to/roformer/config.json
    ropespec check ropespec.implementations.adapters.hf_other:wav2vec2_conformer --array torch --expect config.json

``roformer``: RoFormer's ``RoFormerSinusoidalPositionalEmbedding`` (a [sin | cos] table of max_position rows, filled by
``create_weight`` as the model's ``_init_weights`` fills it, held in the model's dtype) and
``RoFormerSelfAttention.apply_rotary_position_embeddings``: interleaved pairs over the whole head, base 10000.
``wav2vec2_conformer``, ``wav2vec2_bert``, ``seamless_m4t``: the Conformer speech encoders' rotary
(``position_embeddings_type: "rotary"``): the ``*RotaryPositionalEmbedding`` table of a length's rows and the
self-attention's ``_apply_rotary_embedding``, which turns the attention's input per head, half pairs, before its q and
k projections. ``clvp``: CLVP's encoder rotary on its first max(projection_dim // (2 heads), 32) dims (its attention
turns q, k and v alike). ``vjepa2``: V-JEPA 2's 3-D RoPE (``VJEPA2RopeAttention.apply_rotary_embeddings``), which is no rotation
(docs/findings.md, "V-JEPA 2"). What a model's code cannot compute (another convention, base, scaling, a partial rotary) is declined.
Needs ``transformers`` (``pip install -e '.[hf]'``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from ropespec.implementations.adapters.hf_axes import _modeling, _torch

ARRAY = "torch"
#: RoFormer's create_weight forms its table in a Python loop over every (position, dim): the largest table built
ROFORMER_ROWS = 65536


def _decline(name: str, expect, convention: str) -> None:
    if (expect.multi_axis or expect.convention != convention or expect.rotary_dim != expect.head_dim
            or expect.method.scales or expect.rotary_start or expect.direction != "forward"):
        raise NotImplementedError(f"transformers' {name} code turns {convention} pairs over the whole head by +p theta, "
                                  f"unscaled (1-D RoPE)")


def roformer(expect):
    """RoFormer's table and apply function, as its encoder calls them (q of (batch, heads, n, head_dim))."""
    torch = _torch()
    modeling = _modeling("roformer")
    _decline("RoFormer", expect, "interleaved")
    if expect.rope_theta != 10000.0:
        raise NotImplementedError("transformers' RoFormer code has a fixed base, 10000")
    if expect.max_position > ROFORMER_ROWS:
        raise NotImplementedError(f"RoFormer's table is formed row by row in Python (create_weight): built to "
                                  f"{ROFORMER_ROWS} positions, not {expect.max_position}")
    table = modeling.RoFormerSinusoidalPositionalEmbedding(expect.max_position, expect.head_dim)
    with torch.no_grad():
        table.weight.copy_(table.create_weight())  # as RoFormerPreTrainedModel._init_weights fills it

    held: dict = {}  # the table in each dtype it is called in, as a model cast to that dtype holds its weights

    def rope(x: "torch.Tensor", positions: "torch.Tensor") -> "torch.Tensor":
        key = (x.device, x.dtype)
        if key not in held:
            held[key] = copy.deepcopy(table).to(device=x.device, dtype=x.dtype)
        with torch.no_grad():
            sinusoidal = held[key](x.shape[:1], position_ids=positions)[None, None]  # (1, 1, n, d): [sin | cos]
            q = x[None, None]
            return modeling.RoFormerSelfAttention.apply_rotary_position_embeddings(sinusoidal, q, q)[0][0, 0]

    return rope


@dataclass(frozen=True)
class Conformer:
    module: str
    config: str
    rotary: str
    attention: str
    heads: str  # the config key of the encoder's attention heads


CONFORMERS = {
    "wav2vec2_conformer": Conformer("wav2vec2_conformer", "Wav2Vec2ConformerConfig",
                                    "Wav2Vec2ConformerRotaryPositionalEmbedding", "Wav2Vec2ConformerSelfAttention",
                                    "num_attention_heads"),
    "wav2vec2_bert": Conformer("wav2vec2_bert", "Wav2Vec2BertConfig", "Wav2Vec2BertRotaryPositionalEmbedding",
                               "Wav2Vec2BertSelfAttention", "num_attention_heads"),
    "seamless_m4t": Conformer("seamless_m4t", "SeamlessM4TConfig", "SeamlessM4TConformerRotaryPositionalEmbedding",
                              "SeamlessM4TConformerSelfAttention", "speech_encoder_attention_heads"),
}


def conformer(name: str):
    """make(expect) running ``name``'s Conformer rotary on rows x (n, head_dim): one head of head_dim, the table of
    max(positions) + 1 rows read at the positions (the encoder reads rows 0 .. n - 1), handed to the self-attention's
    ``_apply_rotary_embedding`` as the encoder hands its table over."""
    c = CONFORMERS[name]

    def make(expect):
        torch = _torch()
        modeling = _modeling(c.module)
        _decline(name, expect, "half")
        if expect.rope_theta != int(expect.rope_theta):
            raise NotImplementedError(f"transformers' {name} config takes an integer rotary_embedding_base, not "
                                      f"{expect.rope_theta!r}")
        import transformers

        config = getattr(transformers, c.config)(hidden_size=expect.head_dim, **{c.heads: 1},
                                                 position_embeddings_type="rotary",
                                                 rotary_embedding_base=int(expect.rope_theta))
        rotary = getattr(modeling, c.rotary)(config)
        attention = getattr(modeling, c.attention)(config)

        def rope(x: "torch.Tensor", positions: "torch.Tensor") -> "torch.Tensor":
            rotary.to(x.device)
            attention.to(x.device)
            with torch.no_grad():
                table = rotary(x.new_zeros((1, int(positions.max()) + 1, 1)))  # (2, L, 1, 1, d) in x's dtype
                return attention._apply_rotary_embedding(x[None], table[:, positions])[0]

        return rope

    make.__name__ = make.__qualname__ = name
    return make


wav2vec2_conformer = conformer("wav2vec2_conformer")
wav2vec2_bert = conformer("wav2vec2_bert")
seamless_m4t = conformer("seamless_m4t")


def clvp(expect):
    """CLVP's encoder rotary as its self-attention applies it: ``ClvpRotaryPositionalEmbedding`` (a table of the
    sequence's rows, max(projection_dim // (2 heads), 32) dims, base 10000, in float32 as the module builds it) and
    ``apply_rotary_pos_emb(q, k, v, cos, sin, position_ids)`` on the first rotary dims of q (its attention turns k and v
    alike), the rest passed through as ``ClvpSelfAttention`` concatenates them. One head of head_dim; a rotary_dim
    the config cannot give (below 32, or odd) is declined."""
    torch = _torch()
    modeling = _modeling("clvp")
    d, r = expect.head_dim, expect.rotary_dim
    if (expect.multi_axis or expect.convention != "half" or expect.method.scales or expect.rotary_start
            or expect.direction != "forward" or expect.rope_theta != 10000.0 or r < 32):
        raise NotImplementedError("transformers' CLVP code turns half pairs over its first max(projection_dim // "
                                  "(2 heads), 32) dims by +p theta, base 10000, unscaled (1-D RoPE)")
    import transformers

    rotary = modeling.ClvpRotaryPositionalEmbedding(transformers.ClvpEncoderConfig(
        hidden_size=d, num_attention_heads=1, projection_dim=2 * r))

    def rope(x: "torch.Tensor", positions: "torch.Tensor") -> "torch.Tensor":
        rotary.to(x.device)
        with torch.no_grad():
            table = rotary(x.new_zeros((1, int(positions.max()) + 1, d)))  # (1, L, r), as the encoder forms it
            cos, sin = table.cos().squeeze(0), table.sin().squeeze(0)
            q_rot, q_pass = x[None, None, :, :r], x[None, None, :, r:]
            q_rot = modeling.apply_rotary_pos_emb(q_rot, q_rot, q_rot, cos, sin, positions[None])[0]
            return torch.cat((q_rot, q_pass), dim=-1)[0, 0]

    return rope


def vjepa2(expect):
    """V-JEPA 2's 3-D RoPE as its attention applies it (``VJEPA2RopeAttention.apply_rotary_embeddings``: q of (batch,
    heads, n, head_dim), its (frame, row, column) ids one (n,) row each): three per-axis ladders [t | h | w] of
    2 ((head_dim // 3) // 2) dims each, interleaved pairs, base 10000, the last dims still (the vjepa2-vitl preset).
    Other expectations are declined."""
    torch = _torch()
    modeling = _modeling("vjepa2")
    d = expect.head_dim
    a = 2 * ((d // 3) // 2)
    if (expect.axes_kind() != "per-axis" or expect.axes_dims_rope != (a, a, a) or expect.convention != "interleaved"
            or expect.rope_theta != 10000.0 or expect.axes_offset is not None or expect.axes_scale is not None
            or expect.rotary_dim != 3 * a or expect.rotary_start or expect.direction != "forward"):
        raise NotImplementedError(f"transformers' V-JEPA 2 code turns three per-axis ladders [t | h | w] of {a} dims "
                                  f"(2 ((head_dim // 3) // 2)), interleaved pairs, base 10000 (the vjepa2-vitl preset)")
    import transformers

    attention = modeling.VJEPA2RopeAttention(transformers.VJEPA2Config(hidden_size=d, num_attention_heads=1), d, 1)

    def rope(x: "torch.Tensor", positions: "torch.Tensor") -> "torch.Tensor":
        with torch.no_grad():
            ids = tuple(positions[:, k] for k in range(3))  # as get_position_ids hands them over: (n,) each
            return attention.apply_rotary_embeddings(x[None, None], ids)[0, 0]

    return rope


vjepa2.axes = ("per-axis",)

__all__ = ["CONFORMERS", "clvp", "conformer", "roformer", "seamless_m4t", "wav2vec2_bert", "vjepa2", "wav2vec2_conformer"]
