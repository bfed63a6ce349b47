"""The families ropespec checks, each a module that registers its forms (:mod:`ropespec.implementations.families.base`):
``rope`` (apply, vllm, table, kernel, qk, and decoders), ``sinusoidal``, ``learned``, ``attention``, ``position-ids``
(the module ``positions``), ``alibi``, ``t5-bias`` (the module ``t5_bias``), ``xpos``. A new family is one more module here, listed
below."""

# each registers its forms
from ropespec.implementations.families import alibi, attention, learned, positions, rope, sinusoidal, t5_bias, xpos  # noqa: F401
from ropespec.implementations.families.base import REGISTRY, Bound, Form, Op, form_of, forms_answering, forms_in_layout

__all__ = ["REGISTRY", "Bound", "Form", "Op", "form_of", "forms_answering", "forms_in_layout"]
