"""Zoo members of the attention family: attention with RoPE (softmax(q k^T / sqrt(d)) v)."""
