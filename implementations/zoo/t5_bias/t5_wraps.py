"""Takes the log-spaced bucket modulo the buckets of one sign: far keys wrap around to near ones' buckets."""

from ropespec.implementations.zoo._biases import t5_bucket

TARGETS = ("t5-bias.monotone",)
DIAGNOSIS = "position-offset"
FAMILY = "t5-bias"
SOURCE = "a bucket index wrapped into an embedding table of num_buckets rows instead of clamped (T5, arXiv 1910.10683)"


def make(expect):
    return t5_bucket(wrap=True)
