"""Attention's parameters."""

from __future__ import annotations

from dataclasses import dataclass

from ropespec.spec.params import Params
from ropespec.spec.schema import RANGES, ExpectationError, _is_int, _is_number, _short


@dataclass(frozen=True)
class AttentionParams(Params):
    """A query temperature by position (:func:`ropespec.spec.definitions.query_temperature`): Ministral 3's and
    Mistral 4's ``llama_4_scaling_beta`` over ``original_max_position_embeddings`` (offset 0), Llama 4's ``attn_scale``
    over ``floor_scale`` (offset 1); beta 0 is none. Whether the layer turns q and k at all (``attention_nope``: Llama
    4's NoPE layers, which carry the temperature and no RoPE). And whether the softmax scale carries YaRN's
    mscale_all_dim (:func:`ropespec.spec.tables.score_temperature`)."""

    family = "attention"
    query_temperature_beta: float = 0.0
    query_temperature_length: int = 8192
    query_temperature_offset: int = 0
    #: with YaRN's mscale_all_dim, whether the attention multiplies its softmax scale by g(s, mscale_all_dim)^2
    #: (DeepSeek's MLA and its kin: transformers' yarn_apply_mscale); Ministral 3's does not
    yarn_softmax_mscale: bool = True
    #: the layer turns neither q nor k (NoPE: Llama 4's no_rope_layers); its scores are q . k, its queries carrying
    #: the temperature alone
    attention_nope: bool = False

    def validate(self, e) -> None:
        if not _is_number(self.query_temperature_beta) or self.query_temperature_beta < 0:
            raise ExpectationError("query_temperature_beta", f"must be {RANGES['query_temperature_beta']}, got "
                                                             f"{_short(self.query_temperature_beta)}")
        object.__setattr__(self, "query_temperature_beta", float(self.query_temperature_beta))
        if not _is_int(self.query_temperature_length) or self.query_temperature_length < 1:
            raise ExpectationError("query_temperature_length", f"must be {RANGES['query_temperature_length']}, got "
                                                               f"{_short(self.query_temperature_length)}")
        if not isinstance(self.yarn_softmax_mscale, bool):
            raise ExpectationError("yarn_softmax_mscale", f"must be {RANGES['yarn_softmax_mscale']}, got "
                                                          f"{_short(self.yarn_softmax_mscale)}")
        if not isinstance(self.attention_nope, bool):
            raise ExpectationError("attention_nope", f"must be {RANGES['attention_nope']}, got "
                                                     f"{_short(self.attention_nope)}")
        if self.query_temperature_offset not in (0, 1) or isinstance(self.query_temperature_offset, bool):
            raise ExpectationError("query_temperature_offset", f"must be {RANGES['query_temperature_offset']}, got "
                                                               f"{_short(self.query_temperature_offset)}")

    @property
    def tempered(self) -> bool:
        """Whether the queries carry a temperature at all."""
        return self.query_temperature_beta > 0

    def steps(self, top: int) -> list[int]:
        """The first positions at which tau rises, below ``top``: k length - offset for k >= 1."""
        L, c = self.query_temperature_length, self.query_temperature_offset
        return list(range(L - c, top, L)) if self.tempered else []

    @property
    def label(self) -> str:  # type: ignore[override]  (what this block states, as another family's run says it)
        return " and ".join(w for w, on in (("NoPE", not self.turns), ("query temperature", self.tempered)) if on)

    @property
    def turns(self) -> bool:
        """Whether the layer turns q and k (RoPE), or neither (NoPE)."""
        return not self.attention_nope

    def says(self) -> str | None:
        parts = [] if self.turns else ["NoPE (q and k not turned)"]
        if self.tempered:
            p = "p + 1" if self.query_temperature_offset else "p"
            parts.append(f"query temperature 1 + {self.query_temperature_beta:g} ln(1 + floor(({p}) / "
                         f"{self.query_temperature_length}))")
        return ", ".join(parts) or None
