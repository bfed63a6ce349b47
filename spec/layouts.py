"""The layouts: how one call of an implementation lays out its rows, one registered object each.

A layout is chosen with ``--layout`` (nd, the batched bshd/bhsd/sbhd, packed thd, ALiBi's bhqk) or follows from the
form (vLLM's forward hands queries and keys apart, heads flattened). What a property, an operation across the
process boundary or a message needs to know of one (is it batched and where its axes sit, is it packed, does it take
keys apart) is asked of its object here, never by comparing its name.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Layout:
    name: str
    #: what a call in it takes and returns, as the options' help and the glossary say it
    means: str
    #: one call of unbatched rows, f(x (n, head_dim), positions (n,)): the default
    plain: bool = False
    #: a batched layout's axes: the transpose taking canonical (batch, seq, head, dim) to the call's own order
    axes: tuple[int, ...] | None = None
    #: packed sequences: x (tokens, heads, head_dim) with cu_seqlens
    packed: bool = False
    #: queries and keys handed apart, heads flattened, one position per token (vLLM's forward)
    keys_apart: bool = False
    #: a batched bias: (batch, n_heads, n_q, n_k)
    bias: bool = False
    #: a choice of ``--layout`` (vLLM's rows follow from ``--form vllm``)
    chosen: bool = True

    @property
    def batched(self) -> bool:
        """(batch, seq, head, dim) in some order: several batch rows, each with its own positions."""
        return self.axes is not None

    @property
    def by_token(self) -> bool:
        """Rows indexed (token, head): packed sequences and vLLM's flattened tokens."""
        return self.packed or self.keys_apart


#: every layout, the default (plain) first
REGISTRY: dict[str, Layout] = {}


def register(*layouts: Layout) -> None:
    for layout in layouts:
        if layout.name in REGISTRY:
            raise ValueError(f"layout {layout.name!r} registered twice")
        REGISTRY[layout.name] = layout


def get(name: str) -> Layout:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"no layout {name!r}: one of {', '.join(chosen())}") from None


def chosen() -> list[str]:
    """The names ``--layout`` accepts, the default first."""
    return [n for n, layout in REGISTRY.items() if layout.chosen]


def default() -> str:
    return next(n for n, layout in REGISTRY.items() if layout.plain)


_BATCHED = "positions (batch, seq) (or (batch, seq, A))"
register(
    Layout("nd", "f(x (n, head_dim), positions (n,)), or (n, A) position vectors for multi-axis RoPE", plain=True),
    Layout("bshd", f"x (batch, seq, heads, head_dim), {_BATCHED}", axes=(0, 1, 2, 3)),
    Layout("bhsd", f"x (batch, heads, seq, head_dim), {_BATCHED}", axes=(0, 2, 1, 3)),
    Layout("sbhd", f"x (seq, batch, heads, head_dim), {_BATCHED}", axes=(1, 0, 2, 3)),
    Layout("thd", "packed x (tokens, heads, head_dim), cu_seqlens, and one offset per sequence or one position per "
                  "token", packed=True),
    Layout("bhqk", "ALiBi's batched bias: alibi(n_heads, q_positions (batch, n_q), k_positions (batch, n_k)) -> "
                   "(batch, n_heads, n_q, n_k)", bias=True),
    Layout("vllm", "vLLM's forward(positions, query, key): query (tokens, heads * head_dim) and key (tokens, "
                   "kv_heads * head_dim) apart, one position per token", keys_apart=True, chosen=False),
)
