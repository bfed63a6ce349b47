"""Hypothesis strategies for writing your own RoPE properties (public API).

Keyword-only bounds, even numbers built with ``map``, generation kept local so shrinking works::

    from hypothesis import given
    from ropespec.strategies import expectations, positions, qk_pairs

    @given(expectations(conventions=("half",)), positions(max_value=1 << 20))
    def test_my_kernel_keeps_norms(expect, p):
        ...

* ``head_dims(*, min_value=2, max_value=256)`` — even head dims;
* ``bases(*, min_value=2, max_value=1e7)`` — log-uniform, plus the common 1e4, 5e5, 1e6, 1.5e5;
* ``positions(*, min_value=0, max_value)`` — weighted to boundaries (0, 1, 2^k - 1, 2^k, max - 1) and
  large odd values (powers of two hide float32 product error);
* ``expectations(*, dtype="float32", max_position=131072, conventions=("half", "interleaved"),
  partial=None, scaling=None)`` — :class:`spec.Expect` objects; ``scaling`` a tuple of rope types
  ("linear", "ntk", "dynamic", "yarn", "llama3", "longrope") draws scaled ones;
* ``qk_pairs(expect, *, n=1)`` — (q, k) arrays of shape (n, head_dim), exactly representable in the
  expectation's dtype, at scales 2^-8 .. 2^8.
"""

from __future__ import annotations

from hypothesis import strategies as st

from ropespec.properties.strategies import bases, head_dims, positions, scaled_expectations, vectors
from ropespec.properties.strategies import expectations as _expectations


def expectations(*, dtype: str = "float32", max_position: int = 131072, conventions=("half", "interleaved"),
                 partial: bool | None = None, scaling: tuple[str, ...] | None = None):
    """Expectations of default RoPE, or of the scaling methods in ``scaling``."""
    if scaling:
        return scaled_expectations(rope_types=tuple(scaling), dtype=dtype)
    return _expectations(dtype=dtype, max_position=max_position, conventions=tuple(conventions), partial=partial)


def qk_pairs(expect, *, n: int = 1):
    """(q, k): two (n, head_dim) float64 arrays whose values are exact in ``expect.dtype``."""
    return st.tuples(vectors(expect, n), vectors(expect, n))


__all__ = ["bases", "expectations", "head_dims", "positions", "qk_pairs"]
