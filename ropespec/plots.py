"""Figures (matplotlib, the optional ``plots`` extra)."""

from __future__ import annotations

import numpy as np

from properties.precision import Sweep, class_of, holds

_COLORS = {"exact": "tab:green", "float64": "tab:olive", "float32": "tab:blue", "bfloat16": "tab:red", "float16": "tab:purple"}


def precision_plot(sweep: Sweep, path: str, title: str) -> None:
    """Error vs position on log axes, each class's bound drawn, each crossing marked."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("--plot needs matplotlib: pip install -e '.[plots]'") from None
    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    p = sweep.positions
    floor = 1e-18
    ax.loglog(p, np.maximum(sweep.max_error, floor), "k.-", label="max error / ||x_pair||")
    ax.loglog(p, np.maximum(sweep.median_error, floor), ".", color="0.6", label="median over vectors")
    declared = class_of(sweep.expect)
    for c, b in sweep.bounds.items():
        style = "-" if c == declared else "--"
        ax.loglog(p, np.maximum(b, floor), style, color=_COLORS.get(c, "tab:gray"), lw=1,
                  label=f"bound: {'strict' if c == 'exact' else c + ' angles'}"
                        f"{' (declared)' if c == declared else ''}; {holds(sweep.safe_position(c))}")
        fail = sweep.first_failure(c)
        if fail is not None:
            i = int(np.flatnonzero(p == fail)[0])
            ax.plot([fail], [max(sweep.max_error[i], floor)], "o", mfc="none", ms=10, color=_COLORS.get(c, "tab:gray"))
    ax.set_xlabel("position p")
    ax.set_ylabel("|f(x, p) - exact| / ||x_pair||")
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right", framealpha=0.9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
