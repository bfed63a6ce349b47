"""The implementations ropespec ships, each a factory, with the dtypes and the call shape each is checked at."""

from __future__ import annotations

from dataclasses import dataclass

from implementations.shape import CallShape


@dataclass(frozen=True)
class Shipped:
    name: str
    target: str
    array: str
    dtypes: tuple[str, ...]
    shape: CallShape = CallShape()


#: The implementations ropespec ships, each a factory, with the dtypes each is checked at.
SHIPPED = (
    Shipped("stdlib", "implementations.stdlib_rope:make", "list", ("float64",)),
    Shipped("numpy", "implementations.numpy_rope:make", "numpy", ("float64", "float32")),
    Shipped("torch", "implementations.torch_rope:make", "torch", ("float64", "float32", "float16", "bfloat16")),
    Shipped("numpy-decode", "implementations.numpy_decode:make", "numpy", ("float64",)),
    Shipped("numpy-table", "implementations.numpy_table:make", "numpy", ("float32",), CallShape(form="table")),
    Shipped("numpy-kernel", "implementations.numpy_kernel:make", "numpy", ("float32",), CallShape(form="kernel")),
    Shipped("numpy-qk", "implementations.numpy_qk:make", "numpy", ("float32",), CallShape(form="qk")),
    Shipped("numpy-bshd", "implementations.numpy_layout:bshd", "numpy", ("float32",), CallShape(layout="bshd")),
    Shipped("numpy-thd", "implementations.numpy_layout:thd", "numpy", ("float32",), CallShape(layout="thd")),
    Shipped("numpy-thd-per-token", "implementations.numpy_layout:thd_per_token", "numpy", ("float32",),
            CallShape(layout="thd", positions="per-token")),
    Shipped("numpy-vllm-inplace", "implementations.numpy_layout:vllm_inplace", "numpy", ("float32",),
            CallShape(form="vllm", inplace=True)),
    Shipped("sinusoidal", "implementations.sinusoidal:make", "numpy", ("float64",), CallShape(family="sinusoidal")),
    Shipped("integer-index", "implementations.toy_encodings:integer_index", "numpy", ("float64",), CallShape(family="sinusoidal")),
    Shipped("length-normalised", "implementations.toy_encodings:length_normalised", "numpy", ("float64",), CallShape(family="sinusoidal")),
    Shipped("binary", "implementations.toy_encodings:binary", "numpy", ("float64",), CallShape(family="sinusoidal")),
    Shipped("learned", "implementations.learned:make", "numpy", ("float64",), CallShape(family="learned")),
    Shipped("attention", "implementations.attention:make", "numpy", ("float64",), CallShape(family="attention")),
    Shipped("attention-decode", "implementations.attention_decode:make", "numpy", ("float64",), CallShape(family="attention")),
    Shipped("numpy-position-ids", "implementations.numpy_positions:make", "numpy", ("float64",),
            CallShape(family="position-ids")),
    Shipped("numpy-alibi", "implementations.biases:alibi", "numpy", ("float64",), CallShape(family="alibi")),
    Shipped("numpy-alibi-bhqk", "implementations.biases:alibi", "numpy", ("float64",),
            CallShape(family="alibi", layout="bhqk")),
    Shipped("numpy-t5-bias", "implementations.biases:t5_bucket", "numpy", ("float64",), CallShape(family="t5-bias")),
    Shipped("numpy-t5-lookup", "implementations.biases:t5_lookup", "numpy", ("float64",), CallShape(family="t5-bias")),
    Shipped("numpy-xpos", "implementations.biases:xpos", "numpy", ("float64",), CallShape(family="xpos")),
)
