"""The forms of each family (:mod:`ropespec.spec.families`): one module per family here registers its forms
(:mod:`ropespec.implementations.families.base`), found as the zoo's members are: every module of this package but
``base``, imported in name order. ``rope``'s are apply, vllm, table, kernel, qk, and decoders; every other family has
one form, apply."""

import importlib
import pkgutil

from ropespec.implementations.families.base import (REGISTRY, Bound, Form, Op, form_of, forms_answering, forms_called,
                                                    forms_in_layout, forms_of, forms_writing_in_place)

for _info in pkgutil.iter_modules(__path__):
    if _info.name != "base":
        importlib.import_module(f"{__name__}.{_info.name}")

__all__ = ["REGISTRY", "Bound", "Form", "Op", "form_of", "forms_answering", "forms_called", "forms_in_layout", "forms_of",
           "forms_writing_in_place"]
