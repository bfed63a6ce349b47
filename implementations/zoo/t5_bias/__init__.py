"""Zoo members of the t5-bias family: T5's relative position buckets."""
