"""The implementations ropespec ships, each a factory, with the dtypes and the call shape each is checked at."""

from __future__ import annotations

from dataclasses import dataclass

from ropespec.implementations.shape import CallShape


@dataclass(frozen=True)
class Shipped:
    name: str
    target: str
    array: str
    dtypes: tuple[str, ...]
    shape: CallShape = CallShape()


#: The implementations ropespec ships, each a factory, with the dtypes each is checked at.
SHIPPED = (
    Shipped("stdlib", "ropespec.implementations.stdlib_rope:make", "list", ("float64",)),
    Shipped("numpy", "ropespec.implementations.numpy_rope:make", "numpy", ("float64", "float32")),
    Shipped("torch", "ropespec.implementations.torch_rope:make", "torch", ("float64", "float32", "float16", "bfloat16")),
    Shipped("numpy-decode", "ropespec.implementations.numpy_decode:make", "numpy", ("float64",)),
    Shipped("numpy-table", "ropespec.implementations.numpy_table:make", "numpy", ("float32",), CallShape(form="table")),
    Shipped("numpy-kernel", "ropespec.implementations.numpy_kernel:make", "numpy", ("float32",), CallShape(form="kernel")),
    Shipped("numpy-qk", "ropespec.implementations.numpy_qk:make", "numpy", ("float32",), CallShape(form="qk")),
    Shipped("numpy-bshd", "ropespec.implementations.numpy_layout:bshd", "numpy", ("float32",), CallShape(layout="bshd")),
    Shipped("numpy-thd", "ropespec.implementations.numpy_layout:thd", "numpy", ("float32",), CallShape(layout="thd")),
    Shipped("numpy-thd-per-token", "ropespec.implementations.numpy_layout:thd_per_token", "numpy", ("float32",),
            CallShape(layout="thd", positions="per-token")),
    Shipped("numpy-vllm-inplace", "ropespec.implementations.numpy_layout:vllm_inplace", "numpy", ("float32",),
            CallShape(form="vllm", inplace=True)),
    Shipped("sinusoidal", "ropespec.implementations.sinusoidal:make", "numpy", ("float64",), CallShape(family="sinusoidal")),
    Shipped("integer-index", "ropespec.implementations.toy_encodings:integer_index", "numpy", ("float64",), CallShape(family="sinusoidal")),
    Shipped("length-normalised", "ropespec.implementations.toy_encodings:length_normalised", "numpy", ("float64",), CallShape(family="sinusoidal")),
    Shipped("binary", "ropespec.implementations.toy_encodings:binary", "numpy", ("float64",), CallShape(family="sinusoidal")),
    Shipped("learned", "ropespec.implementations.learned:make", "numpy", ("float64",), CallShape(family="learned")),
    Shipped("attention", "ropespec.implementations.attention:make", "numpy", ("float64",), CallShape(family="attention")),
    Shipped("attention-decode", "ropespec.implementations.attention_decode:make", "numpy", ("float64",), CallShape(family="attention")),
    Shipped("numpy-position-ids", "ropespec.implementations.numpy_positions:make", "numpy", ("float64",),
            CallShape(family="position-ids")),
    Shipped("numpy-model", "ropespec.implementations.numpy_model:make", "numpy", ("float64",), CallShape(family="model")),
    Shipped("numpy-alibi", "ropespec.implementations.biases:alibi", "numpy", ("float64",), CallShape(family="alibi")),
    Shipped("numpy-alibi-bhqk", "ropespec.implementations.biases:alibi", "numpy", ("float64",),
            CallShape(family="alibi", layout="bhqk")),
    Shipped("numpy-t5-bias", "ropespec.implementations.biases:t5_bucket", "numpy", ("float64",), CallShape(family="t5-bias")),
    Shipped("numpy-t5-lookup", "ropespec.implementations.biases:t5_lookup", "numpy", ("float64",), CallShape(family="t5-bias")),
    Shipped("numpy-xpos", "ropespec.implementations.biases:xpos", "numpy", ("float64",), CallShape(family="xpos")),
)
