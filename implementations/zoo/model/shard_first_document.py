"""Shards a packed row over context-parallel ranks and reads every document's positions at its local offsets into the
packed table, without the document's start: each later document reuses the first one's rows."""

import numpy as np

from ropespec.implementations.numpy_model import Decoder

TARGETS = ("model.shards",)
DIAGNOSIS = "shard-positions"
SOURCE = ("NVIDIA/Megatron-LM #5243 (packed THD RoPE under context parallelism: cu_seqlens=[0,4,8], cp 2, rank 0 "
         "reading rows [0,3,0,3] where [0,3,4,7] are due)")
FAMILY = "model"
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}


class _FirstDocument(Decoder):
    @staticmethod
    def shard_positions(lengths, cp_size, rank, scheme):
        idx, _ = Decoder.shard_positions(lengths, cp_size, rank, scheme)
        table = np.concatenate([np.arange(n) for n in lengths])  # the packed row's per-token positions
        starts = np.repeat(np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
        return idx, table[idx - starts[idx]]  # the local offset read as a row of the whole table


def make(expect):
    return _FirstDocument(expect)
