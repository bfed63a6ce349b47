"""The expectation: one frozen description of what an implementation should compute.

Everything downstream (reference, tolerance, properties, reports) takes an :class:`Expect`,
never loose keyword arguments. Field names follow Hugging Face's config words.

An expectation is built from keyword arguments, a dict or inline JSON and validates itself:
every problem raises one :class:`ExpectationError` that names the offending field.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

#: how dims pair up and where the results go: "half" rotates (i, i + r/2), "interleaved" (2i, 2i + 1), both
#: in place; "rope_interleave" reads interleaved pairs (2i, 2i + 1) and writes the rotated pair to (i, i + r/2),
#: the half layout (transformers' ``rope_interleave`` for DeepSeek-V3 and other MLA models: dot products are
#: kept because q and k get the same permutation).
CONVENTIONS = ("half", "interleaved", "rope_interleave")
DTYPES = ("float64", "float32", "float16", "bfloat16")
#: dtypes in which an angle or an inverse-frequency table may be formed; "exact" is the strict class.
ANGLE_DTYPES = ("exact",) + DTYPES
ROPE_TYPES = ("default", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope")

# Keys of HF's rope_scaling dict, per rope_type: (required, optional). "rope_type" (or the legacy
# "type") is always required. "ntk" (static NTK-aware, base * s^(r/(r-2))) is not an HF type; it is
# ropespec's name for the method that older transformers commits called "ntk".
_SCALING_KEYS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "default": (frozenset(), frozenset()),
    "linear": (frozenset({"factor"}), frozenset()),
    "ntk": (frozenset({"factor"}), frozenset()),
    "dynamic": (frozenset({"factor"}), frozenset({"original_max_position_embeddings"})),
    "yarn": (
        frozenset({"factor"}),
        frozenset(
            {
                "attention_factor",
                "beta_fast",
                "beta_slow",
                "mscale",
                "mscale_all_dim",
                "original_max_position_embeddings",
                "truncate",
            }
        ),
    ),
    "llama3": (
        frozenset({"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"}),
        frozenset(),
    ),
    "longrope": (
        frozenset({"short_factor", "long_factor"}),
        frozenset({"factor", "attention_factor", "original_max_position_embeddings"}),
    ),
}


#: The valid ranges, stated once (README copies this table). Every rejection names the field and its range.
HEAD_DIM_MAX = 4096  # even, 2 ... 4096 (real heads are 64-256; the mpmath reference grows with it)
MAX_POSITION_MAX = 2**53  # 2 ... 2^53: positions are int64 and exact in float64 (reference.fast's range)
FACTOR_MAX = 65536.0  # a scaling factor is in [1, 65536]
RANGES = {
    "head_dim": f"an even integer in [2, {HEAD_DIM_MAX}]",
    "rotary_dim": "an even integer in [2, head_dim]",
    "partial_rotary_factor": "a number in (0, 1]",
    "rope_theta": "a finite number > 1",
    "max_position": f"an integer in [2, 2^53 = {MAX_POSITION_MAX}]",
    "n_heads": "an integer >= 1; n_kv_heads divides it",
    "rope_scaling.factor": f"a number in [1, {FACTOR_MAX:g}]",
    "rope_scaling.original_max_position_embeddings": f"an integer in [1, {MAX_POSITION_MAX}]",
    "rope_scaling.attention_factor": "a finite number > 0",
    "rope_scaling.mscale, mscale_all_dim": "a finite number >= 0",
    "rope_scaling.beta_fast, beta_slow": "finite numbers > 0 with beta_fast > beta_slow",
    "rope_scaling.low_freq_factor, high_freq_factor": "finite numbers > 0 with low < high",
    "rope_scaling.short_factor, long_factor": f"rotary_dim/2 numbers in (0, {FACTOR_MAX:g}]",
}


class ExpectationError(ValueError):
    """A bad expectation. ``field`` names the offending field; ``str(err)`` is one line."""

    def __init__(self, field_name: str, problem: str):
        self.field = field_name
        self.problem = problem
        super().__init__(f"{field_name}: {problem}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) and math.isfinite(v)


def _short(v: Any) -> str:
    """A value as an error message shows it: never thousands of digits."""
    text = repr(v)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"


def _freeze(v: Any) -> Any:
    if isinstance(v, Mapping):
        return types.MappingProxyType({k: _freeze(x) for k, x in v.items()})
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    return v


def _thaw(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {k: _thaw(x) for k, x in v.items()}
    if isinstance(v, tuple):
        return [_thaw(x) for x in v]
    return v


@dataclass(frozen=True)
class Expect:
    """What a RoPE implementation under test should compute.

    ``rotary_dim`` may be given directly or through ``partial_rotary_factor`` (HF semantics:
    ``int(head_dim * factor)``); after construction ``rotary_dim`` always holds the resolved value.
    Dims at and beyond ``rotary_dim`` pass through unchanged, and the frequency exponent is
    normalised by ``rotary_dim``: theta_i = rope_theta ** (-2 i / rotary_dim).

    ``dtype`` is the precision of the implementation's output. ``angle_dtype`` and
    ``inv_freq_dtype`` state the precision promise the tolerance is derived from (see
    :mod:`spec.tolerance`): the default float32/float32 is the class mainstream float32 code meets;
    ``"exact"`` is the strict class.

    ``n_heads`` and ``n_kv_heads`` (default: n_heads) describe attention layouts: q holds n_heads heads
    of head_dim, k and v n_kv_heads, and query head h reads key/value head h // (n_heads / n_kv_heads)
    (grouped-query attention, transformers' repeat_kv).
    """

    head_dim: int = 128
    rope_theta: float = 10000.0
    convention: str = "half"
    rotary_dim: int | None = None
    partial_rotary_factor: float | None = None
    dtype: str = "float32"
    max_position: int = 131072
    rope_scaling: Mapping[str, Any] | None = None
    angle_dtype: str = "float32"
    inv_freq_dtype: str = "float32"
    n_heads: int = 1
    n_kv_heads: int | None = None

    def __post_init__(self) -> None:
        hd = self.head_dim
        if not _is_int(hd) or not 2 <= hd <= HEAD_DIM_MAX:
            raise ExpectationError("head_dim", f"must be {RANGES['head_dim']}, got {_short(hd)}")
        if hd % 2:
            raise ExpectationError("head_dim", f"must be even (dims rotate in pairs), got {hd}")
        if not _is_number(self.rope_theta) or self.rope_theta <= 1:
            raise ExpectationError("rope_theta", f"must be a finite number > 1, got {self.rope_theta!r}")
        object.__setattr__(self, "rope_theta", float(self.rope_theta))
        if self.convention not in CONVENTIONS:
            raise ExpectationError(
                "convention", f"must be one of {', '.join(CONVENTIONS)}, got {self.convention!r}"
            )
        if self.dtype not in DTYPES:
            raise ExpectationError("dtype", f"must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        for name in ("angle_dtype", "inv_freq_dtype"):
            if getattr(self, name) not in ANGLE_DTYPES:
                raise ExpectationError(
                    name, f"must be one of {', '.join(ANGLE_DTYPES)}, got {getattr(self, name)!r}"
                )
        if not _is_int(self.max_position) or not 2 <= self.max_position <= MAX_POSITION_MAX:
            raise ExpectationError("max_position", f"must be {RANGES['max_position']}, got {_short(self.max_position)}")
        self._resolve_rotary_dim()
        if not _is_int(self.n_heads) or self.n_heads < 1:
            raise ExpectationError("n_heads", f"must be an integer >= 1, got {self.n_heads!r}")
        kv = self.n_heads if self.n_kv_heads is None else self.n_kv_heads
        if not _is_int(kv) or kv < 1 or self.n_heads % kv:
            raise ExpectationError("n_kv_heads", f"must be an integer >= 1 dividing n_heads {self.n_heads}, got {kv!r}")
        object.__setattr__(self, "n_kv_heads", kv)
        if self.rope_scaling is not None:
            if not isinstance(self.rope_scaling, Mapping):
                raise ExpectationError("rope_scaling", f"must be a dict or null, got {type(self.rope_scaling).__name__}")
            scaling = _validate_scaling(dict(self.rope_scaling), self.rotary_dim, self.max_position)
            object.__setattr__(self, "rope_scaling", _freeze(scaling))

    def __reduce__(self):
        """Pickled with its scaling dict thawed (a mappingproxy does not pickle): an expectation crosses
        process boundaries (the -j runners, the workers) and is rebuilt, validated, on the other side."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        fields["rope_scaling"] = _thaw(self.rope_scaling)
        return (_rebuild, (fields,))

    def _resolve_rotary_dim(self) -> None:
        hd, rd, prf = self.head_dim, self.rotary_dim, self.partial_rotary_factor
        if prf is not None:
            if not _is_number(prf) or not 0 < prf <= 1:
                raise ExpectationError("partial_rotary_factor", f"must be a number in (0, 1], got {prf!r}")
            from_factor = int(hd * prf)
            if rd is not None and rd != from_factor:
                raise ExpectationError(
                    "rotary_dim",
                    f"{rd} disagrees with partial_rotary_factor {prf} x head_dim {hd} = {from_factor}",
                )
            rd = from_factor
        if rd is None:
            rd = hd
        if not _is_int(rd) or rd < 2:
            raise ExpectationError("rotary_dim", f"must be an integer >= 2, got {rd!r}")
        if rd > hd:
            raise ExpectationError("rotary_dim", f"{rd} exceeds head_dim {hd}")
        if rd % 2:
            raise ExpectationError("rotary_dim", f"must be even (dims rotate in pairs), got {rd}")
        object.__setattr__(self, "rotary_dim", rd)

    # -- derived -------------------------------------------------------------------------------
    @property
    def n_pairs(self) -> int:
        """Number of rotated pairs, rotary_dim / 2."""
        return self.rotary_dim // 2

    @property
    def rope_type(self) -> str:
        if not self.rope_scaling:
            return "default"
        return self.rope_scaling["rope_type"]

    def pairs(self) -> list[tuple[int, int]]:
        """Index pairs (a, b) of the input rotated together, pair i turning at theta_i."""
        r = self.rotary_dim
        if self.convention in ("interleaved", "rope_interleave"):
            return [(2 * i, 2 * i + 1) for i in range(r // 2)]
        return [(i, i + r // 2) for i in range(r // 2)]

    def out_pairs(self) -> list[tuple[int, int]]:
        """Where pair i's two results are written: (a, b) of :meth:`pairs` (in place) but for
        ``rope_interleave``, which writes them to (i, i + r/2), the half layout."""
        if self.convention == "rope_interleave":
            return self.replace(convention="half").pairs()
        return self.pairs()

    def pair_index(self) -> tuple[slice | np.ndarray, ...]:
        """(a, b, out_a, out_b): :meth:`pairs` and :meth:`out_pairs` as numpy indices of the head dim, each a
        slice (every convention's are strided ranges: a view, no gather) or, for a single pair, an array."""
        def index(ix):
            if len(ix) > 1 and len({q - p for p, q in zip(ix, ix[1:])}) == 1 and ix[1] > ix[0]:
                return slice(ix[0], ix[-1] + 1, ix[1] - ix[0])
            return np.array(ix)

        a, b = zip(*self.pairs())
        oa, ob = zip(*self.out_pairs())
        return tuple(index(list(ix)) for ix in (a, b, oa, ob))

    def output_dims(self) -> list[int]:
        """Where each input dim's result is written: ``output_dims()[j]`` is the output dim of input dim j
        (the identity but for ``rope_interleave``)."""
        perm = list(range(self.head_dim))
        for (a, b), (oa, ob) in zip(self.pairs(), self.out_pairs()):
            perm[a], perm[b] = oa, ob
        return perm

    def replace(self, **changes: Any) -> "Expect":
        """A copy with fields changed (validated again). Changing head_dim re-derives rotary_dim
        unless rotary_dim or partial_rotary_factor is given too."""
        d = self.to_dict()
        if ("head_dim" in changes and "rotary_dim" not in changes
                and self.partial_rotary_factor is None and self.rotary_dim == self.head_dim):
            d.pop("rotary_dim")
        d.update(changes)
        return Expect.from_dict(d)

    # -- (de)serialisation ----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["rope_scaling"] = _thaw(self.rope_scaling) if self.rope_scaling is not None else None
        if d["partial_rotary_factor"] is None:
            d.pop("partial_rotary_factor")
        if d["n_heads"] == 1 and d["n_kv_heads"] == 1:  # single-head: keep the JSON short
            d.pop("n_heads")
            d.pop("n_kv_heads")
        return d

    def to_json(self) -> str:
        """Compact JSON that :meth:`from_json` reads back to an equal expectation."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Expect":
        if not isinstance(d, Mapping):
            raise ExpectationError("expect", f"must be a JSON object, got {type(d).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        for k in d:
            if k not in known:
                raise ExpectationError(str(k), f"unknown field (known: {', '.join(sorted(known))})")
        return cls(**dict(d))

    @classmethod
    def from_json(cls, text: str) -> "Expect":
        return cls.from_dict(load_json(text))

    def __hash__(self) -> int:
        return hash(self.to_json())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Expect) and self.to_json() == other.to_json()

    def checked_input(self) -> "Expect":
        """This expectation, if it is a valid one for a user to give: on top of what every Expect
        satisfies, YaRN's beta_fast must exceed beta_slow (the suite itself builds expectations with the
        two swapped, to name that bug). Returns self; raises ExpectationError."""
        s = self.rope_scaling or {}
        fast, slow = s.get("beta_fast", 32), s.get("beta_slow", 1)
        if self.rope_type == "yarn" and not fast > slow:
            raise ExpectationError("rope_scaling.beta_fast", f"must exceed beta_slow ({fast!r} <= {slow!r}): "
                                                             f"{RANGES['rope_scaling.beta_fast, beta_slow']}")
        return self

    def describe(self) -> str:
        """One short human line: 'head_dim 128, theta 1e+04, half, rotary 128, float32'."""
        parts = [f"head_dim {self.head_dim}", f"theta {self.rope_theta:g}", self.convention]
        if self.rotary_dim != self.head_dim:
            parts.append(f"rotary_dim {self.rotary_dim}")
        if self.rope_scaling:
            parts.append(f"{self.rope_type} scaling")
        parts.append(self.dtype)
        return ", ".join(parts)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    d = {}
    for k, v in pairs:
        if k in d:
            raise ExpectationError(str(k), "appears twice in the JSON object")
        d[k] = v
    return d


def load_json(text: str, what: str = "expect") -> Any:
    """Parse JSON strictly: no duplicate keys, no nesting beyond what Python can parse, one-line errors."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as e:
        raise ExpectationError(what, f"not valid JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    except RecursionError:
        raise ExpectationError(what, "JSON nested too deeply to be an expectation") from None


def _validate_scaling(s: dict[str, Any], rotary_dim: int, max_position: int) -> dict[str, Any]:
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
    if rt not in ROPE_TYPES:
        raise ExpectationError("rope_scaling.rope_type", f"unknown {rt!r} (known: {', '.join(ROPE_TYPES)})")
    required, optional = _SCALING_KEYS[rt]
    for k in sorted(required):
        if k not in s:
            raise ExpectationError(f"rope_scaling.{k}", f"required for rope_type {rt!r}")
    for k in s:
        if k != "rope_type" and k not in required and k not in optional:
            raise ExpectationError(f"rope_scaling.{k}", f"unknown key for rope_type {rt!r}")

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
    if rt == "llama3" and not s["low_freq_factor"] < s["high_freq_factor"]:
        raise ExpectationError(
            "rope_scaling.high_freq_factor",
            f"must exceed low_freq_factor ({s['high_freq_factor']!r} <= {s['low_freq_factor']!r})",
        )
    if rt == "longrope":
        for k in ("short_factor", "long_factor"):
            v = s[k]
            if not isinstance(v, (list, tuple)) or not all(_is_number(x) and 0 < x <= FACTOR_MAX for x in v):
                raise ExpectationError(f"rope_scaling.{k}", f"must be a list of {RANGES['rope_scaling.short_factor, long_factor']}")
            if len(v) != rotary_dim // 2:
                raise ExpectationError(f"rope_scaling.{k}", f"must have rotary_dim/2 = {rotary_dim // 2} entries, got {len(v)}")
        if "factor" not in s:
            # transformers derives it from the configuration: max_position_embeddings / original length. It is
            # fixed here, once, so that how far a run tests (--max-position) never changes what is expected.
            L = s.get("original_max_position_embeddings") or max_position
            s["factor"] = max(1.0, max_position / L)
    return s


DEFAULT = Expect()


def _rebuild(fields: dict) -> "Expect":
    return Expect(**fields)
