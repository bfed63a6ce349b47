"""Max error at large positions, side by side: the shipped implementations and the RoPE code people
run (transformers' Llama rotary, rotary-embedding-torch), against the exact mpmath reference.

    python benchmarks/precision_peers.py

128-dim head, base 5e5 (Llama 3 without scaling), 8 standard-normal vectors per position, max
|out - exact| over all components. Peers that are not installed are left out.
"""

from __future__ import annotations

import numpy as np

from ropespec import reference
from ropespec.implementations import load_implementation
from ropespec.spec import Expect
from ropespec.spec.dtypes import round_to

POSITIONS = [999, 65521, 1048573, 16777213]
VECTORS = 8


def rotary_embedding_torch(expect):
    import torch
    from rotary_embedding_torch import RotaryEmbedding, apply_rotary_emb

    rot = RotaryEmbedding(dim=expect.head_dim, theta=expect.rope_theta, cache_if_possible=False)

    def f(x, positions):
        freqs = rot(positions.to(torch.float32))
        return apply_rotary_emb(freqs, x)

    return f


def rows():
    half = Expect(head_dim=128, rope_theta=5e5)
    inter = half.replace(convention="interleaved")
    yield "ropespec numpy", "float64", "ropespec.implementations.numpy_rope:make", "numpy", half
    yield "ropespec numpy", "float32", "ropespec.implementations.numpy_rope:make", "numpy", half
    yield "ropespec torch", "float32", "ropespec.implementations.torch_rope:make", "torch", half
    yield "ropespec torch", "bfloat16", "ropespec.implementations.torch_rope:make", "torch", half
    yield "transformers Llama", "float32", "ropespec.implementations.adapters.hf:make", "torch", half
    yield "transformers Llama", "bfloat16", "ropespec.implementations.adapters.hf:make", "torch", half
    yield "rotary-embedding-torch", "float32", rotary_embedding_torch, "torch", inter


def main() -> None:
    rng = np.random.default_rng(0)
    x64 = rng.standard_normal((len(POSITIONS) * VECTORS, 128))
    pos = np.repeat(POSITIONS, VECTORS)
    print(f"{'implementation':<24} {'dtype':<9} " + " ".join(f"{'p=' + str(p):>12}" for p in POSITIONS))
    for name, dtype, target, array, e in rows():
        e = e.replace(dtype=dtype)
        x = round_to(x64, dtype)
        try:
            if callable(target):
                import torch

                fn = target(e)
                call = lambda x, p: fn(torch.tensor(x, dtype=getattr(torch, dtype)), torch.tensor(p)).to(torch.float64).numpy()
            else:
                call = load_implementation(target, array=array, dtype=dtype).bind(e)
        except Exception as ex:  # not installed
            print(f"{name:<24} {dtype:<9} skipped: {ex}")
            continue
        errs = []
        for p in POSITIONS:
            sel = pos == p
            y = call(x[sel], pos[sel])
            errs.append(np.max(np.abs(y - reference.apply(e, x[sel], pos[sel]))))
        print(f"{name:<24} {dtype:<9} " + " ".join(f"{v:>12.2e}" for v in errs))


if __name__ == "__main__":
    main()
