"""Expectations of well-known models, by name (``--expect llama3.1-8b``).

Values from the models' Hugging Face configs (``config.json`` in each model's repository on the Hub, and
transformers' config classes for the same models). ``convention`` is the convention of the model's Hugging Face code: Meta's own
Llama code pairs interleaved, HF's permuted weights pair half. ``max_position`` is the model's
max_position_embeddings (how far ropespec tests by default). A value that could not be confirmed from
a primary source is listed in ``UNVERIFIED`` and said so by ``ropespec presets``.
"""

from __future__ import annotations

from typing import Any

from spec.expectation import Expect, ExpectationError

_PRESETS: dict[str, dict[str, Any]] = {
    "llama2-7b": {"head_dim": 128, "rope_theta": 10000.0, "max_position": 4096},
    "llama3.1-8b": {
        "head_dim": 128, "rope_theta": 500000.0, "max_position": 131072,
        "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192},
    },
    "mistral-7b-v0.1": {"head_dim": 128, "rope_theta": 10000.0, "max_position": 32768},
    "qwen2.5-7b": {"head_dim": 128, "rope_theta": 1000000.0, "max_position": 32768},
    "qwen2.5-7b-yarn": {
        "head_dim": 128, "rope_theta": 1000000.0, "max_position": 131072,
        "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
    },
    "deepseek-v3": {
        "head_dim": 64, "rope_theta": 10000.0, "convention": "rope_interleave", "max_position": 163840,
        "rope_scaling": {"rope_type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096,
                         "beta_fast": 32, "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0},
    },
    "gpt-oss": {
        "head_dim": 64, "rope_theta": 150000.0, "max_position": 131072,
        "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096,
                         "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False},
    },
    "gpt-neox-20b": {"head_dim": 96, "partial_rotary_factor": 0.25, "rope_theta": 10000.0, "max_position": 2048},
    "pythia-6.9b": {"head_dim": 128, "partial_rotary_factor": 0.25, "rope_theta": 10000.0, "max_position": 2048},
    "gpt-j-6b": {"head_dim": 256, "rotary_dim": 64, "rope_theta": 10000.0, "convention": "interleaved",
                 "max_position": 2048},
    "codellama-7b": {"head_dim": 128, "rope_theta": 1000000.0, "max_position": 16384},
}

#: preset -> what could not be confirmed from a primary source (the model's own config or code)
UNVERIFIED: dict[str, str] = {
    "deepseek-v3": "head_dim 64 is qk_rope_head_dim; DeepSeek applies mscale to the softmax scale, not in RoPE",
}

#: preset -> note shown by ``ropespec presets``
NOTES: dict[str, str] = {
    "llama2-7b": "Meta's reference code pairs interleaved; HF's converted weights pair half",
    "deepseek-v3": ("transformers' code (rope_interleave) reads interleaved pairs and writes them in the half layout; "
                    "DeepSeek's own inference/model.py rotates interleaved pairs in place: check it with convention "
                    "'interleaved'"),
    "gpt-j-6b": "rotate_every_two: interleaved pairs on the first 64 dims",
    "gpt-neox-20b": "rotary_pct 0.25: 24 of 96 dims rotate",
    "pythia-6.9b": "rotary_pct 0.25: 32 of 128 dims rotate",
}


def names() -> list[str]:
    return list(_PRESETS)


def get(name: str) -> Expect:
    """The expectation of preset ``name``; ExpectationError naming the known ones otherwise."""
    if name not in _PRESETS:
        raise ExpectationError("expect", f"unknown preset {name!r} (known: {', '.join(_PRESETS)})")
    return Expect.from_dict(_PRESETS[name])
