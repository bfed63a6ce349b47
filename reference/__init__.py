"""reference: the spec's definitions evaluated exactly with mpmath, rounded correctly to float64."""

from reference import fast
from reference.rope import apply, cos_sin, thetas, thetas_mpf, working_prec

__all__ = ["apply", "fast", "cos_sin", "thetas", "thetas_mpf", "working_prec"]
