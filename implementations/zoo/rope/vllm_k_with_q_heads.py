"""vLLM's forward(positions, query, key), but key is reshaped with the query's head count (grouped-query fails)."""

from ropespec.implementations.numpy_layout import vllm

TARGETS = ("rope.layout",)
DIAGNOSIS = "layout"
SOURCE = "key.view(num_tokens, num_heads, head_size) with num_heads of the query (grouped-query attention)"
FORM = "vllm"
EXPECT = {"head_dim": 32, "dtype": "float32", "n_heads": 2, "n_kv_heads": 1}


def make(expect):
    inner = vllm(expect)
    d = expect.head_dim

    def forward(positions, query, key):
        heads = query.shape[1] // d
        key = key.reshape(len(key), heads, d)  # right: (len(key), -1, d)
        q, k = inner(positions, query, key.reshape(len(key), -1))
        return q, k

    return forward
