"""The model family: a whole model around its RoPE, ``make(expect)`` returning the model (a factory only).

Two kinds of model are driven alike, in the implementation's own process:

* a decoder of the user's own (gpt-fast, nanoGPT style): ``forward(ids, positions=None, mask=None, cache=None) ->
  (logits, cache)``, ids (batch, tokens) integers, positions (batch, tokens) (or (batch, tokens, axes) for a
  multi-axis RoPE) or None to infer them, mask (batch, tokens so far) of 1 for a real token and 0 for a pad (left
  padding) or None, cache what its previous forward returned or None (a model that keeps no cache returns None:
  what needs a cache is skipped, and says so); it says the positions it handed its RoPE in its last forward as
  ``rope_positions``, a list of arrays, one per application;
* a transformers causal LM (a ``torch.nn.Module`` with a ``config``): called with ``input_ids`` (or
  ``inputs_embeds``), ``attention_mask``, ``position_ids`` and its cache (``cache``), its rotary modules hooked to
  record the ``position_ids`` they are handed; its ``generate`` is its greedy generation.

A decoder of its own may have ``generate(ids, mask, steps)`` returning the tokens its greedy generation appends (its
own generate loop): model.stateless asks it twice. What the rest of the plumbing needs, each optional (a property whose
door a model lacks says so and checks nothing):

* packing (model.packing): ``forward(ids, documents=[lengths])``, one row of documents packed end to end, each its own
  sequence (its positions from 0, its attention within it);
* windows (model.window): ``windows``, one entry per layer, the number of keys a sliding layer's token sees (itself
  included) or None for a global layer, and ``hidden_states``, each layer's output (batch, tokens, hidden) of its last
  forward;
* a context shift (model.shift): ``shift(cache, d) -> cache``, its cached keys re-rotated by d;
* drafts (model.drafts): ``crop(cache, length) -> cache``, the cache cut back to its first tokens (drafts rejected),
  and ``generate(ids, mask, steps, draft=model)``, its assisted generation with a draft model;
* context parallelism (model.shards): ``shard_positions(lengths, cp_size, rank, scheme) -> (indices, positions)``, the
  tokens of a packed row (documents of ``lengths``) rank ``rank`` of ``cp_size`` owns, as indices into the row, and the
  positions it turns them at, for ``scheme`` "contiguous" or "load-balanced" (each document in 2 x cp_size chunks, rank
  r owning chunks r and 2 cp_size - 1 - r).

A transformers model is packed through transformers' own ``DataCollatorWithFlattening`` (per-document position_ids, no
attention mask, no cache), declares its windows by its config (``layer_types`` and ``sliding_window``) and hands its
layers' outputs as ``output_hidden_states``, crops its cache by ``Cache.crop`` and generates with a draft by
``generate(assistant_model=...)``; it has no context shift and no shard builder.

The cache stays in the model's process: a forward hands back a handle to it, which the next forward names.
"""

from __future__ import annotations

import hashlib
import logging

import numpy as np

from ropespec.implementations.contract import DeclinedCase, Fault, Unsupported
from ropespec.implementations.families.base import Bound, Form, Op, i64, register


# -- driving a model ---------------------------------------------------------------------------------------------------
class _Driver:
    """A model as the family calls it: ``forward(ids, mask, positions, cache, embeds) -> (logits float64 (B, T, V),
    the positions its RoPE was handed, one int64 array (B, T) or (B, T, A) per application, the new cache)``."""

    def __init__(self, model, host, e):
        self.model, self.host, self.e = model, host, e
        self.hidden = None  # each layer's output of the last forward, where it was asked


class _Decoder(_Driver):
    """A decoder of the user's own, by its protocol."""

    def forward(self, ids, mask, positions, cache, embeds, hidden=False, documents=None):
        if embeds:
            raise Unsupported("a decoder of its own takes token ids only (no inputs_embeds)")
        model = self.model
        model.rope_positions = []
        native = lambda a: None if a is None else self.host.native_positions(a, self.e)  # noqa: E731
        call = model.forward
        if documents is not None:
            if not _takes(model.forward, "documents"):
                raise Unsupported("its forward takes no documents= (packed documents)")
            lengths = [int(n) for n in documents]
            call = _declining("forward(ids, documents=lengths)", lambda *a: model.forward(*a, documents=lengths))
        try:
            out = self.host.call("forward(ids, positions, mask, cache)", call, native(ids), native(positions),
                                 native(mask), cache)
        except Fault as f:
            raise _with_handed(f, [_ints(p) for p in (getattr(model, "rope_positions", None) or [])], ids.shape) \
                from None
        if not (isinstance(out, tuple) and len(out) == 2):
            raise Fault(f"forward returned {type(out).__name__}, expected (logits, cache)", "shape")
        logits, new = out
        said = getattr(model, "rope_positions", None)
        if said is None:
            raise Fault("the decoder says no rope_positions: its forward records the positions it hands its RoPE",
                        "shape")
        self.hidden = _layers(getattr(model, "hidden_states", None), ids.shape) if hidden else None
        return _floats(logits, ids.shape), [_rows(_ints(p), len(ids)) for p in said], new

    def bare(self, ids, positions, cache, masked=False):
        native = lambda a: None if a is None else self.host.native_positions(a, self.e)  # noqa: E731
        self.model.rope_positions = []
        if masked and cache is not None:
            raise Unsupported("a decoder's masked call after a cache is its forward's (the mask spans the cache)")
        mask = np.ones(ids.shape, dtype=np.int64) if masked else None  # the same call with a mask of ones
        logits, new = self.host.call("forward(ids, positions, mask, cache)", self.model.forward, native(ids),
                                     native(positions), native(mask), cache)
        said = getattr(self.model, "rope_positions", None) or []
        return _floats(logits, ids.shape), [_rows(_ints(p), len(ids)) for p in said], new

    def windows(self):
        said = getattr(self.model, "windows", None)
        if said is None:
            raise Unsupported("the decoder says no windows (one entry per layer: its sliding window, or None)")
        return [("sliding", int(w)) if w is not None else ("full", None) for w in said]


def _declining(says: str, fn):
    """``fn``, a door of the model's own, whose NotImplementedError declines the one input it was handed (a shard
    builder of one scheme asked for another): DeclinedCase, the case not asked and the others asked, never an exception
    of the model's."""

    def call(*args):
        try:
            return fn(*args)
        except NotImplementedError as e:
            raise DeclinedCase(f"{says} declines it: {e or 'NotImplementedError'}") from None

    return call


def _with_handed(fault: Fault, handed: list, ids_shape) -> Fault:
    """A forward that raised, said with the positions it had handed its RoPE before it did, where they were recorded:
    positions for another number of tokens than the forward's (a slice of positions longer or shorter than its chunk)
    are the fault its RoPE call raised on (``shape``, the count measured); positions for as many tokens are said as
    they were."""
    if not handed or fault.diagnosis != "exception":
        return fault
    b, t = int(ids_shape[0]), int(ids_shape[1])
    first = np.asarray(handed[0])
    row = first[0] if first.ndim >= 2 else first
    shown = ", ".join(str(int(v)) for v in np.asarray(row).reshape(len(row), -1)[:, 0][:12]) + \
        (", ..." if len(row) > 12 else "")
    if first.ndim >= 2 and first.shape[1] != t:
        tokens = f"{t} token{'s' * (t != 1)}"
        return Fault(f"its forward of {tokens} handed its RoPE {first.shape[1]} positions ([{shown}] in its first "
                     f"row): a slice of positions {'longer' if first.shape[1] > t else 'shorter'} than the tokens it "
                     f"turns, on which {fault.what}", "shape")
    return Fault(f"{fault.what} (its RoPE had been handed positions [{shown}] in its first row of {b})", "exception")


def _takes(fn, name: str) -> bool:
    import inspect

    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _layers(states, ids_shape) -> np.ndarray:
    """Each layer's output, float64 (layers, batch, tokens, hidden)."""
    if not states:
        raise Unsupported("its forward records no hidden_states (each layer's output)")
    out = []
    for h in states:
        if hasattr(h, "detach"):
            h = h.detach().to("cpu").double().numpy()
        h = np.asarray(h, dtype=np.float64)
        if h.ndim != 3 or h.shape[:2] != tuple(ids_shape):
            raise Fault(f"a layer's hidden state of shape {h.shape}, expected ({ids_shape[0]}, {ids_shape[1]}, "
                        "hidden)", "shape")
        out.append(h)
    return np.stack(out)


class _Transformers(_Driver):
    """A transformers causal LM, driven as ``generate`` drives it: each forward's inputs are its own
    ``prepare_inputs_for_generation``'s, and where no positions are given they are its own generation code's
    (``_prepare_position_ids_for_generation`` from the attention mask of the whole sequence so far); the tokens so far
    are kept with the cache; its rotary modules are hooked to record the positions they are handed."""

    def __init__(self, model, host, e):
        super().__init__(model, host, e)
        self.seen: list = []
        seen = self.seen  # the hooks hold the list, not the driver: no cycle keeps a model let go of alive

        axes = e.n_axes if e.multi_axis else None

        def record(module, args, kwargs, output):
            pos = kwargs.get("position_ids", args[1] if len(args) > 1 else None)
            if pos is not None:
                arr = _ints(pos, axes_first=True)
                if axes and arr.ndim == 3 and arr.shape[-1] == 1:  # one row of ids for every axis: each axis turns by it
                    arr = np.repeat(arr, axes, axis=-1)
                seen.append(arr)

        for module in model.modules():
            name = type(module).__name__
            if name.endswith("RotaryEmbedding") and "Vision" not in name:
                module.register_forward_hook(record, with_kwargs=True)

    def forward(self, ids, mask, positions, cache, embeds, hidden=False, documents=None):
        import torch

        model = self.model
        if documents is not None:
            return self._packed(ids, documents, positions, hidden)
        held = cache or {"cache": None, "ids": None}
        new = torch.as_tensor(np.asarray(ids, dtype=np.int64))
        every = new if held["ids"] is None else torch.cat([held["ids"], new], dim=1)
        full_mask = torch.ones_like(every) if mask is None else torch.as_tensor(np.asarray(mask, dtype=np.int64))
        t = new.shape[1]
        if positions is not None:  # given: the new tokens' own (an M-RoPE's axes first, as transformers takes them)
            p = np.asarray(positions, dtype=np.int64)
            full = torch.as_tensor(np.moveaxis(p, -1, 0) if p.ndim == 3 else p)
        else:  # the whole sequence's, from its mask, as generate makes them before its first forward (a new
            # token's is one more than the last real one's, as generate's next step makes it), sliced to the new
            full = model._prepare_position_ids_for_generation(every, {"attention_mask": full_mask})
        inputs = model.prepare_inputs_for_generation(every, next_sequence_length=t, cache=held["cache"],
                                                     attention_mask=full_mask, position_ids=full, use_cache=True,
                                                     is_first_iteration=held["cache"] is None)
        if embeds:
            inputs["inputs_embeds"] = model.get_input_embeddings()(inputs.pop("input_ids"))
        out = self._call(inputs, hidden, t)
        kept = cache_of(out)
        if kept is None:  # a model that keeps no cache
            return _floats(out.logits, ids.shape), [_rows(p, len(ids)) for p in self.seen], None
        logits = out.logits[:, -t:] if out.logits.shape[1] > t else out.logits  # a re-prefill: the whole sequence's
        return _floats(logits, ids.shape), [_rows(p[:, -t:], len(ids)) for p in self.seen], {"cache": kept, "ids": every}

    def _call(self, inputs, hidden: bool, t: int):
        import torch

        self.seen.clear()
        try:
            with torch.no_grad():
                out = self.host.call("the model's forward", lambda: self.model(**inputs, return_dict=True,
                                                                               output_hidden_states=hidden))
        except Fault as f:
            raise _with_handed(f, self.seen, (len(inputs["input_ids"] if "input_ids" in inputs else
                                                  inputs["inputs_embeds"]), t)) from None
        self.hidden = None
        if hidden:  # each layer's output (the embeddings' first): the new tokens'
            states = getattr(out, "hidden_states", None)
            self.hidden = _layers([h[:, -t:] for h in states[1:]] if states else None, (out.logits.shape[0], t))
        return out

    def _packed(self, ids, documents, positions, hidden):
        """One row of documents through transformers' own packing door: DataCollatorWithFlattening's position_ids
        (each document's from 0), no attention mask and no cache, as a padding-free training step calls the model
        (its masks split the row into documents where the positions restart). ``positions`` given (one sequence
        drawn as one document) are handed as they are."""
        import torch
        from transformers import DataCollatorWithFlattening

        row = [int(i) for i in np.asarray(ids)[0]]
        if positions is None:
            docs, start = [], 0
            for n in documents:
                docs.append({"input_ids": row[start:start + int(n)]})
                start += int(n)
            batch = DataCollatorWithFlattening(return_tensors="pt")(docs)
            given = batch["position_ids"]
            if self.e.multi_axis:  # M-RoPE's packing door: the text positions, then each axis's (transformers reads
                # packed documents off a first row of text positions; ids of the axes alone are one sequence)
                given = torch.cat([given[None], given[None].expand(self.e.n_axes, -1, -1)])
        else:
            p = np.asarray(positions, dtype=np.int64)
            given = torch.as_tensor(np.moveaxis(p, -1, 0) if p.ndim == 3 else p)
        inputs = {"input_ids": torch.as_tensor(np.asarray(ids, dtype=np.int64)), "position_ids": given,
                  "use_cache": False}
        out = self._call(inputs, hidden, ids.shape[1])
        return _floats(out.logits, ids.shape), [_rows(p, len(ids)) for p in self.seen], None

    def bare(self, ids, positions, cache, masked=False):
        """The model called as a padding-free training step calls it: input_ids and position_ids, no attention mask;
        after a cache, the cache (a decoding step whose position is given). ``masked``: the same call with an
        attention mask of ones."""
        import torch

        p = np.asarray(positions, dtype=np.int64)
        inputs = {"input_ids": torch.as_tensor(np.asarray(ids, dtype=np.int64)),
                  "position_ids": torch.as_tensor(np.moveaxis(p, -1, 0) if p.ndim == 3 else p),
                  "use_cache": cache is not None}
        if masked:
            held = 0 if cache is None else cache["ids"].shape[1]
            inputs["attention_mask"] = torch.ones((ids.shape[0], held + ids.shape[1]), dtype=torch.int64)
        if cache is not None:
            inputs[cache_keyword(self.model)] = cache["cache"]
        t = ids.shape[1]
        out = self._call(inputs, False, t)
        seen = [_rows(q[:, -t:], len(ids)) for q in self.seen]
        if cache is None:
            return _floats(out.logits, ids.shape), seen, None
        every = torch.cat([cache["ids"], torch.as_tensor(np.asarray(ids, dtype=np.int64))], dim=1)
        return _floats(out.logits[:, -t:], ids.shape), seen, {"cache": cache_of(out), "ids": every}

    def windows(self):
        config = self.model.config.get_text_config()
        w = getattr(config, "sliding_window", None)
        types = getattr(config, "layer_types", None)
        if types is None:  # one mask for every layer (Mistral's): sliding where the config has a window
            types = ["sliding_attention" if w else "full_attention"] * config.num_hidden_layers
        return [("sliding", int(w)) if k == "sliding_attention" and w else ("full", None) if k == "full_attention"
                else (str(k), None) for k in types]


def cache_keyword(model) -> str:
    """The keyword a transformers model's forward takes its cache by: ``cache`` from transformers 5.2x (where
    ``past_key_values`` is deprecated and warns at every call), ``past_key_values`` before."""
    return "cache" if _takes_named(model.forward, "cache") else "past_key_values"


def cache_of(out):
    """The cache a transformers model's forward returned (``cache``, or ``past_key_values`` before 5.2x), or None."""
    kept = getattr(out, "cache", None)
    return kept if kept is not None else getattr(out, "past_key_values", None)


def _takes_named(fn, name: str) -> bool:
    """Whether ``fn`` names the parameter ``name`` itself (not only through **kwargs)."""
    import inspect

    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _driver(host, hid, fn, e) -> _Driver:
    """The driver of ``fn``, made at its first forward; those of models the host no longer holds go (with the models
    they hold: a property builds a fresh model per example, and each one kept would hold its weights)."""
    drivers = host.__dict__.setdefault("model_drivers", {})
    live = {id(f) for f in host.fns.values()}
    for gone in [k for k in drivers if k not in live]:
        del drivers[gone]
    if hid not in drivers or drivers[hid].model is not fn:
        torch = _torch_module(fn)
        drivers[hid] = (_Transformers if torch else _Decoder)(fn, host, e)
    return drivers[hid]


def _torch_module(fn) -> bool:
    import sys

    torch = sys.modules.get("torch")
    return torch is not None and isinstance(fn, torch.nn.Module) and hasattr(fn, "config")


def _floats(logits, ids_shape) -> np.ndarray:
    if hasattr(logits, "detach"):
        logits = logits.detach().to("cpu").double().numpy()
    arr = np.asarray(logits, dtype=np.float64)
    if arr.ndim != 3 or arr.shape[:2] != tuple(ids_shape):
        raise Fault(f"logits of shape {arr.shape}, expected ({ids_shape[0]}, {ids_shape[1]}, vocab)", "shape")
    return arr


def _rows(p: np.ndarray, batch: int) -> np.ndarray:
    """Positions one row of which every row of the batch shares ((T,), or (1, T)), as every row's."""
    if p.ndim == 1:
        p = p[None]
    return np.broadcast_to(p, (batch,) + p.shape[1:]) if p.shape[0] == 1 and batch > 1 else p


def _ints(p, axes_first: bool = False) -> np.ndarray:
    """Recorded positions as int64 (B, T) or (B, T, A); ``axes_first``: transformers' M-RoPE ids, (A, B, T), their axes
    moved last."""
    if hasattr(p, "detach"):
        p = p.detach().to("cpu").numpy()
    arr = np.asarray(p)
    if arr.dtype.kind == "f" and np.all(arr == np.round(arr)):
        arr = arr.astype(np.int64)
    return np.moveaxis(arr, 0, -1) if axes_first and arr.ndim == 3 else arr


# -- the operations -------------------------------------------------------------------------------------------------
def op_forward(host, fn, e, ids, mask, positions, cache, embeds, hidden=False):
    """(logits, positions handed its RoPE, the handle of the cache after it), and each layer's output where ``hidden``."""
    caches = host.__dict__.setdefault("model_caches", {})
    driver = _driver(host, id(fn), fn, e)
    logits, seen, new = driver.forward(i64(ids), None if mask is None else i64(mask),
                                       None if positions is None else i64(positions),
                                       caches.get(cache) if cache is not None else None, bool(embeds), bool(hidden))
    handle = _kept(host, logits, seen, new)
    return (logits, seen, handle, driver.hidden) if hidden else (logits, seen, handle)


def _recorded(seen) -> None:
    """Declines a forward that handed no positions to a RoPE: nothing to compare."""
    if not seen:  # a model without RoPE, or one whose record of it is empty
        raise Unsupported("its forward handed no positions to a RoPE (a transformers model: no rotary module, "
                          "*RotaryEmbedding, was called; a decoder of its own: rope_positions is empty): the model "
                          "family checks the positions a model feeds its RoPE")


def _kept(host, logits, seen, new):
    """The handle of the cache ``new`` (None where the model returned none), after a forward that handed positions to
    a RoPE."""
    caches = host.__dict__.setdefault("model_caches", {})
    _recorded(seen)
    if new is None:  # a model without a cache (its forward returned none): no handle, and no later call names one
        return None
    handle = max(caches, default=0) + 1
    caches[handle] = new
    while len(caches) > 16:  # the oldest caches go: a property holds a few at a time
        caches.pop(min(caches))
    return handle


def op_packed(host, fn, e, ids, lengths, positions, hidden=False):
    """(logits, positions handed its RoPE) of one row of documents of ``lengths`` packed end to end, through the
    model's packing door; ``positions`` given: handed as they are (one sequence, never to be split)."""
    driver = _driver(host, id(fn), fn, e)
    logits, seen, _ = driver.forward(i64(ids), None, None if positions is None else i64(positions), None, False,
                                     bool(hidden), [int(n) for n in lengths])
    _recorded(seen)
    return logits, seen


def op_bare(host, fn, e, ids, positions, cache, masked=False):
    """(logits, positions handed its RoPE, the cache's handle) of a forward given its positions and no attention mask
    (no documents said): what a model must take for one sequence."""
    caches = host.__dict__.setdefault("model_caches", {})
    driver = _driver(host, id(fn), fn, e)
    logits, seen, new = driver.bare(i64(ids), i64(positions), caches.get(cache) if cache is not None else None,
                                    bool(masked))
    return logits, seen, _kept(host, logits, seen, new)


def op_crop(host, fn, e, cache, length):
    """The handle of the cache ``cache`` cut back to its first ``length`` tokens (drafts rejected), by the model's own
    crop: a transformers cache's ``crop``, a decoder's ``crop(cache, length)``."""
    caches = host.__dict__.setdefault("model_caches", {})
    held = caches[cache]
    if _torch_module(fn):
        n = held["ids"].shape[1]
        kept = held["cache"]
        host.call("the cache's crop", lambda: kept.crop(-(n - int(length))) if n > length else None)
        new = {"cache": kept, "ids": held["ids"][:, :int(length)]}
    else:
        own = getattr(fn, "crop", None)
        if not callable(own):
            raise Unsupported("the model has no crop(cache, length) of its own (drafts rejected from its cache)")
        new = host.call("crop(cache, length)", _declining("crop(cache, length)", own), held, int(length))
    handle = max(caches, default=0) + 1
    caches[handle] = new
    return handle


def op_drafting(host, fn, e, cache, k):
    """Readies the cache ``cache`` for k drafts to be verified and some cut back: what transformers' assisted loop does
    after the prefill (``Cache.activate_past_recording``: a sliding or recurrent layer keeps what a crop restores); a
    decoder's cache needs nothing."""
    held = host.__dict__.setdefault("model_caches", {})[cache]
    ready = getattr(held["cache"], "activate_past_recording", None) if _torch_module(fn) else None
    if ready is not None:
        host.call("the cache's activate_past_recording", lambda: ready(recurrent_states_to_keep=int(k)))


def op_windows(host, fn, e):
    """The model's layers as it declares them: (kind, window) each, ("sliding", w), ("full", None), or another kind."""
    return _driver(host, id(fn), fn, e).windows()


def op_shift(host, fn, e, cache, delta):
    """The handle of the model's cache ``cache`` re-rotated by ``delta`` (its context shift)."""
    caches = host.__dict__.setdefault("model_caches", {})
    own = getattr(fn, "shift", None)
    if _torch_module(fn) or not callable(own):
        raise Unsupported("the model has no shift(cache, d) of its own (a context shift of its cached keys)")
    new = host.call("shift(cache, d)", _declining("shift(cache, d)", own), caches[cache], int(delta))
    handle = max(caches, default=0) + 1
    caches[handle] = new
    return handle


def op_shard(host, fn, e, lengths, cp, rank, scheme):
    """(indices, positions): the tokens rank ``rank`` of ``cp`` owns of a packed row of documents of ``lengths``, and
    the positions it turns them at, by the model's own shard builder."""
    own = getattr(fn, "shard_positions", None)
    if _torch_module(fn) or not callable(own):
        raise Unsupported("the model has no shard_positions(lengths, cp_size, rank, scheme) of its own (a context-"
                          "parallel position builder)")
    says = "shard_positions(lengths, cp_size, rank, scheme)"
    out = host.call(says, _declining(says, own), [int(n) for n in lengths], int(cp),
                    int(rank), str(scheme))
    if not (isinstance(out, tuple) and len(out) == 2):
        raise Fault(f"shard_positions returned {type(out).__name__}, expected (indices, positions)", "shape")
    idx, pos = (_ints(a).reshape(-1).astype(np.int64) for a in out)
    if idx.shape != pos.shape:
        raise Fault(f"shard_positions returned {idx.size} indices and {pos.size} positions", "shape")
    return idx, pos


def op_generate(host, fn, e, ids, mask, steps, draft="", copies=1):
    """(tokens, positions): the tokens the model's own greedy generation appends to ``ids`` in ``steps`` steps ((B
    copies, at most steps) int64), and the positions each of its forwards handed its RoPE, in order: a transformers
    model's ``generate``, a decoder's own ``generate(ids, mask, steps)``; a decoder without one declines. ``draft``
    "same" or "other": its assisted generation with a draft model, a copy of itself (every draft accepted) or another
    of its kind drawn from another seed (nearly every draft rejected): transformers' ``assistant_model``, a decoder's
    ``generate(..., draft=model)``. ``copies`` above 1: each row continued that many times, row i's copies next to it
    (a request's n samples): transformers' ``num_return_sequences``, sampled from the one token greedy search takes,
    a decoder's ``generate(..., copies=n)``. A transformers model generates every one of the ``steps`` tokens (its
    generation config's and its draft's end-of-sequence token set aside for the call: a generation ended early would
    leave its forwards unchecked)."""
    if _torch_module(fn):
        import torch

        t = ids.shape[1]
        ids_t = torch.as_tensor(np.asarray(ids, dtype=np.int64))
        mask_t = torch.ones_like(ids_t) if mask is None else torch.as_tensor(np.asarray(mask, dtype=np.int64))
        config = fn.config.get_text_config()
        pad = getattr(config, "pad_token_id", None)
        extra = {}
        if draft:
            extra["assistant_model"] = _draft_of(fn, draft)
        if copies > 1:  # sampled from the one token greedy search takes (its argmax, the first of a tie)
            from transformers import LogitsProcessorList

            def argmax_only(_, scores):
                keep = torch.nn.functional.one_hot(scores.argmax(dim=-1), scores.shape[-1]).bool()
                return scores.masked_fill(~keep, float("-inf"))

            extra.update(num_return_sequences=int(copies), do_sample=True,
                         logits_processor=LogitsProcessorList([argmax_only]))
        driver = _driver(host, id(fn), fn, e)
        driver.seen.clear()
        configs = [m.generation_config for m in (fn, extra.get("assistant_model")) if m is not None]
        ends = [c.eos_token_id for c in configs]
        quiet = _AssistantsOwnCall()
        generation_log = logging.getLogger("transformers.generation.utils")
        try:
            for c in configs:
                c.eos_token_id = None
            generation_log.addFilter(quiet)
            with torch.no_grad():
                out = host.call("the model's generate", lambda: fn.generate(
                    input_ids=ids_t, attention_mask=mask_t, max_new_tokens=int(steps),
                    pad_token_id=0 if pad is None else pad, **{"do_sample": False, **extra}))
        finally:
            generation_log.removeFilter(quiet)
            for c, end in zip(configs, ends):
                c.eos_token_id = end
        seen = list(driver.seen)
        driver.seen.clear()
        return _ints(out)[:, t:].astype(np.int64), seen
    own = getattr(fn, "generate", None)
    if not callable(own):
        raise Unsupported("the model has no generate(ids, mask, steps) of its own")
    native = lambda a: None if a is None else host.native_positions(a, e)  # noqa: E731
    extra, says = {}, "generate(ids, mask, steps)"
    if draft:
        if not _takes(own, "draft"):
            raise Unsupported("its generate takes no draft= (assisted generation with a draft model)")
        extra["draft"], says = _draft_of(fn, draft), "generate(ids, mask, steps, draft)"
    if copies > 1:
        if not _takes(own, "copies"):
            raise Unsupported("its generate takes no copies= (each row continued several times)")
        extra["copies"], says = int(copies), "generate(ids, mask, steps, copies)"
    seen, forward = [], fn.forward

    def recorded(*args, **kwargs):  # each forward's positions, as the decoder records them
        result = forward(*args, **kwargs)
        seen.extend(_ints(p) for p in (getattr(fn, "rope_positions", None) or []))
        return result

    own_dict = getattr(fn, "__dict__", None)
    kept = own_dict.get("forward", recorded) if own_dict is not None else None
    if own_dict is not None:
        own_dict["forward"] = recorded
    try:
        out = host.call(says, _declining(says, lambda *a: own(*a, **extra)), native(ids), native(mask), int(steps))
    finally:
        if own_dict is not None:
            if kept is recorded:
                del own_dict["forward"]
            else:
                own_dict["forward"] = kept
    return _ints(out).astype(np.int64), seen


class _AssistantsOwnCall(logging.Filter):
    """Drops the deprecation notice transformers' assisted generation raises against its own call of the draft model
    (a generation_config passed with min_new_tokens and max_new_tokens): it says nothing of the model checked, and it
    was the one line a clean report printed."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Passing `generation_config` together with generation-related" not in record.getMessage()


def _draft_of(model, kind: str):
    """A draft model for ``model``: a copy ("same": every draft its own greedy token), or one of its kind drawn from
    another seed ("other"), a transformers model's by its config class, a decoder's by ``type(model)(expect, seed)``."""
    import copy

    if kind == "same":
        draft = copy.deepcopy(model)
        if _torch_module(draft):  # the copy's rotary modules record nothing: the positions said are the model's own
            for module in draft.modules():
                if type(module).__name__.endswith("RotaryEmbedding"):
                    module._forward_hooks.clear()
        return draft
    if _torch_module(model):
        import torch

        torch.manual_seed(1)
        return type(model)(model.config).to(next(model.parameters()).dtype).eval()
    return type(model)(model.e, 1) if hasattr(model, "e") else copy.deepcopy(model)


def op_lengths(host, fn, e):
    """(original length, largest position) the model's own config says, each None where it says none: where its RoPE
    switches tables (LongRoPE's original_max_position_embeddings, dynamic NTK's) and how long a sequence it takes; a
    decoder of its own may say them as attributes of the same names."""
    if _torch_module(fn):
        config = fn.config.get_text_config()
        rope = getattr(config, "rope_parameters", None) or getattr(config, "rope_scaling", None) or {}
        if isinstance(rope, dict) and "rope_type" not in rope:  # one block per layer type: the first that says one
            rope = next((v for v in rope.values() if isinstance(v, dict) and "rope_type" in v), {})
        original = rope.get("original_max_position_embeddings") if isinstance(rope, dict) else None
        original = original or getattr(config, "original_max_position_embeddings", None)
        top = getattr(config, "max_position_embeddings", None)
    else:
        original, top = (getattr(fn, k, None) for k in ("original_max_position_embeddings", "max_position_embeddings"))
    as_int = lambda v: int(v) if isinstance(v, (int, np.integer)) and v > 0 else None  # noqa: E731
    return as_int(original), as_int(top)


def op_state(host, fn, e):
    """A digest of every buffer and attribute of the model (but what a forward is handed back): what a call may not
    change (model.stateless)."""
    return _digest(fn)


def _digest(model) -> dict[str, str]:
    out: dict[str, str] = {}
    torch = _torch_module(model)
    if torch:
        for name, buf in model.named_buffers():
            out[f"buffer {name}"] = _hash(buf.detach().cpu().numpy())
        items = [(f"{n or 'model'}.{k}", v) for n, m in model.named_modules() for k, v in vars(m).items()
                 if not k.startswith("_")]
    else:
        items = [(k, v) for k, v in vars(model).items() if k != "rope_positions"]
    for name, v in items:
        if hasattr(v, "detach"):
            v = v.detach().cpu().numpy()
        if isinstance(v, (np.ndarray, int, float, bool, str, tuple)) or v is None:
            out[name] = _hash(v)
    return out


def _hash(v) -> str:
    if isinstance(v, np.ndarray):
        return hashlib.sha256(np.ascontiguousarray(v).tobytes() + str(v.shape).encode()).hexdigest()[:16]
    return repr(v)[:200]


def _warm(host, fn, e) -> None:
    op_forward(host, fn, e, np.array([[1, 2]]), None, None, None, False)


class ModelBound(Bound):
    def forward(self, ids, *, mask=None, positions=None, cache=None, embeds: bool = False):
        """(logits (B, T, V) float64, the positions the model handed its RoPE, one array per application, a handle to
        the cache after the call, None where the model returned no cache)."""
        return self._op("forward", i64(ids), None if mask is None else i64(mask),
                        None if positions is None else i64(positions), cache, bool(embeds))

    def forward_layers(self, ids, *, mask=None, positions=None, cache=None):
        """As forward, and each layer's output at the new tokens, (layers, B, T, hidden) float64."""
        return self._op("forward", i64(ids), None if mask is None else i64(mask),
                        None if positions is None else i64(positions), cache, False, True)

    def packed(self, ids, lengths, *, positions=None, hidden: bool = False):
        """(logits (1, T, V), the positions handed its RoPE[, each layer's output]) of one row of documents of
        ``lengths``, packed by the model's own door; ``positions`` given: handed as they are."""
        return self._op("packed", i64(ids), [int(n) for n in lengths], None if positions is None else i64(positions),
                        bool(hidden))

    def bare(self, ids, positions, *, cache=None, masked: bool = False):
        """(logits, positions handed its RoPE, the cache's handle) of a forward given positions and no attention mask
        (``masked``: the same call with a mask of ones)."""
        return self._op("bare", i64(ids), i64(positions), cache, bool(masked))

    def windows(self) -> list:
        """Each layer as the model declares it: ("sliding", w), ("full", None) or (another kind, None)."""
        return self._op("windows")

    def shift(self, cache, delta: int):
        """The handle of the cache re-rotated by ``delta``."""
        _held(cache, "a context shift")
        return self._op("shift", cache, int(delta))

    def shard(self, lengths, cp: int, rank: int, scheme: str):
        """(indices, positions) rank ``rank`` of ``cp`` owns, by the model's shard builder."""
        return self._op("shard", [int(n) for n in lengths], int(cp), int(rank), str(scheme))

    def lengths(self) -> tuple[int | None, int | None]:
        """(original length, largest position) as the model's own config says them (None where it does not)."""
        return self._op("lengths")

    def state(self) -> dict[str, str]:
        """A digest of the model's buffers and attributes."""
        return self._op("state")

    def generate(self, ids, *, mask=None, steps: int = 2, draft: str = "") -> np.ndarray:
        """The tokens the model's own greedy generation appends, (B, at most steps) int64 (Unsupported: it has none);
        ``draft`` "same" or "other": its assisted generation with that draft model."""
        return self.generated(ids, mask=mask, steps=steps, draft=draft)[0]

    def generated(self, ids, *, mask=None, steps: int = 2, draft: str = "", copies: int = 1):
        """(tokens, positions): what generate appends, each row ``copies`` times, and the positions each of its
        forwards handed the RoPE."""
        return self._op("generate", i64(ids), None if mask is None else i64(mask), int(steps), str(draft),
                        int(copies))

    def drafting(self, cache, k: int) -> None:
        """Readies the cache for k drafts to be verified and cut back, as the model's assisted loop does."""
        _held(cache, "drafts")
        self._op("drafting", cache, int(k))

    def crop(self, cache, length: int):
        """The handle of the cache cut back to its first ``length`` tokens."""
        _held(cache, "drafts rejected")
        return self._op("crop", cache, int(length))


def _held(cache, what: str) -> None:
    """A cache's handle, or Unsupported: a forward that returned no cache (some models return one from some calls
    only) hands nothing to shift, crop or ready for drafts."""
    if cache is None:
        raise Unsupported(f"the model returned no cache from the forward before: {what} needs one")


MODEL = Form("model", "apply", None, ("model.*",),
             {"forward": Op(op_forward, "forward(ids, positions, mask, cache)",
                            lambda shape, ids, mask, positions, cache, embeds, hidden=False:
                            [] if positions is None else [positions]),
              "packed": Op(op_packed, "forward(ids, documents=lengths)",
                           lambda shape, ids, lengths, positions, hidden=False: [] if positions is None else [positions]),
              "bare": Op(op_bare, "forward(ids, positions, mask=None, cache)",
                         lambda shape, ids, positions, cache, masked=False: [positions]),
              "windows": Op(op_windows, "its layers' windows"),
              "shift": Op(op_shift, "shift(cache, d)"),
              "crop": Op(op_crop, "crop(cache, length)"),
              "drafting": Op(op_drafting, "its cache readied for drafts"),
              "shard": Op(op_shard, "shard_positions(lengths, cp_size, rank, scheme)"),
              "state": Op(op_state, "its buffers and attributes"),
              "lengths": Op(op_lengths, "its config's original length and largest position"),
              "generate": Op(op_generate, "generate(ids, mask, steps)")},
             _warm, ModelBound, says_itself="a model's forward",
             builds=(lambda m: callable(getattr(m, "forward", None)),
                     "a model: an object with forward(ids, positions, mask, cache) -> (logits, cache), or a transformers "
                     "causal LM"))
register(MODEL)
