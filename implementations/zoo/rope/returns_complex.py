"""Returns the complex form of the rotation (torch.polar style) without taking the real view back."""

TARGETS = ("contract.shape-finite",)
DIAGNOSIS = "shape"
SOURCE = "Meta's llama reference rotates with torch.view_as_complex; forgetting view_as_real returns complex"
ARRAY = "torch"
EXPECT = {"head_dim": 64, "dtype": "float32"}


def make(expect):
    import torch

    from ropespec.implementations.torch_rope import make as correct

    f = correct(expect)
    return lambda x, positions: f(x, positions).to(torch.complex64)
