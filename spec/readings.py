"""How a config.json can be read otherwise: the readings a library may make of the same file, each an expectation.

The reference reading of a config.json is transformers' (:func:`ropespec.spec.hfconfig.from_hf_config`, the reading
of transformers 5.x where its reading changed between versions; each method's module says which). Another library
reads the same file into its own RoPE; where it computes something else, the field it reads otherwise is named by
the one reading below whose expectation its RoPE holds under, and no other: a word is given only where the
measurement excludes the others.

Each reading is a change of the reference expectation that a config's field, read another way, gives: the scaling
method states its own (:meth:`ropespec.spec.methods.ScalingMethod.readings`), and :func:`readings` adds those of every
method (the scaling dropped, the original length another one). The words are :data:`WORDS`, a fixed vocabulary.
"""

from __future__ import annotations

from typing import Iterator, NamedTuple

from ropespec.spec.expectation import Expect

#: the field a library reads otherwise, by word; scripts depend on these strings: a word is added, never renamed
WORDS: dict[str, str] = {
    "truncate": "YaRN's correction range rounded where the config says truncate false (or kept where it says true)",
    "attention-factor": "cos and sin scaled by another factor than the config's: its attention_factor, mscale or "
                        "mscale_all_dim read otherwise",
    "original-length": "another original length than the config's (original_max_position_embeddings missing or "
                       "read from elsewhere)",
    "longrope-switch": "LongRoPE's short or long factors taken at other lengths than the call's (one set at every "
                       "length, or switched by a served or allocated length)",
    "dynamic-base": "dynamic NTK's base fixed at one length instead of growing with the call's",
    "ignored-config": "the config's scaling (or its base too) not read: a plain RoPE",
}

#: the original lengths a library is known to assume where a config gives none (mlx-lm's and llama.cpp's 4096)
ASSUMED_ORIGINAL = (2048, 4096, 8192)


class Reading(NamedTuple):
    """One other reading of a config: its word (:data:`WORDS`), what it reads, and the expectation it gives."""

    word: str
    what: str
    expect: Expect


def _dropped(e: Expect) -> Iterator[Reading]:
    if e.rope_scaling:
        yield Reading("ignored-config", f"the {e.rope_type} scaling dropped (a plain RoPE of base {e.rope_theta:g})",
                      e.replace(rope_scaling=None))
    if e.rope_theta != 10000.0:
        yield Reading("ignored-config", "the scaling and rope_theta dropped (a plain RoPE of base 10000)",
                      e.replace(rope_scaling=None, rope_theta=10000.0))


def _original(e: Expect) -> Iterator[Reading]:
    s = dict(e.rope_scaling or {})
    if "original_max_position_embeddings" not in e.method.keys:
        return
    given = s.get("original_max_position_embeddings")
    # a table that changes only past its original length (dynamic's growth, LongRoPE's switch) is the plain one, or
    # the short factors, at every length tested when that length is the largest: the other readings say those
    last = e.max_position - 1 if e.method.length_dependent else e.max_position
    for length in sorted({*ASSUMED_ORIGINAL, e.max_position} - {given}):
        if length <= last:
            yield Reading("original-length", f"original length {length} where the config's reading is {given}",
                          e.replace(rope_scaling=dict(s, original_max_position_embeddings=length)))


def readings(e: Expect) -> list[Reading]:
    """Every other reading of the config ``e`` was read from: the method's own, then the scaling dropped and the
    original length another one. Duplicates (two changes giving one expectation) are kept once, the first."""
    out: list[Reading] = []
    for r in (*(Reading(*r) for r in e.method.readings(e)), *_original(e), *_dropped(e)):
        if r.expect != e and all(r.expect != o.expect for o in out):
            out.append(r)
    return out
