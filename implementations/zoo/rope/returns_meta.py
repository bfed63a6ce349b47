"""Returns a torch meta tensor (shape only, no values), as code traced on the meta device does."""

TARGETS = ("contract.shape-finite",)
DIAGNOSIS = "shape"
SOURCE = "a module left on the meta device after deferred initialisation"
ARRAY = "torch"
EXPECT = {"head_dim": 64, "dtype": "float32"}


def make(expect):
    import torch

    return lambda x, positions: torch.empty(x.shape, dtype=x.dtype, device="meta")
