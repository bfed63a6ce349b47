"""The expectation: one frozen description of what an implementation should compute.

Everything downstream (reference, tolerance, properties, reports) takes an :class:`Expect`,
never loose keyword arguments. Field names follow Hugging Face's config words.

An expectation is built from keyword arguments, a dict or inline JSON and validates itself:
every problem raises one :class:`ExpectationError` that names the offending field.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ropespec.spec import methods, params
from ropespec.spec.geometry import PairGeometry, validate_axes
from ropespec.spec.schema import (  # noqa: F401 (the vocabulary, importable from here as before)
    _is_int, _is_number, _short, ANGLE_DTYPES, AXES_KINDS, DIRECTIONS, AXES_MAX, AXES_MIN, CONVENTIONS, DEFAULT_AXIS_NAMES, DTYPES, ExpectationError, FACTOR_MAX, HEAD_DIM_MAX, MAX_POSITION_MAX, RANGES,
    unknown_name,
)

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


def _of_geometry(name: str, prop: bool = False):
    """Expect's answer to a question of its pair geometry: the geometry's, looked up at each call (so that a patched
    PairGeometry, as the proofs' mutations patch it, answers for every expectation)."""
    doc = getattr(PairGeometry, name).__doc__
    if prop:
        return property(lambda self: getattr(self.geometry, name), doc=doc)

    def ask(self, *args, **kwargs):
        return getattr(self.geometry, name)(*args, **kwargs)

    ask.__name__, ask.__qualname__, ask.__doc__ = name, f"Expect.{name}", doc
    return ask


@dataclass(frozen=True)
class Expect:
    """What a RoPE implementation under test should compute.

    ``rotary_dim`` may be given directly or through ``partial_rotary_factor`` (HF semantics:
    ``int(head_dim * factor)``); after construction ``rotary_dim`` always holds the resolved value.
    Dims at and beyond ``rotary_dim`` pass through unchanged, and the frequency exponent is
    normalised by ``rotary_dim``: theta_i = rope_theta ** (-2 i / rotary_dim).

    ``dtype`` is the precision of the implementation's output. ``angle_dtype`` and
    ``inv_freq_dtype`` state the precision promise the tolerance is derived from (see
    :mod:`ropespec.spec.tolerance`): the default float32/float32 is the class mainstream float32 code meets;
    ``"exact"`` is the strict class.

    ``n_heads`` and ``n_kv_heads`` (default: n_heads) describe attention layouts: q holds n_heads heads
    of head_dim, k and v n_kv_heads, and query head h reads key/value head h // (n_heads / n_kv_heads)
    (grouped-query attention, transformers' repeat_kv).
    """

    head_dim: int = 128
    rope_theta: float = 10000.0
    convention: str = "half"
    #: which way the pairs turn (:data:`ropespec.spec.schema.DIRECTIONS`): forward, RoFormer's, unless a model's code
    #: turns them by -p theta (nanochat's)
    direction: str = "forward"
    rotary_dim: int | None = None
    partial_rotary_factor: float | None = None
    #: the first dim that turns: dims [rotary_start, rotary_start + rotary_dim) turn, the others pass through (0: the
    #: first rotary_dim dims; LTX-Video pads dim mod 6 leading dims, cos 1 and sin 0, ahead of its rotated ones)
    rotary_start: int = 0
    dtype: str = "float32"
    max_position: int = 131072
    rope_scaling: Mapping[str, Any] | None = None
    angle_dtype: str = "float32"
    inv_freq_dtype: str = "float32"
    n_heads: int = 1
    n_kv_heads: int | None = None
    mrope_section: tuple[int, ...] | None = None
    mrope_interleaved: bool = False
    axes_dims_rope: tuple[int, ...] | None = None
    axes_parity: bool = False
    axis_names: tuple[str, ...] | None = None
    #: each axis's coordinate is (p_a + axes_offset[a]) * axes_scale[a], real numbers (Llama 4 vision's patches counted
    #: from 1: offset 1; DINOv3's patch centres in [-1, 1] times 2 pi: offset 0.5 - H/2, scale 4 pi/H); its pairs turn
    #: by the coordinate times their frequency; the positions handed over stay integers in [0, max_position)
    axes_offset: tuple[float, ...] | None = None
    axes_scale: tuple[float, ...] | None = None
    #: per-axis ladders: each axis's frequencies (:data:`ropespec.spec.schema.AXES_LADDERS`): theta^(-2k/d_a) (theta),
    #: or theta^(+-k/(K_a - 1)) over its K_a pairs (ascending: LTX-Video's theta^linspace(0, 1, K); descending:
    #: DINOv3's min/max periods); and whether they are dealt per frequency, pair j on axis j mod A (LTX-Video's)
    axes_ladder: str = "theta"
    axes_interleaved: bool = False
    #: each family's own parameters (:mod:`ropespec.spec.params`), by family name: only the blocks given (any
    #: other family's are its defaults, :meth:`params`); a file, a preset and ``--expect`` write their keys flat
    family_params: Mapping[str, Any] = dataclasses.field(default_factory=dict)

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
        if self.direction not in DIRECTIONS:
            raise ExpectationError("direction", f"must be {RANGES['direction']}, got {_short(self.direction)}")
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
            scaling = self._lift_mrope(dict(self.rope_scaling))
            if scaling is not None:
                scaling = _freeze(methods.validated(scaling, self.rotary_dim, self.max_position))
            object.__setattr__(self, "rope_scaling", scaling)
        validate_axes(self)
        self._validate_params()
        # the geometry asked while validating was read off fields validation then normalised: it is read again
        self.__dict__.pop("geometry", None)

    def _validate_params(self) -> None:
        """Each family's block is one of its registered class, validated against the core fields."""
        given = self.family_params
        if not isinstance(given, Mapping):
            raise ExpectationError("family_params", f"must map family names to their parameters, got {_short(given)}")
        blocks = params.blocks() if given else {}  # (the default expectation, built as this module loads, has none)
        for family, block in given.items():
            if family not in blocks or not isinstance(block, blocks[family]):
                raise ExpectationError("family_params", f"{family!r}: a {', '.join(blocks)} parameter block, got "
                                                        f"{_short(block)}")
            block.validate(self)
        object.__setattr__(self, "family_params", types.MappingProxyType(dict(given)))

    def params(self, family: str) -> params.Params:
        """The family's parameter block: the one given, or its defaults."""
        return self.family_params.get(family) or params.default(family)

    def _lift_mrope(self, s: dict) -> dict | None:
        """HF configs carry M-RoPE inside rope_scaling / rope_parameters (``{"type": "mrope", "mrope_section": [...]}``,
        Qwen3-VL's ``mrope_interleaved``): the keys become this expectation's fields and the rest stays the scaling
        dict (None where only rope_type default or mrope is left)."""
        lifted = False
        for key in ("mrope_section", "mrope_interleaved"):
            if key in s:
                lifted = True
                value = s.pop(key)
                mine = getattr(self, key)
                if mine not in (None, False) and _freeze(value) != mine:
                    raise ExpectationError(key, f"given twice, {_short(mine)} and rope_scaling.{key} {_short(value)}")
                object.__setattr__(self, key, value)
        kind = s.get("rope_type", s.get("type"))
        if kind == "mrope" or (lifted and not methods.scales(kind) and not set(s) - {"rope_type", "type"}):
            return None
        return s

    def __reduce__(self):
        """Pickled with its scaling dict thawed (a mappingproxy does not pickle): an expectation crosses
        process boundaries (the -j runners, the workers) and is rebuilt, validated, on the other side."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        fields["rope_scaling"] = _thaw(self.rope_scaling)
        fields["family_params"] = dict(self.family_params)
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
        start = self.rotary_start
        if not _is_int(start) or not 0 <= start <= hd - 2 or start % 2:
            raise ExpectationError("rotary_start", f"must be {RANGES['rotary_start']}, got {_short(start)}")
        if rd is None:
            rd = hd - start
        if _is_int(rd) and start and start + rd > hd:
            raise ExpectationError("rotary_dim", f"{rd} from rotary_start {start} exceeds head_dim {hd}")
        if not _is_int(rd) or rd < 2:
            raise ExpectationError("rotary_dim", f"must be an integer >= 2, got {rd!r}")
        if rd > hd:
            raise ExpectationError("rotary_dim", f"{rd} exceeds head_dim {hd}")
        if rd % 2:
            raise ExpectationError("rotary_dim", f"must be even (dims rotate in pairs), got {rd}")
        object.__setattr__(self, "rotary_dim", rd)

    # -- the pair geometry (ropespec.spec.geometry), asked here as of the expectation ---------------------------------
    @functools.cached_property
    def geometry(self) -> PairGeometry:
        """Which dims turn together, with which axis, at which frequency index, and where their results go."""
        return PairGeometry.of(self)

    n_pairs = _of_geometry("n_pairs", prop=True)
    multi_axis = _of_geometry("multi_axis", prop=True)
    n_axes = _of_geometry("n_axes", prop=True)
    axes = _of_geometry("axes", prop=True)
    axes_kind = _of_geometry("axes_kind")
    shared_ladder = _of_geometry("shared_ladder")
    pair_axes = _of_geometry("pair_axes")
    ladder = _of_geometry("ladder")
    rotated = _of_geometry("rotated", prop=True)
    passthrough = _of_geometry("passthrough", prop=True)
    pair_offsets = _of_geometry("pair_offsets")
    pair_scales = _of_geometry("pair_scales")
    coordinates = _of_geometry("coordinates", prop=True)
    integer_offsets = _of_geometry("integer_offsets", prop=True)
    coordinate = _of_geometry("coordinate")
    pair_positions = _of_geometry("pair_positions")
    accepts_positions = _of_geometry("accepts_positions")
    rows_at = _of_geometry("rows_at")
    position_shape = _of_geometry("position_shape")
    pairs = _of_geometry("pairs")
    out_pairs = _of_geometry("out_pairs")
    pair_index = _of_geometry("pair_index")
    output_dims = _of_geometry("output_dims")

    def outside_domain(self, positions) -> str | None:
        """The domain rule: every position handed to an implementation lies in [0, max_position) on every axis, in
        every family, form, layout and property: a table-based implementation has no row -1 and no row max_position,
        and real code is only ever called inside. An axis's offset (``axes_offset``) is the implementation's to add:
        the positions handed over stay in the domain. T5's bucket function, which takes relative positions, and a
        learned table's bounds invariant, which asks past max_len on purpose, are the documented exceptions. This
        returns how the first position outside reads ("position -1 on axis h"), or None when all lie inside."""
        p = np.asarray(positions)
        if p.size == 0:
            return None
        bad = (p < 0) | (p >= self.max_position)
        if not bad.any():
            return None
        at = np.argwhere(bad)[0]
        value = int(p[tuple(at)])
        axis = f" on axis {self.axes[at[-1]]}" if self.multi_axis and p.ndim >= 2 and p.shape[-1] == self.n_axes else ""
        return f"position {value}{axis}, outside [0, {self.max_position})"

    @property
    def rope_type(self) -> str:
        """The scaling method's name ("default" without a scaling dict); what it is is :attr:`method`."""
        return self.method.name

    @property
    def method(self):
        """The scaling method (:mod:`ropespec.spec.methods`): everything that depends on the rope_type asks it."""
        return methods.get(self.rope_scaling["rope_type"] if self.rope_scaling else "default")

    def replace(self, **changes: Any) -> "Expect":
        """A copy with fields changed (validated again). Changing head_dim re-derives rotary_dim
        unless rotary_dim or partial_rotary_factor is given too."""
        d = self.to_dict()
        if ("head_dim" in changes and "rotary_dim" not in changes
                and self.partial_rotary_factor is None and self.rotary_dim == self.head_dim):
            d.pop("rotary_dim")
        d.update(changes)
        for block in params.blocks().values():
            block.follow(d, changes)
        return Expect.from_dict(d)

    # -- (de)serialisation ----------------------------------------------------------------------
    def fields(self) -> dict[str, Any]:
        """Every field as a file names it, each family's block flat at its values (its defaults too)."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "family_params"}
        for family in params.blocks():
            block = self.params(family)
            d.update((f.name, getattr(block, f.name)) for f in dataclasses.fields(block))
        return d

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "family_params"}
        d["rope_scaling"] = _thaw(self.rope_scaling) if self.rope_scaling is not None else None
        if d["partial_rotary_factor"] is None:
            d.pop("partial_rotary_factor")
        if d["n_heads"] == 1 and d["n_kv_heads"] == 1:  # single-head: keep the JSON short
            d.pop("n_heads")
            d.pop("n_kv_heads")
        for key in ("mrope_section", "axes_dims_rope", "axis_names", "axes_offset", "axes_scale"):  # 1-D: as it was
            if d[key] is None:
                d.pop(key)
            else:
                d[key] = list(d[key])
        for key in ("mrope_interleaved", "axes_parity", "axes_interleaved"):
            if not d[key]:
                d.pop(key)
        if d["axes_ladder"] == "theta":  # the default ladder: keep the JSON as it was
            d.pop("axes_ladder")
        if d["direction"] == "forward":  # RoFormer's direction: keep the JSON as it was
            d.pop("direction")
        if not d["rotary_start"]:  # the rotated dims first: keep the JSON as it was
            d.pop("rotary_start")
        for block in self.family_params.values():  # a family's block: the keys that differ from its defaults
            d.update(block.changed())
        return d

    def to_json(self) -> str:
        """Compact JSON that :meth:`from_json` reads back to an equal expectation."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Expect":
        if not isinstance(d, Mapping):
            raise ExpectationError("expect", f"must be a JSON object, got {type(d).__name__}")
        owners = params.owners()
        known = {f.name for f in dataclasses.fields(cls) if f.name != "family_params"} | set(owners)
        for k in d:
            if k not in known:
                raise ExpectationError(str(k), unknown_name(str(k), sorted(known)))
        core, given = {}, {}
        for k, v in d.items():
            if k in owners:
                given.setdefault(owners[k], {})[k] = v
            else:
                core[k] = v
        blocks = params.blocks()
        return cls(**core, family_params={fam: blocks[fam](**kw) for fam, kw in given.items()})

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
        self.method.check_input(self.rope_scaling or {})
        return self

    def describe(self) -> str:
        """One short human line: 'head_dim 128, theta 1e+04, half, rotary 128, float32'."""
        parts = [f"head_dim {self.head_dim}", f"theta {self.rope_theta:g}", self.convention]
        if self.direction != "forward":
            parts.append(f"{self.direction} direction")
        if self.rotary_dim != self.head_dim:
            parts.append(f"rotary_dim {self.rotary_dim}" + (f" from dim {self.rotary_start}" if self.rotary_start else ""))
        if self.rope_scaling:
            parts.append(f"{self.rope_type} scaling")
        kind = self.axes_kind()
        if kind is not None:
            sizes = {"chunked": self.mrope_section, "interleaved": self.mrope_section,
                     "per-axis": self.axes_dims_rope}.get(kind)
            parts.append(f"{kind} axes {'/'.join(self.axes)}" + (f" {list(sizes)}" if sizes else "")
                         + (f" offset {[_num(v) for v in self.axes_offset]}" if self.axes_offset else "")
                         + (f" scale {[_num(v) for v in self.axes_scale]}" if self.axes_scale else "")
                         + (f" {self.axes_ladder} ladders" if self.axes_ladder != "theta" else "")
                         + (" interleaved per frequency" if self.axes_interleaved else ""))
        parts.extend(filter(None, (block.says() for block in self.family_params.values())))
        parts.append(self.dtype)
        return ", ".join(parts)


def _num(v: float) -> int | float:
    """A number as a reader writes it: an integer without its '.0', else its shortest repr."""
    return int(v) if float(v).is_integer() else float(f"{v:.6g}")


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


DEFAULT = Expect()


def _rebuild(fields: dict) -> "Expect":
    return Expect(**fields)
