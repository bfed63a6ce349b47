"""A loaded implementation under test: one TARGET at one array library and dtype, its call shape, the mode it
turned out to be in when loaded, and the host it runs in (a worker process, or in-process)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ropespec.implementations.contract import (
    DEFAULT_TIMEOUT,
    DEFAULT_WARMUP_TIMEOUT,
    Fault,
    Unsupported,
    function_differences,
    same_function,
)
from ropespec.implementations.families import Bound, Form, form_of
from ropespec.implementations.families.rope.decoder import as_generated
from ropespec.implementations.shape import CallShape
from ropespec.spec.expectation import Expect


@dataclass
class Implementation:
    """One implementation under test at one array library and dtype, and the host it runs in.

    ``mode`` is plain, factory or decoder (:data:`ropespec.spec.glossary.MODES`), fixed when it is loaded. ``expect`` is the
    fixed expectation, or None for a factory whose expectations the suite draws (then ``dtype`` and
    ``max_position`` still hold for every drawn one). ``load_fault`` is set when loading the TARGET ended or stalled
    its process: every property then fails with it.
    """

    name: str
    target: str
    mode: str
    array: str
    dtype: str
    max_position: int
    expect: Expect | None = None
    device: str = "cpu"
    skip_reason: str | None = None
    #: how the properties call it: family, form, layout, in place, a kernel's table
    shape: CallShape = field(default_factory=CallShape)
    expected_failures: dict = field(default_factory=dict)  # invariant id -> documented reason
    promise: dict = field(default_factory=dict)  # a factory's own precision class (make.promise), drawn with
    #: the multi-axis kinds a factory declares it computes (``make.axes``): its drawn expectations include them
    axes: tuple = ()
    #: what the report's header says of how it runs (its Triton kernels in Triton's interpreter)
    notes: list = field(default_factory=list)
    #: where it sits in a configuration matrix (``ropespec check`` with several expectations, dtypes or layouts):
    #: {"expect": label, "dtype": ..., "layout": ...}; None outside a matrix
    configuration: dict | None = None
    timeout: float | None = DEFAULT_TIMEOUT
    warmup_timeout: float | None = DEFAULT_WARMUP_TIMEOUT
    isolation: str = "worker process"  # or "in-process (<why>)"
    load_fault: Fault | None = None
    #: why no further property runs on this implementation (it ran out of memory: each would do so again), or None
    halted: str | None = None
    #: processes the code under test left running (a detached child), stopped with its worker
    left_behind: list = field(default_factory=list)
    #: the properties in which a call timed out (after MAX_TIMEOUTS of them the rest is not run)
    timed_out: list = field(default_factory=list)
    host: object = field(default=None, repr=False)
    _bound: dict = field(default_factory=dict, repr=False)
    _next: int = field(default=0, repr=False)

    def __getstate__(self):  # what crosses from a -j runner to the main process: no host, no handles
        state = dict(self.__dict__)
        state.update(host=None, _bound={}, _warmup=self.warmup_seconds, _output=self.output())
        return state

    def _new_handle(self) -> int:
        self._next += 1
        return self._next

    def _build(self, expect: Expect, fresh: bool) -> Bound:
        if self.load_fault is not None:
            raise Fault(f"not run: {self.load_fault.message}", self.load_fault.diagnosis)
        hid = self._new_handle()
        info = self.host.bind(hid, expect, fresh)
        for note in info.get("notes") or ():  # a factory that imported its kernels when called
            if note not in self.notes:
                self.notes.append(note)
        if info.get("decoder") and self.mode == "factory":  # a factory found to build decoders (the probe at load
            self.mode = "decoder"  # could not build one)
        form = self.form
        cls = form.decoder_bound if self.mode == "decoder" and form.decoder_bound else form.bound
        return cls(self.host, hid, expect, self.array, self.device)

    @property
    def form(self) -> Form:
        return form_of(self.shape)

    @property
    def multi_axis(self) -> str | None:
        """Which multi-axis RoPE it is checked as: "fixed" (its expectation is one), "drawn" (a factory declaring
        ``axes``, whose drawn expectations include some), or None (1-D RoPE only)."""
        if self.expect is not None:
            return "fixed" if self.expect.multi_axis else None
        return "drawn" if self.axes else None

    def answers(self, invariant: str) -> bool:
        """Whether the invariant is about this implementation (its form, in its mode)."""
        return self.form.answers(invariant, self.mode)

    def fresh(self, expect: Expect) -> Bound:
        """A new decoder for ``expect`` (decode mode keeps state, so every case needs its own)."""
        return self._build(expect, fresh=True)

    def release(self, bound: Bound) -> None:
        """Let go of a :meth:`fresh` one once its case is done: what its factory built (a whole model's weights) is
        not kept for the rest of the run."""
        drop = getattr(self.host, "drop", None)
        if drop is not None:
            drop(bound.hid)

    def bind(self, expect: Expect) -> Bound:
        """The callable for ``expect`` (factories are called once per expectation). A plain function
        computes its one expectation: bound to any other (beyond how far to test and the precision class
        promised) it is :class:`Unsupported`, so no property can silently check it against another."""
        if self.mode == "plain" and self.expect is not None and not same_function(expect, self.expect):
            raise Unsupported(f"a plain function computes one expectation ({self.expect.describe()}); checking it "
                              f"under another ({'; '.join(function_differences(expect, self.expect))}) needs a "
                              f"factory make(expect)")
        if expect not in self._bound:
            try:
                self._bound[expect] = self._build(expect, fresh=False)
            except (Unsupported, Fault) as e:  # a factory that hung or crashed on it is not asked again
                self._bound[expect] = e
        b = self._bound[expect]
        if isinstance(b, Exception):
            raise b
        return b

    def as_rope(self, expect: Expect):
        """The implementation as one function f(x, positions) for ``expect`` (diagnoses, fingerprint, precision), as
        its form reads it (a table through the RoPE it defines, a kernel with ropespec's table; a decoder prefilled as a
        generate loop prefills it, :func:`~ropespec.implementations.families.rope.decoder.as_generated`); None for a
        family that is no RoPE."""
        if self.mode == "decoder":
            self.bind(expect)
            return as_generated(lambda: self.fresh(expect), self.release, expect)
        reading = self.form.as_rope
        return None if reading is None else reading(self.bind(expect))

    @property
    def warmup_seconds(self) -> float | None:
        return getattr(self.host, "warmup_seconds", None) if self.host is not None else self.__dict__.get("_warmup")

    def output(self):
        """What the implementation printed (a :class:`~ropespec.implementations.boundary.processes.Captured`), or None."""
        return getattr(self.host, "output", None) if self.host is not None else self.__dict__.get("_output")

    def close(self) -> None:
        """Stop the host's worker process (a later call starts a fresh one)."""
        if self.host is not None:
            self.__dict__["_warmup"] = self.warmup_seconds
            self.__dict__["_output"] = self.output()
            self.host.close()
            self.left_behind = list(getattr(self.host, "left_behind", None) or [])

    def expect_dict(self) -> dict | None:
        """The expectation as a replay states it: the fields its family reads (all of them for RoPE's)."""
        if self.expect is None:
            return None
        d, fields = self.expect.to_dict(), form_of(self.shape).of.fields
        return d if fields is None else {k: d[k] for k in fields if k in d}

    def expect_words(self, d: dict) -> str | None:
        """A counterexample's expectation (its dict) in the words of a family whose expectation is not a RoPE's (its
        rules, or its own description: ALiBi's slopes and form, T5's buckets); None for RoPE's, whose dict is them."""
        family, e = form_of(self.shape).of, Expect.from_dict(d)
        words = family.rules(e) or family.describe(e)
        return None if words == e.describe() else words

    def describe(self) -> str:
        family = form_of(self.shape).of
        what = ((family.rules(self.expect) or family.describe(self.expect)) if self.expect is not None else
                family.drawn(self.dtype))
        where_ = self.name if self.name == self.target else f"{self.name} = {self.target}"
        return f"{where_} ({self.mode}, {self.array} arrays{self.shape.describe()}): {what}{self.unchecked_params()}"

    def unchecked_params(self) -> str:
        """What the expectation states that another family's properties check, said so beside its header: the
        attention family's query temperature (q and positions meet only in attention) or the position-id builders'
        video time rule is shown on a rope run's line, and none of the rope family's properties checks it."""
        if self.expect is None:
            return ""
        family = self.shape.family
        blocks = [block for fam, block in self.expect.family_params.items() if fam != family and block.says()]
        return "".join(f"; its {block.label} is the {block.family} family's: --family {block.family} checks it, "
                       f"not this run" for block in blocks)
