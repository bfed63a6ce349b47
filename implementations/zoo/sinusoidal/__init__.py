"""Zoo members of the sinusoidal family: the Transformer's sinusoidal encoding."""
