"""Returns its numbers formatted as strings (nested lists of str), as a text-serialising bridge does."""

TARGETS = ("contract.shape-finite",)
DIAGNOSIS = "shape"
SOURCE = "a JSON/text bridge to another language"
ARRAY = "list"

from ropespec.implementations.stdlib_rope import make as correct  # noqa: E402


def make(expect):
    f = correct(expect)
    return lambda x, positions: [[repr(v) for v in row] for row in f(x, positions)]
