"""Figures (matplotlib, the optional ``plots`` extra)."""

from __future__ import annotations

import numpy as np

from ropespec.properties.precision import Sweep, class_of
from ropespec.report import class_sentence, failure_words

#: the strict bound dotted and wider, so that another bound along it (float64's, mostly) shows through
_STYLES = {"exact": (0, (1, 2)), "float64": "--"}
_COLORS = {"exact": "tab:green", "float64": "tab:olive", "float32": "tab:blue", "bfloat16": "tab:red", "float16": "tab:purple"}


def precision_plot(sweep: Sweep, path: str, title: str, keep: bool = False):
    """Error vs position on log axes, each class's bound drawn (bounds that coincide drawn once, with both names),
    each class's first failing position marked, and the legend below the axes, where it covers nothing. Its
    words are the text report's (ropespec.report.class_sentence). ``keep``: return the figure, open (tests)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("--plot needs matplotlib: pip install -e '.[plots]'") from None
    fig, ax = plt.subplots(figsize=(8, 6.5), dpi=120, layout="constrained")
    p = sweep.positions
    floor = 1e-18
    ax.loglog(p, np.maximum(sweep.max_error, floor), "k.-", label="max error / ||x_pair||", zorder=5)
    ax.loglog(p, np.maximum(sweep.median_error, floor), ".", color="0.6", label="median over vectors", zorder=4)
    declared = class_of(sweep.expect)
    drawn: list[tuple[list[str], np.ndarray]] = []
    for c, b in sweep.bounds.items():  # a bound equal to one drawn already (strict and float64) joins its line
        same = next((d for d in drawn if np.allclose(d[1], b, rtol=0.01, atol=0)), None)
        if same is not None:
            same[0].append(c)
        else:
            drawn.append(([c], b))
    for classes, b in drawn:
        c = classes[0]
        style = "-" if declared in classes else _STYLES.get(c, "--")
        label = "bound: " + "; ".join(class_sentence(sweep, k, short=True) for k in classes)
        if len(classes) > 1:
            label += " (one line: the bounds coincide)"
        ax.loglog(p, np.maximum(b, floor), linestyle=style, color=_COLORS.get(c, "tab:gray"), lw=2 if c == "exact" else 1,
                  label=label)
    marked: dict[tuple[int, str], list[str]] = {}
    for c in sweep.bounds:
        fail, words = sweep.first_failure(c), failure_words(sweep, c)
        if fail is not None:
            i = int(np.flatnonzero(p == fail)[0])
            ax.plot([fail], [max(sweep.max_error[i], floor)], "o", mfc="none", ms=10, color=_COLORS.get(c, "tab:gray"),
                    label=None if marked else "o: the first swept position where that colour's class fails", zorder=6)
            marked.setdefault((i, words), []).append("strict" if c == "exact" else c)
    for (i, words), classes in marked.items():  # the marker says which classes fail there, in the text's words
        ax.annotate(f"{', '.join(classes)}: {words}", (p[i], max(sweep.max_error[i], floor)), xytext=(8, -12),
                    textcoords="offset points", fontsize=7)
    if sweep.beyond():  # the verdict's positions end at max_position; the sweep past it is information
        ax.axvline(sweep.domain, color="0.3", linestyle=":", lw=1,
                   label=f"max_position {sweep.domain}: the verdict is about the positions left of it")
    ax.set_xlabel("position p")
    ax.set_ylabel("|f(x, p) - exact| / ||x_pair||")
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", fontsize=7, framealpha=0.9)
    fig.savefig(path)
    if keep:
        return fig
    plt.close(fig)
    return None
