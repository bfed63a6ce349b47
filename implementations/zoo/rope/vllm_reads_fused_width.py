"""vLLM's forward(positions, query, key), but a query that is a view of the fused qkv buffer is read (and
returned) at the buffer's whole width."""

from ropespec.implementations.numpy_layout import vllm

TARGETS = ("rope.layout",)
DIAGNOSIS = "layout"
SOURCE = "query and key are views of the fused qkv projection (vLLM's qkv.split)"
FORM = "vllm"
EXPECT = {"head_dim": 32, "dtype": "float32", "n_heads": 2, "n_kv_heads": 1}


def make(expect):
    inner = vllm(expect)

    def forward(positions, query, key):
        whole = query.base if query.base is not None and query.base.ndim == 2 else query  # the row's full width
        q, k = inner(positions, whole, key)
        return q, k

    return forward
