"""Zoo members of the position-ids family: position-id builders (M-RoPE position ids)."""
