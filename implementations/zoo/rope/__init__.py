"""Zoo members of the rope family: rotary position embedding (every form and layout)."""
