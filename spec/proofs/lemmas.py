"""Lemmas: facts the error model and the diagnoses rest on."""

from __future__ import annotations

import sympy as sp

from ropespec.spec.expectation import Expect
from ropespec.spec.proofs.core import BOUNDED, MAX_D, Proof, R, SYMBOLIC, _zero, a, b_, f, p, thetas, vec


def lemma_transpose_product():
    _zero(list(R(a).T * R(b_) - R(b_ - a)), "R(a)^T R(b) = R(b - a)")
    return "R(a)^T R(b) = R(b - a) for the definitions' R and symbolic a, b"


def lemma_cauchy_schwarz_rotation():
    xa, xb, cc, sn = sp.symbols("x_a x_b c s", real=True)
    lhs = (sp.Abs(xa) * sp.Abs(cc) + sp.Abs(xb) * sp.Abs(sn)) ** 2
    gap = sp.expand((xa**2 + xb**2) * (cc**2 + sn**2) - lhs)
    _zero(gap - sp.expand((sp.Abs(xa) * sp.Abs(sn) - sp.Abs(xb) * sp.Abs(cc)) ** 2), "Cauchy-Schwarz")
    return ("(|x_a c| + |x_b s|)^2 = (x_a^2 + x_b^2)(c^2 + s^2) - (|x_a s| - |x_b c|)^2 <= ||x||^2 (c^2 + s^2): the "
            "K_ROT = 4 bound's key step (algebra about numbers, not about a definition)")


def lemma_angle_error():
    x0, x1, dl = sp.symbols("x0 x1 delta", real=True)
    X = sp.Matrix([x0, x1])
    diff = R(a + dl) * X - R(a) * X
    _zero(diff.dot(diff) - 4 * sp.sin(dl / 2) ** 2 * X.dot(X), "angle error")
    return "||R(a + delta) x - R(a) x|| = 2 |sin(delta/2)| ||x|| <= |delta| ||x|| for the definitions' R"


def lemma_convention_conjugacy():
    for d in range(4, MAX_D + 1, 2):
        th = thetas(d // 2)
        x = vec("x", d)
        Ri = sp.Matrix(f(Expect(head_dim=d, convention="interleaved"), x, p, th)).jacobian(x)
        Rh = sp.Matrix(f(Expect(head_dim=d, convention="half"), x, p, th)).jacobian(x)
        P = sp.zeros(d)
        for i in range(d // 2):  # interleaved index 2i + c -> half index c d/2 + i
            P[i, 2 * i], P[i + d // 2, 2 * i + 1] = 1, 1
        _zero(list(Rh - P * Ri * P.T), f"d = {d}")
        _zero(list(P.T * P - sp.eye(d)), f"P orthogonal, d = {d}")
    return (f"R_half = P R_interleaved P^T for the definitions' two conventions, P the permutation 2i + c -> c d/2 + i, P^T P = I: "
            f"scores <P q, P k> are unchanged; every even d from 4 to {MAX_D}")


LEMMAS: dict[str, Proof] = {
    "lemma.transpose-product": Proof(SYMBOLIC, lemma_transpose_product, ("R: reflection", "R: shear")),
    "lemma.cauchy-schwarz-rotation": Proof(SYMBOLIC, lemma_cauchy_schwarz_rotation),
    "lemma.angle-error": Proof(SYMBOLIC, lemma_angle_error, ("R: doubled", "R: shear")),
    "lemma.convention-conjugacy": Proof(BOUNDED, lemma_convention_conjugacy, ("convention: swapped",)),
}
