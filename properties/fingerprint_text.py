"""A RoPE fingerprint (:mod:`ropespec.properties.fingerprint`) as lines of text: what ``ropespec fingerprint`` prints and
what a failure that no diagnosis names says was measured (:mod:`ropespec.properties.naming`)."""

from __future__ import annotations

import math

import json

from ropespec.properties.fingerprint import Fingerprint
from ropespec.spec.expectation import Expect


def describe(fp: Fingerprint) -> list[str]:
    """The RoPE fingerprint as lines of text."""
    out = []
    if fp.problem:
        return [f"not a rotation of pairs of dims: {fp.problem}"]
    pass_through = fp.head_dim - fp.rotary_dim
    if fp.axes is not None:
        ax = fp.axes
        sizes = ax.get("mrope_section") or ax.get("axes_dims_rope")
        rule = {"ascending": "ascending ladders theta^(k/(K - 1))",
                "descending": "descending ladders theta^(-k/(K - 1))"}.get(ax.get("axes_ladder"))
        norm = ax.get("axes_normalised_by")
        if norm:
            rule = (f"each axis's ladder theta^(-2k/{norm['dim']}), normalised by {norm['as']} {norm['dim']} where "
                    f"each axis's own dims d_a are expected")
        out.append(f"axes: {ax['n_axes']}, {ax['kind']}" + (f" {sizes}" if sizes else "") + (f", {rule}" if rule else "")
                   + f"; pairs per axis {ax['pairs_per_axis']} (pair j's axis: {_axis_runs(ax['pair_axes'])})")
    out.append(f"convention: {fp.convention}" + (f" {fp.pairs[:4]}..." if fp.convention == "explicit" else "")
               + f"; rotary dim {fp.rotary_dim} of {fp.head_dim}"
               + (f" from dim {fp.rotary_start}" if fp.rotary_start else "")
               + (f" ({pass_through} dims pass through)" if pass_through else "")
               + (f"; {fp.turning} of its {fp.rotary_dim // 2} pairs turn, {fp.rotary_dim // 2 - fp.turning} stay still"
                  if fp.turning is not None else ""))
    coords = fp.axes and (fp.axes.get("axes_scale") or fp.axes.get("axes_offset"))
    out.append(f"direction: {fp.direction}; "
               + (_coordinates(fp.axes) if coords else f"position offset: {fp.offset:.3g}")
               + f"; attention factor: {fp.attention_factor:.9g}")
    th = fp.thetas
    if th:
        out.append(f"frequencies: theta_0 = {th[0]:.12g}, theta_1 = {th[1] if len(th) > 1 else float('nan'):.12g}, ..., "
                   f"theta_{len(th) - 1} = {th[-1]:.12g} (relative precision {fp.precision:.1e})")
    if fp.base is not None:
        out.append(f"base: {fp.base:.10g} (ladder fit residual {fp.base_precision:.1e})"
                   + ("; the table changes with the sequence length" if fp.length_dependent else ""))
    if fp.curve == "ntk-or-default":
        out.append("curve: the default ladder (an NTK-aware table is the default ladder of a larger base)")
    elif (fp.curve == "unknown" or fp.switches) and not fp.scaling:
        out.append(f"curve: {fp.curve}" + (" (per-pair factors that change with the length)" if fp.switches else ""))
    else:
        out.append(f"curve: {fp.curve} {json_compact(fp.scaling)} (fits to {fp.curve_error:.1e})"
                   + (f"; the same table as the expected {fp.same_as_mistake}" if fp.same_as_mistake else ""))
    if fp.precision_class is not None or fp.max_errors:
        errs = ", ".join(f"p={p}: {v:.2g}" for p, v in fp.max_errors.items())
        out.append(f"precision: {('strict' if fp.precision_class == 'exact' else (fp.precision_class or 'none') + ' angles')} "
                   f"class holds; max error / pair norm {errs}")
    if fp.presets:
        out.append(f"matches preset{'s' if len(fp.presets) > 1 else ''} {', '.join(fp.presets)}")
    elif fp.same_frequencies:
        names = ", ".join(fp.same_frequencies)
        theirs = " / ".join(sorted(set(fp.same_frequencies.values())))
        out.append(f"matches no preset as it is: it has the frequencies of {names}, but pairs {fp.convention} where "
                   f"{'that preset pairs' if len(fp.same_frequencies) == 1 else 'those presets pair'} {theirs} "
                   f"(the same model's weights need the other convention, or permuted q/k weights)")
    else:
        out.append("matches no preset")
    return out


def reproduction(fp: Fingerprint) -> str:
    """The ``--expect`` that reproduces what was measured (``check`` under it holds on the fingerprinted code: it was
    confirmed on it), or why no expectation does."""
    if fp.expect is not None:
        return f"reproduced by --expect '{Expect.from_dict(fp.expect).to_json()}'"
    return f"no expectation reproduces it: {fp.no_expect or 'what was measured is not all read'}"


def _coordinates(ax: dict) -> str:
    """Each axis's coordinate, (p + offset) x scale, as read: 'coordinates (p - 6.5) x 0.898 (2 pi x 0.143) per axis'."""
    A = ax["n_axes"]
    offs = ax.get("axes_offset") or [0] * A
    scales = ax.get("axes_scale") or [1] * A
    def one(o, sc):
        p = f"(p {'-' if o < 0 else '+'} {abs(o):g})" if o else "p"
        return p if sc == 1 else f"{p} x {sc:.6g} (2 pi x {sc / (2 * math.pi):.6g})"
    said = [one(o, sc) for o, sc in zip(offs, scales)]
    return "coordinates " + (f"{said[0]} on every axis" if len(set(said)) == 1 else ", ".join(said))


def _axis_runs(axes: list[int]) -> str:
    """'0 x16, 1 x24, 2 x24' (runs of one axis), at most 8 runs then '...'."""
    runs: list[list[int]] = []
    for a in axes:
        if runs and runs[-1][0] == a:
            runs[-1][1] += 1
        else:
            runs.append([a, 1])
    return ", ".join(f"{a} x{n}" for a, n in runs[:8]) + (", ..." if len(runs) > 8 else "")


def json_compact(d) -> str:
    return json.dumps(d, separators=(",", ":")) if d else ""
