"""The rope family's forms: apply (in every layout), vLLM's forward, the table builder, the kernel, qk and complex
functions, and a decoder (prefill/step) of the apply form, registered here; their calls across the process boundary
live in one module each (``apply``, ``backward``, ``decoder``, ``table``, ``kernel``, ``complex``).

* apply: ``f(x, positions)``, x (n, head_dim); in a batched layout ``f(x, positions)`` with x (batch, seq, heads, d)
  in that layout's axis order, or packed ``f(x, offsets, cu_seqlens=...)`` (thd);
* vllm: ``forward(positions, query, key) -> (query, key)``, heads flattened;
* table: ``table(positions) -> (cos, sin)``, per pair (n, rotary_dim/2) or per dim (n, rotary_dim);
* kernel: ``kernel(x, cos, sin)``, the table handed over per dim (default) or per pair (``kernel.table = "pair"``);
* qk: transformers' ``apply(q, k, cos, sin) -> (q_embed, k_embed)``, q (b, h_q, s, d), k (b, h_kv, s, d);
* complex: Meta's and DeepSeek's ``apply_rotary_emb(xq, xk, freqs_cis)`` (or ``(x, freqs_cis)``), freqs_cis = cos + i
  sin per pair, q and k (b, s, h, d) or ``--layout bhsd``;
* a kernel, qk or complex function and its library's table (``--table``): checked as one apply function.
"""
from __future__ import annotations


import numpy as np

from ropespec.implementations.families.base import Form, Op, register
from ropespec.implementations.families.rope.apply import RopeBound, op_call, op_layout, two_rows, warm_apply
from ropespec.implementations.families.rope.backward import op_grad, op_kernel_grad, op_qk_grad
from ropespec.implementations.families.rope.decoder import DecoderBound, op_prefill, op_step
from ropespec.implementations.families.rope.complex import op_complex, op_complex_grad, piped, warm_complex
from ropespec.implementations.families.rope.kernel import (KernelBound, op_kernel, op_qk, piped_kernel, piped_qk,
                                                            warm_kernel, warm_qk)
from ropespec.implementations.families.rope.table import TableBound, op_table, table_is_plain
from ropespec.spec.definitions import token_positions


def _positions(shape, x, positions, *rest):
    """What f(x, positions, ...) hands over: the positions, or in the packed layout with one offset per sequence every
    token's (offset + its index in its sequence; cu_seqlens follows x and positions in layout and grad calls)."""
    cu = rest[0] if shape.laid_out.packed and rest else None
    if cu is not None and shape.positions == "per-sequence":
        return [token_positions(positions, cu)]
    return [positions]


def _grad_positions(shape, x, positions, g, cu_seqlens=None, *rest):
    return _positions(shape, x, positions, cu_seqlens)


_APPLY_INVARIANTS = ("rope.*", "axes.*", "contract.*", "scaling.*", "autograd.*")
_ROPE_OPS = {"call": Op(op_call, "f(x, positions)", _positions),
             "layout": Op(op_layout, "f(x, positions) in its layout", _positions),
             "grad": Op(op_grad, "f(x, positions) with autograd", _grad_positions)}
_DECODER_OPS = {"prefill": Op(op_prefill, "prefill", lambda shape, x, positions, rows=None: [positions]),
                "step": Op(op_step, "step", lambda shape, x, position, rows=None: [np.array([position])])}

APPLY = Form("rope", "apply", ((2,), "(x, positions)"), _APPLY_INVARIANTS, _ROPE_OPS, warm_apply, RopeBound,
             as_rope=lambda f: f, diagnosed=True, decoder_invariants=("decode.consistency",),
             decoder_ops=_DECODER_OPS, decoder_bound=DecoderBound,
             layout_signatures={"thd": ((2, 3), "(x, positions, cu_seqlens)")},
             layouts=("nd", "bshd", "bhsd", "sbhd", "thd"), layouts_of="RoPE apply functions", writes_in_place=True,
             says_itself="an apply function")
VLLM = Form("rope", "vllm", ((3,), "(positions, query, key)"), _APPLY_INVARIANTS, _ROPE_OPS, warm_apply, RopeBound,
            as_rope=lambda f: f, diagnosed=True, writes_in_place=True, says_itself="vLLM's forward", rows="vllm")
TABLE = Form("rope", "table", ((1,), "(positions)"), ("table.angles",),
             {"table": Op(op_table, "table(positions)", lambda shape, positions: [positions])},
             lambda host, fn, e: op_table(host, fn, e, two_rows(e)), TableBound,
             as_rope=lambda f: f.rotate_by_table, diagnosed=True, plain_if=table_is_plain)
KERNEL = Form("rope", "kernel", ((3,), "(x, cos, sin)"), ("kernel.rotation", "autograd.*"),
              {"kernel": Op(op_kernel, "kernel(x, cos, sin)"),
               "kernel_grad": Op(op_kernel_grad, "kernel(x, cos, sin) with autograd")}, warm_kernel, KernelBound,
              as_rope=lambda f: f.rotate_by_kernel, handed_a_table=True, piped=piped_kernel)
QK = Form("rope", "qk", ((4,), "(q, k, cos, sin)"), ("kernel.qk", "autograd.*"),
          {"qk": Op(op_qk, "apply(q, k, cos, sin)"), "qk_grad": Op(op_qk_grad, "apply(q, k, cos, sin) with autograd")},
          warm_qk, KernelBound, as_rope=lambda f: f.rotate_by_kernel, handed_a_table=True, q_and_k=True,
          piped=piped_qk)
COMPLEX = Form("rope", "complex", ((2, 3), "(xq, xk, freqs_cis) or (x, freqs_cis)"), ("kernel.qk", "autograd.*"),
               {"qk": Op(op_complex, "apply(xq, xk, freqs_cis)"),
                "qk_grad": Op(op_complex_grad, "apply(xq, xk, freqs_cis) with autograd")},
               warm_complex, KernelBound, as_rope=lambda f: f.rotate_by_kernel, handed_a_table=True, q_and_k=True,
               piped=piped, layouts=("bshd", "bhsd"), layouts_of="complex-form apply functions")
register(APPLY, VLLM, TABLE, KERNEL, QK, COMPLEX)
