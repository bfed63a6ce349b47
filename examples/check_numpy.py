"""Check a numpy RoPE from your own code in ten lines (README: "Use it from Python")."""
import numpy as np
from ropespec import check

def rope(x, positions):  # HF-style "half" convention, base 5e5
    d = x.shape[1]
    ang = positions[:, None] * 500000.0 ** (-np.arange(0, d, 2) / d)
    x1, x2, c, s = x[:, : d // 2], x[:, d // 2 :], np.cos(ang), np.sin(ang)
    return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=1).astype(x.dtype)

result = check(rope, expect={"head_dim": 128, "rope_theta": 500000}, seed=0)
print(result.report())
raise SystemExit(0 if result.passed else 1)
