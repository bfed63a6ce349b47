"""Runs a long prefill as a loop of chunks inside one forward, each chunk turned at the prompt's first positions: the
cache offset of the chunks before it not added, in a single call."""

import numpy as np

from ropespec.implementations.numpy_model import Decoder

TARGETS = ("model.positions", "model.cache", "model.padding", "model.canonical", "model.packing", "model.drafts")
DIAGNOSIS = "cache-offset"
SOURCE = "vLLM #10388 and #10403 (chunked prefill's positions), as a loop inside one forward"
FAMILY = "model"
EXPECT = {"head_dim": 16, "max_position": 4096, "dtype": "float64"}

#: the chunk the loop takes
CHUNK = 4


class _ChunkLoop(Decoder):
    def forward(self, ids, positions=None, mask=None, cache=None, documents=None):
        ids = np.asarray(ids)
        if cache is not None or positions is not None or documents is not None or ids.shape[1] <= CHUNK:
            return super().forward(ids, positions=positions, mask=mask, cache=cache, documents=documents)
        full = np.ones(ids.shape, dtype=np.int64) if mask is None else np.asarray(mask)
        first = self.inferred(full)
        logits, turned, hidden, kept = [], [], [], None
        for s in range(0, ids.shape[1], CHUNK):
            t = min(CHUNK, ids.shape[1] - s)
            out, kept = super().forward(ids[:, s:s + t], positions=first[:, :t], mask=full[:, :s + t], cache=kept)
            logits.append(out)
            turned.append(self.rope_positions[0])
            hidden.append(self.hidden_states)
        self.rope_positions = [np.concatenate(turned, axis=1)]
        self.hidden_states = [np.concatenate(h, axis=1) for h in zip(*hidden)]
        return np.concatenate(logits, axis=1), kept


def make(expect):
    return _ChunkLoop(expect)
