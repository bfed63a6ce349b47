"""The length-extension (scaling) methods of RoPE: one class per method, one registry.

A method is everything ropespec knows about one ``rope_type``: the keys of its ``rope_scaling`` dict and their
validation, its frequency table (in mpmath, composed of :mod:`ropespec.spec.scaling`'s formulas, which :mod:`ropespec.spec.proofs`
proves), its attention factor, whether its table depends on the length of the call, the terms its arithmetic adds
to the tolerance, its canonical examples, the mistakes real ports made of it, the invariants of spec section
"scaling" it promises, how strategies draw it and how a Hugging Face config.json states it. Nothing outside this
package compares a ``rope_type`` string: code asks :attr:`ropespec.spec.expectation.Expect.method` (or :func:`get`) and reads
the answer.

Adding a method is one module in this package holding one subclass of :class:`ScalingMethod`; the registry finds
it as the zoo finds its members (a module per method, imported in name order).
"""

from __future__ import annotations

import importlib
import math
import pkgutil
from typing import Any, Callable, ClassVar, Iterator

import mpmath

from ropespec.spec import scaling
from ropespec.spec.schema import FACTOR_MAX, MAX_POSITION_MAX, RANGES, ExpectationError, _is_int, _is_number, _short, known_names, unknown_name

#: name -> the method (an instance of its class), every module of this package imported
REGISTRY: dict[str, "ScalingMethod"] = {}


class ScalingMethod:
    """One length-extension method. Subclasses set the class attributes and override the hooks that differ from
    the default table (the base class is the unscaled ladder's behaviour)."""

    #: the ``rope_type`` it is named by
    name: ClassVar[str]
    #: the rope_scaling keys it requires and accepts ("rope_type" is always required)
    required: ClassVar[frozenset[str]] = frozenset()
    optional: ClassVar[frozenset[str]] = frozenset()
    #: false for the unscaled ladder alone: the frequencies are the default table's
    scales: ClassVar[bool] = True
    #: the table changes with the length of the call: dynamic's base grows past the original length, longrope's
    #: factors switch from short to long there
    grows_with_length: ClassVar[bool] = False
    switches_at_length: ClassVar[bool] = False
    #: the tolerance's terms: the base is recomputed, and rounded, in the dtype (NTK's b s^(r/(r-2)))
    new_base: ClassVar[bool] = False
    #: theta' = m theta / s + (1 - m) theta with a coefficient m formed in the dtype (yarn's ramp, llama3's band)
    mixes: ClassVar[bool] = False
    #: the invariants of spec section "scaling" an implementation of it is checked against
    promises: ClassVar[tuple[str, ...]] = ()
    #: where it stands in lists (the unscaled ladder first, then by the year transformers took it up)
    order: ClassVar[int] = 100
    #: the word a diagnosis names each of :meth:`mistakes`' tags by ("scaling" where a tag has none)
    mistake_words: ClassVar[dict[str, str]] = {}
    #: transformers' name for it (``ROPE_INIT_FUNCTIONS``), None where transformers has no such type
    hf_name: ClassVar[str | None] = None
    #: other rope_type names a config.json gives it, which transformers reads as it (legacy or one model's own)
    config_names: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:
            if cls.name in REGISTRY:
                raise ValueError(f"scaling method {cls.name!r} registered twice")
            REGISTRY[cls.name] = cls()

    def __repr__(self) -> str:
        return f"<scaling method {self.name}>"

    @property
    def length_dependent(self) -> bool:
        return self.grows_with_length or self.switches_at_length

    @property
    def keys(self) -> frozenset[str]:
        return self.required | self.optional

    # -- the expectation --------------------------------------------------------------------------------------
    def validate(self, s: dict[str, Any], rotary_dim: int, max_position: int) -> None:
        """Checks beyond the keys' own ranges, raising ExpectationError. May complete ``s`` with what the method
        derives once (LongRoPE's factor)."""

    def check_input(self, s: dict[str, Any]) -> None:
        """Checks of an expectation a user gives, beyond those every expectation passes (the suite builds the
        mistaken ones to name them)."""

    def from_config(self, scaling: dict, max_pos: int, top_original: Callable[[], int | None], out: dict) -> None:
        """Completes a config.json's scaling dict the way transformers reads the config: ``max_pos`` is its
        max_position_embeddings, ``top_original()`` a top-level original_max_position_embeddings (Phi-3), ``out``
        the expectation's fields being built. Raises ExpectationError."""

    def read_config(self, scaling: dict) -> dict:
        """The scaling a config.json's dict of this rope_type means, before it is read: its own, as it stands, unless
        the method says otherwise (HunYuan's "dynamic" beside an alpha is a fixed NTK base: :class:`Dynamic`)."""
        return scaling

    def moved_base(self, theta: float, scaling: dict, rotary_dim: int) -> float | None:
        """Where the method only moves the ladder's base, whatever the length, that base (which a multi-axis RoPE,
        taking no scaling, states as its rope_theta); None otherwise."""
        return None

    def to_hf(self, params: dict, max_position: int) -> int:
        """Adapts transformers 5.x ``rope_parameters`` (``params``, edited in place) to how transformers reads the
        method; returns the max_position_embeddings to give the config."""
        return max_position

    # -- the table ----------------------------------------------------------------------------------------------
    def variant(self, expect, seq_len: int | None) -> object:
        """What, besides the expectation, the table depends on for a call of length ``seq_len`` (None: nothing)."""
        return None

    def frequencies(self, expect, theta: list, table: Callable, variant: object) -> list:
        """theta'_i for every pair in mpmath: ``theta`` is the default ladder's table, ``table(b)`` the ladder of
        another base."""
        return theta

    def still_pairs(self, expect) -> range:
        """The pairs (by frequency index) the method gives frequency 0: they turn by no angle and pass through."""
        return range(0)

    def attention_factor(self, expect) -> mpmath.mpf:
        """The factor cos and sin are multiplied by."""
        return mpmath.mpf(1)

    def score_temperature(self, expect) -> mpmath.mpf:
        """The factor attention's softmax scale carries beyond 1/sqrt(head_dim)."""
        return mpmath.mpf(1)

    def mixing_bound(self, expect, m) -> Any:
        """For a mixing method: the error of the coefficient m of pair's theta', in unit roundoffs."""
        raise NotImplementedError(self.name)

    # -- what the suite draws and names --------------------------------------------------------------------------
    def examples(self, n_pairs: int, original: int) -> dict[str, dict]:
        """Canonical rope_scaling dicts (name -> dict) for a rotary of ``n_pairs`` pairs and original length
        ``original``: the cases tests and properties share. The base class's: a factor of 4 where ``factor`` is the
        method's one key, none otherwise."""
        return {self.name: {"rope_type": self.name, "factor": 4.0}} if self.keys == {"factor"} else {}

    def draw(self, pick: Callable, *, factor: float, original: int, n_pairs: int) -> dict:
        """A rope_scaling dict for strategies: ``pick(label, options)`` draws one of ``options`` ((None, ...): None
        or one of the rest, leaving a key out; (False, True): a boolean), ``pick(label, (lo, hi), n)`` a list of n
        floats in [lo, hi]. The base class's: the drawn factor where the method requires one."""
        return {"rope_type": self.name, **({"factor": factor} if "factor" in self.required else {})}

    def fit(self, s_first, s_last, original: int | None) -> Iterator[dict | None]:
        """The fingerprint's candidates of this method for a measured table whose first pair turns s_first times
        slower than the unscaled ladder's and whose last pair s_last times slower: rope_scaling dicts (None: no
        scaling), those of no original length at ``original`` None, then those of each original length tried."""
        return iter(())

    def fit_still(self, turning: int, rotary_dim: int) -> dict | None:
        """The fingerprint's candidate of this method for a table whose first ``turning`` of the rotary_dim / 2 pairs
        turn and the rest stay still (pairs of frequency 0 among the turning ones' halves): its rope_scaling dict, or
        None where the method leaves no pair still."""
        return None

    def readings(self, e) -> Iterator[tuple[str, str, Any]]:
        """The other readings a library may make of a config.json's dict of this method: (word, what, expectation),
        the word one of :data:`ropespec.spec.readings.WORDS` (:func:`ropespec.spec.readings.readings` adds those of
        every method)."""
        return iter(())

    def mistakes(self, e, seq_len: int | None, thetas: Callable, th0) -> Iterator[tuple[str, str, Any]]:
        """The tables a mistaken port of the method produces: (tag, what, table). ``thetas(expect, seq)`` is the
        reference's table, ``th0`` the unscaled one. The diagnosis, the fingerprint and the perturbation grid read
        this one list."""
        return iter(())


def get(name: str) -> ScalingMethod:
    """The method named ``name``; KeyError for an unknown one."""
    return REGISTRY[name]


def named_in_config(name):
    """The method's name for a rope_type a config.json gives (its own, or one of a method's ``config_names``); an
    unknown one as it is, for the expectation to refuse by name."""
    return next((m.name for m in REGISTRY.values() if name in m.config_names), name)


def names(where: Callable[["ScalingMethod"], bool] | None = None) -> tuple[str, ...]:
    """Every method's name (those ``where`` holds of), the unscaled ladder first."""
    return tuple(n for n, m in REGISTRY.items() if where is None or where(m))


def scales(name) -> bool:
    """Whether a rope_type scales the table (an unknown one is taken to: the expectation refuses it by name)."""
    return name not in REGISTRY or REGISTRY[name].scales


def promising(invariant: str) -> tuple[str, ...]:
    """The names of the methods that promise ``invariant``."""
    return tuple(n for n, m in REGISTRY.items() if invariant in m.promises)


def original_from_config(scaling: dict, max_pos: int, top_original: Callable[[], int | None]) -> None:
    """The original length of a config.json's YaRN or LongRoPE dict that states none, as transformers 5.x fills it
    in: a top-level original_max_position_embeddings (Phi-3), with the factor max_position_embeddings / original
    where none is given, else max_position_embeddings."""
    if "original_max_position_embeddings" not in scaling:
        top = top_original()
        if top is not None:
            scaling["original_max_position_embeddings"] = top
            scaling.setdefault("factor", max(1.0, max_pos / top))
        else:
            scaling["original_max_position_embeddings"] = max_pos


def g(s, m=1) -> mpmath.mpf:
    """YaRN's g(s, m) = 0.1 m ln s + 1, 1 for s <= 1 (read by yarn and by DeepSeek's score temperature)."""
    return mpmath.mpf(1) if s <= 1 else scaling.yarn_mscale(s, m)


def validated(s: dict[str, Any], rotary_dim: int, max_position: int) -> dict[str, Any]:
    """Validate an HF rope_scaling dict the way transformers 5.x does; return it normalised
    (legacy ``type`` renamed to ``rope_type``; LongRoPE's missing ``factor`` made explicit)."""
    if "rope_type" not in s and "type" in s:
        s["rope_type"] = s.pop("type")
    elif "type" in s:
        if s["type"] != s["rope_type"]:
            raise ExpectationError("rope_scaling.type", f"{s['type']!r} disagrees with rope_type {s['rope_type']!r}")
        s.pop("type")
    rt = s.get("rope_type")
    if rt is None:
        raise ExpectationError("rope_scaling.rope_type", "missing")
    if rt not in REGISTRY:
        raise ExpectationError("rope_scaling.rope_type", f"unknown {rt!r}{known_names(rt, names())}")
    method = get(rt)
    for k in s:  # a mistyped key first: it is why a required one is missing
        if k != "rope_type" and k not in method.keys:
            raise ExpectationError(f"rope_scaling.{k}", unknown_name(k, sorted(method.keys), f"key for rope_type {rt!r}"))
    for k in sorted(method.required):
        if k not in s:
            raise ExpectationError(f"rope_scaling.{k}", f"required for rope_type {rt!r}")

    def number(k: str, lo: float, hi: float = math.inf, lo_open: bool = False, rule: str | None = None) -> None:
        if k not in s:
            return
        v = s[k]
        if not _is_number(v) or (v <= lo if lo_open else v < lo) or v > hi:
            rule = rule or next(r for key, r in RANGES.items() if key.startswith("rope_scaling.") and k in key)
            raise ExpectationError(f"rope_scaling.{k}", f"must be {rule}, got {_short(v)}")

    number("factor", 1.0, FACTOR_MAX)
    number("attention_factor", 0.0, lo_open=True)
    for k in ("beta_fast", "beta_slow"):
        number(k, 0.0, lo_open=True)
    for k in ("mscale", "mscale_all_dim"):
        number(k, 0.0)
    number("low_freq_factor", 0.0, lo_open=True)
    number("high_freq_factor", 0.0, lo_open=True)
    if "original_max_position_embeddings" in s:
        v = s["original_max_position_embeddings"]
        if not _is_int(v) or not 1 <= v <= MAX_POSITION_MAX:
            raise ExpectationError("rope_scaling.original_max_position_embeddings",
                                   f"must be {RANGES['rope_scaling.original_max_position_embeddings']}, got {_short(v)}")
    if "truncate" in s and not isinstance(s["truncate"], bool):
        raise ExpectationError("rope_scaling.truncate", f"must be true or false, got {s['truncate']!r}")
    method.validate(s, rotary_dim, max_position)
    return s


def _discover() -> None:
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    ordered = sorted(REGISTRY.values(), key=lambda m: (m.order, m.name))
    REGISTRY.clear()
    REGISTRY.update((m.name, m) for m in ordered)


_discover()
__all__ = ["REGISTRY", "ScalingMethod", "get", "names", "promising", "scales"]
