"""Packs documents with their positions restarting and one causal mask over the whole row: a document attends to the
documents before it."""

from ropespec.implementations.numpy_model import Decoder

TARGETS = ("model.packing",)
DIAGNOSIS = "packing-mask"
SOURCE = ("pytorch/torchtitan #3130 (packed SFT documents attending across: the document mask read off EOS tokens the "
         "inputs lack); transformers' Qwen2-VL given DataCollatorWithFlattening's one row of position_ids")
FAMILY = "model"
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}


class _Across(Decoder):
    def documents_of(self, ids, positions, mask, cache, documents, past):
        return None


def make(expect):
    return _Across(expect)
