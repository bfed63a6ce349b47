"""Zoo members of the model family: decoders whose plumbing around their RoPE is wrong in one place each."""
