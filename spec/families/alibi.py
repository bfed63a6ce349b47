from ropespec.spec import tolerance
from ropespec.spec.families import Family
from ropespec.spec.params.alibi import AlibiParams


class Alibi(Family):
    name = "alibi"
    params = AlibiParams
    means = ("ALiBi: a bias -m_h (i - j) on the attention scores, one slope m_h per head: alibi(n_heads, q_positions, "
             "k_positions) -> (n_heads, n_q, n_k), or slopes(n_heads) -> (n_heads,)")
    order = 50
    # ALiBi's precision class is the expectation's angle_dtype and inv_freq_dtype: the dtype its bias is formed in
    fields = ("dtype", "max_position", "angle_dtype", "inv_freq_dtype", "alibi_bias_max", "bias_symmetric")
    fingerprint = "ropespec.commands.fingerprint:alibi"

    def describe(self, e) -> str:
        p = e.params(self.name)
        form = "symmetric -m_h |i - j|" if p.bias_symmetric else "causal -m_h (i - j)"
        return f"ALiBi {form}, slopes of bias max {p.alibi_bias_max:g}, {e.dtype}, positions below {e.max_position}"

    def class_name(self, e) -> str:
        return tolerance.bias_class_name(e)
