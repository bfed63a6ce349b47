"""Zoo members of the learned family: learned absolute position tables."""
