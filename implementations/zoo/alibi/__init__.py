"""Zoo members of the alibi family: ALiBi."""
