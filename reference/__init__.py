"""reference: the spec's definitions evaluated exactly with mpmath, rounded correctly to float64."""

from ropespec.reference import fast, table
from ropespec.reference.rope import apply, attention_factor, cos_sin, rates, seq_len_of, thetas, thetas_mpf, working_prec

__all__ = ["apply", "attention_factor", "fast", "table", "seq_len_of", "cos_sin", "rates", "thetas", "thetas_mpf", "working_prec"]
