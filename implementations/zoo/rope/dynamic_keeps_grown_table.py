"""Dynamic NTK with transformers' cache: a longer call grows the table, and a later call between the original length
and the cached one keeps the grown table instead of its own length's."""

from ropespec.implementations.zoo._base import build, spec_table
from ropespec.spec.scaling import original_length

TARGETS = ("contract.deterministic:history",)
DIAGNOSIS = "nondeterministic"
SOURCE = ("transformers' dynamic_rope_update after its reset fix (modeling_rope_utils.dynamic_frequency_update: "
          "it grows max_seq_len_cached and resets only below the original length)")
EXPECT = {"head_dim": 64, "max_position": 16384,
          "rope_scaling": {"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": 2048}}


def make(expect):
    cached = {"length": original_length(expect)}

    def table(e, seq_len):
        L = original_length(e)
        if seq_len is not None and seq_len > cached["length"]:
            cached["length"] = seq_len  # growth
        if seq_len is not None and seq_len < L:
            cached["length"] = L  # reset
        return spec_table(e, max(cached["length"], seq_len or L))

    return build(expect, table=table)
