"""transformers' own rotary code, per model type, as factories: the model's rotary embedding class
(built from a config, no weights) and the model's own apply function, called as the model calls them.

    ropespec check ropespec.implementations.adapters.hf:make --array torch --dtype bfloat16 --expect llama3.1-8b
    ropespec check ropespec.implementations.adapters.hf:deepseek_v3 --array torch --expect deepseek-v3
    ropespec check ropespec.implementations.adapters.hf:gptj --array torch --expect path/to/gpt-j/config.json

``make`` is Llama's. One factory per model type in :data:`MODEL_TYPES` (``gpt_neox``, ``gptj``,
``codegen``, ``llama``, ``mistral``, ``qwen2``, ``phi3``, ``gemma``, ``gemma3``, ``deepseek_v3``,
``gpt_oss``); :func:`factory` builds one for any of them. Needs ``transformers`` (``pip install -e
'.[hf]'``); without it the factories decline. The expectation becomes the model type's config class
(``rope_parameters`` in transformers 5.x words). Everything transformers does is kept: float32 inverse
frequencies and angles, cos/sin cast to x's dtype, and for ``dynamic`` its cached, stateful table (the
behaviour behind transformers #25306). What a model's code cannot express (another convention, partial
rotary where its apply function has none, a base GPT-J hard-codes, ropespec's static ``ntk``) is declined,
so that a verdict is always about the model's own code.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

ARRAY = "torch"


@dataclass(frozen=True)
class Model:
    """How one model type's rotary code is built and called."""

    config: str  # config class in transformers
    module: str  # transformers.models.<module>.modeling_<module>
    rotary: str  # rotary embedding class
    conventions: tuple[str, ...] = ("half",)
    partial: bool = False  # its apply function (or, for GPT-J, its attention) rotates only the first rotary dims
    scaled: bool = True  # reads rope_parameters (every transformers scaling type); False: a fixed table
    call: str = "qk"  # "qk": apply(q, k, cos, sin), q (b, h, s, d); "gptj": apply(x, sin, cos), x (b, s, h, d)
    layer_type: str | None = None  # Gemma 3: the layer type whose rope_parameters are checked
    table: str = "dim"  # what its rotary embedding returns and its apply takes: cos/sin per "dim" or per "pair"
    note: str = ""


MODEL_TYPES: dict[str, Model] = {
    "llama": Model("LlamaConfig", "llama", "LlamaRotaryEmbedding"),
    "mistral": Model("MistralConfig", "mistral", "MistralRotaryEmbedding"),
    "qwen2": Model("Qwen2Config", "qwen2", "Qwen2RotaryEmbedding"),
    "gemma": Model("GemmaConfig", "gemma", "GemmaRotaryEmbedding"),
    "gemma3": Model("Gemma3TextConfig", "gemma3", "Gemma3RotaryEmbedding", layer_type="full_attention",
                    note="the full-attention layers' table (sliding layers use the default one)"),
    "phi3": Model("Phi3Config", "phi3", "Phi3RotaryEmbedding", partial=True),
    "gpt_neox": Model("GPTNeoXConfig", "gpt_neox", "GPTNeoXRotaryEmbedding", partial=True),
    "gpt_oss": Model("GptOssConfig", "gpt_oss", "GptOssRotaryEmbedding", table="pair"),
    "deepseek_v3": Model("DeepseekV3Config", "deepseek_v3", "DeepseekV3RotaryEmbedding",
                         conventions=("rope_interleave", "half"),
                         note="rope_interleave: apply_rotary_pos_emb_interleave; otherwise apply_rotary_pos_emb"),
    "gptj": Model("GPTJConfig", "gptj", "GPTJRotaryEmbedding", conventions=("interleaved",), partial=True,
                  scaled=False, call="gptj", note="a sin/cos table of max_position rows, base 10000 hard-coded"),
    "codegen": Model("CodeGenConfig", "codegen", "CodeGenRotaryEmbedding", conventions=("interleaved",),
                     partial=True, scaled=False, call="gptj", note="as GPT-J"),
}


def rope_parameters(expect) -> tuple[dict, int]:
    """transformers 5.x rope_parameters for ``expect``, and the max_position_embeddings to give it."""
    params = {"rope_type": expect.rope_type, "rope_theta": expect.rope_theta}
    if expect.rope_scaling:
        params.update({k: v for k, v in expect.to_dict()["rope_scaling"].items() if k != "rope_type"})
    max_pos = expect.method.to_hf(params, expect.max_position)
    if expect.rotary_dim != expect.head_dim:
        params["partial_rotary_factor"] = expect.rotary_dim / expect.head_dim
    return params, max_pos


def config_for(expect, model_type: str = "llama"):
    """The transformers config of ``model_type`` computing ``expect``'s RoPE, one head of head_dim
    (raises ImportError without transformers)."""
    import transformers

    m = MODEL_TYPES[model_type]
    cls = getattr(transformers, m.config)
    if m.call == "gptj":
        return cls(n_embd=expect.head_dim, n_head=1, rotary_dim=expect.rotary_dim, n_positions=expect.max_position)
    params, max_pos = rope_parameters(expect)
    common = dict(hidden_size=expect.head_dim, num_attention_heads=1, num_key_value_heads=1,
                  head_dim=expect.head_dim, max_position_embeddings=max_pos)
    if m.layer_type:  # per-layer-type parameters (Gemma 3): the sliding layers keep the default table
        default = {"rope_type": "default", "rope_theta": 10000.0}
        return cls(**common, rope_parameters={m.layer_type: params, "sliding_attention": default})
    if model_type == "deepseek_v3":
        return cls(**common, qk_rope_head_dim=expect.head_dim, qk_nope_head_dim=0,
                   rope_interleave=expect.convention == "rope_interleave", rope_parameters=params)
    if model_type == "phi3":  # Phi-3 keeps the original length at the top level too
        original = params.get("original_max_position_embeddings", max_pos)
        return cls(**common, original_max_position_embeddings=original, rope_parameters=params)
    return cls(**common, rope_parameters=params)


def _decline(m: Model, model_type: str, expect) -> None:
    if expect.convention not in m.conventions:
        raise NotImplementedError(f"transformers' {model_type} code pairs {' or '.join(m.conventions)}, "
                                  f"not {expect.convention}")
    if expect.rotary_dim != expect.head_dim and not m.partial:
        raise NotImplementedError(f"transformers' {model_type} code rotates every dim (no partial rotary)")
    if not m.scaled and (expect.method.scales or expect.rope_theta != 10000.0):
        raise NotImplementedError(f"transformers' {model_type} code has a fixed table: base 10000, no scaling")
    if expect.method.hf_name is None:
        raise NotImplementedError(f"transformers has no {expect.rope_type!r} rope type")
    if expect.rotary_start:
        raise NotImplementedError(f"transformers' {model_type} code turns the first rotary_dim dims, not dims from "
                                  f"{expect.rotary_start} on")


def _modeling(m: Model, model_type: str, expect):
    """The model type's modeling module, once the expectation is one its code can express (else the factory
    declines: NotImplementedError, also when transformers is missing)."""
    try:
        importlib.import_module("torch")
        modeling = importlib.import_module(f"transformers.models.{m.module}.modeling_{m.module}")
    except ImportError:
        raise NotImplementedError("transformers is not installed (pip install -e '.[hf]')") from None
    _decline(m, model_type, expect)
    return modeling


def factory(model_type: str):
    """make(expect) running transformers' ``model_type`` rotary code on rows x (n, head_dim)."""
    if model_type not in MODEL_TYPES:
        raise ValueError(f"model_type: one of {', '.join(MODEL_TYPES)}, got {model_type!r}")
    m = MODEL_TYPES[model_type]

    def make(expect):
        modeling = _modeling(m, model_type, expect)
        import torch

        rotary = getattr(modeling, m.rotary)(config_for(expect, model_type))
        if model_type == "deepseek_v3" and expect.convention == "rope_interleave":
            apply = modeling.apply_rotary_pos_emb_interleave
        else:
            apply = modeling.apply_rotary_pos_emb
        if m.call == "qk":
            return attention_call(rotary, apply, (m.layer_type,) if m.layer_type else ())
        r = expect.rotary_dim

        def rope(x: "torch.Tensor", positions: "torch.Tensor") -> "torch.Tensor":
            rotary.to(x.device)
            with torch.no_grad():  # GPTJAttention: (batch, seq, heads, dim), the first rotary_dim dims
                q = x[None, :, None, :]
                sin, cos = rotary(q, positions[None])
                out = torch.cat([apply(q[..., :r], sin, cos), q[..., r:]], dim=-1)
                # the attention hands q on in x's dtype: GPT-J's rotary casts its table to it, CodeGen's attention
                # casts the turned q (query.to(value.dtype)) after a turn in its float32 table's
                return out[0, :, 0].to(x.dtype)

        return rope

    make.__name__ = make.__qualname__ = model_type
    make.__doc__ = f"transformers' {model_type} rotary code ({m.rotary} + its apply function). {m.note}".strip()
    return make


def attention_call(rotary, apply, extra: tuple = ()):
    """rope(x, positions) on rows x (n, head_dim) as a model's attention calls transformers' rotary embedding and
    ``apply(q, k, cos, sin)``: q of (batch 1, heads 1, n, head_dim), the table from ``rotary(q, position_ids,
    *extra)``. Where the table covers only the first dims, the apply function splits them off itself (Phi-3,
    GPT-NeoX) or its attention does (StableLM, Persimmon: then apply fails on the whole q, and the pass-through is
    joined as that attention joins it); which one is found on the first call."""
    import torch

    split: list[bool] = []

    def rope(x: "torch.Tensor", positions: "torch.Tensor") -> "torch.Tensor":
        rotary.to(x.device)
        with torch.no_grad():
            q = x[None, None]
            cos, sin = rotary(q, positions[None], *extra)
            r = cos.shape[-1]
            if r == x.shape[-1]:
                return apply(q, q, cos, sin)[0][0, 0]
            if not split:
                try:
                    apply(q, q, cos, sin)
                    split.append(False)
                except RuntimeError:
                    split.append(True)
            if not split[0]:
                return apply(q, q, cos, sin)[0][0, 0]
            rotated = apply(q[..., :r], q[..., :r], cos, sin)[0]
            return torch.cat([rotated, q[..., r:]], dim=-1)[0, 0]

    return rope


def table_factory(model_type: str):
    """make(expect) returning transformers' ``model_type`` rotary embedding as a table builder (ropespec check
    --form table): table(positions) -> (cos, sin), each (n, rotary_dim) in x's dtype, as the module's forward
    returns them for one sequence (attention factor included)."""
    m = MODEL_TYPES[model_type]
    if m.call != "qk":
        raise ValueError(f"{model_type}'s table is a fixed sin/cos buffer read inside its attention, not a module output")

    def make(expect):
        modeling = _modeling(m, model_type, expect)
        import torch

        rotary = getattr(modeling, m.rotary)(config_for(expect, model_type))
        extra = (m.layer_type,) if m.layer_type else ()
        dtype = getattr(torch, expect.dtype)

        def table(positions: "torch.Tensor"):
            rotary.to(positions.device)
            x = torch.zeros((1, 1, len(positions), expect.head_dim), dtype=dtype, device=positions.device)
            with torch.no_grad():
                cos, sin = rotary(x, positions[None], *extra)
            return cos[0], sin[0]

        return table

    make.__name__ = make.__qualname__ = f"{model_type}_table"
    make.__doc__ = f"transformers' {m.rotary}.forward as a cos/sin table builder. {m.note}".strip()
    return make


def qk_factory(model_type: str):
    """make(expect) returning the model type's own apply function, apply(q, k, cos, sin) -> (q_embed, k_embed),
    as its attention calls it (ropespec check --form qk)."""
    m = MODEL_TYPES[model_type]
    if m.call != "qk":
        raise ValueError(f"{model_type}'s apply function takes (x, sin, cos), not (q, k, cos, sin)")

    def make(expect):
        modeling = _modeling(m, model_type, expect)
        fn = (modeling.apply_rotary_pos_emb_interleave if model_type == "deepseek_v3" and expect.convention ==
              "rope_interleave" else modeling.apply_rotary_pos_emb)

        def apply(q, k, cos, sin):
            return fn(q, k, cos, sin)

        apply.table = m.table  # the table layout the model's attention hands it
        return apply

    make.__name__ = make.__qualname__ = f"{model_type}_qk"
    make.__doc__ = f"transformers' {model_type} apply_rotary_pos_emb, called as its attention calls it. {m.note}".strip()
    return make


# one factory per model type, loadable as ropespec.implementations.adapters.hf:<model_type>
llama = make = factory("llama")
mistral = factory("mistral")
qwen2 = factory("qwen2")
gemma = factory("gemma")
gemma3 = factory("gemma3")
phi3 = factory("phi3")
gpt_neox = factory("gpt_neox")
gpt_oss = factory("gpt_oss")
deepseek_v3 = factory("deepseek_v3")
gptj = factory("gptj")
codegen = factory("codegen")
# the table builders of the same model types (--form table), as ropespec.implementations.adapters.hf:<model_type>_table
llama_table = table_factory("llama")
mistral_table = table_factory("mistral")
qwen2_table = table_factory("qwen2")
gemma_table = table_factory("gemma")
phi3_table = table_factory("phi3")
gpt_neox_table = table_factory("gpt_neox")
gpt_oss_table = table_factory("gpt_oss")
deepseek_v3_table = table_factory("deepseek_v3")
# their apply functions (--form qk), as ropespec.implementations.adapters.hf:<model_type>_qk
llama_qk = qk_factory("llama")
mistral_qk = qk_factory("mistral")
qwen2_qk = qk_factory("qwen2")
gemma_qk = qk_factory("gemma")
phi3_qk = qk_factory("phi3")
gpt_neox_qk = qk_factory("gpt_neox")
gpt_oss_qk = qk_factory("gpt_oss")
deepseek_v3_qk = qk_factory("deepseek_v3")


def complex_call(rotary, apply, extra: tuple = ()):
    """rope(x, positions) on rows x (n, head_dim) as a model's attention calls a complex-form
    ``apply(xq, xk, freqs_cis)`` (Meta's Llama and DeepSeek's reference code, kept by transformers' llama4 and
    deepseek_v2): the complex table from ``rotary(q, position_ids, *extra)``, q of one head in the layout the apply
    function broadcasts its table over, (batch, heads, seq, head_dim) as DeepSeek-V2's attention calls it or (batch,
    seq, heads, head_dim) as Llama 4's does. Which one is read once, from a call on two rows (the layout whose result
    has q's shape), never from a call on the caller's rows, whose other layout would broadcast to n x n."""
    import torch

    seq_first: list[bool] = []

    def laid_out(x: "torch.Tensor", first: bool) -> "torch.Tensor":
        return x[None, :, None, :] if first else x[None, None]

    def rope(x: "torch.Tensor", positions: "torch.Tensor") -> "torch.Tensor":
        rotary.to(x.device)
        with torch.no_grad():
            if not seq_first:
                two, at = torch.zeros((2, x.shape[-1]), dtype=x.dtype, device=x.device), positions.new_tensor([0, 1])
                for first in (False, True):
                    q = laid_out(two, first)
                    if apply(q, q, rotary(q, at[None], *extra))[0].shape == q.shape:
                        seq_first.append(first)
                        break
                else:
                    raise RuntimeError("its apply(xq, xk, freqs_cis) returns another shape than q's in both layouts")
            q = laid_out(x, seq_first[0])
            out = apply(q, q, rotary(q, positions[None], *extra))[0]
            return out[0, :, 0] if seq_first[0] else out[0, 0]

    return rope
