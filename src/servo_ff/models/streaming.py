"""Non-temporal (streaming) stores for the fused rollout's outputs: 64-byte aligned stores that skip the cache.

A large rollout's (T, N) outputs do not fit in any cache; a plain store first reads each line it writes (read for
ownership), a streaming store writes the whole line without reading it, which halves their memory traffic. Only
for arrays larger than the last-level cache: smaller ones are better left in it for the caller to read.
"""

from __future__ import annotations

import platform

import numba
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .. import numba_cache
from .chunk_rows import R_DTH, R_TF, R_TH, R_TM, R_VOLTS, S

numba_cache.install()  # before the first cache=True kernel

LANES = 8  # doubles per 64-byte line
#: x86's streaming stores are weakly ordered and need ``sfence``; LLVM's generic fence is emitted elsewhere (AArch64:
#: ``dmb ish``): ``llvm.x86.sse.sfence`` does not compile on other targets.
X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")


@intrinsic
def stream8(typingctx, row, idx, src, sidx):
    """``row[idx:idx + 8] = src[sidx:sidx + 8]`` as one non-temporal 64-byte store (``row[idx]`` 64-byte aligned:
    see :func:`misalign`; no bounds or negative-index handling: the caller guarantees both ranges)."""
    if not all(isinstance(a, types.Array) and a.ndim == 1 and a.dtype == types.float64 for a in (row, src)):
        return None

    def codegen(context, builder, signature, args):
        dst = context.make_array(signature.args[0])(context, builder, args[0]).data
        s = context.make_array(signature.args[2])(context, builder, args[2]).data
        vt = ir.VectorType(ir.DoubleType(), LANES)
        value = builder.load(builder.bitcast(builder.gep(s, [args[3]]), vt.as_pointer()), align=8)
        store = builder.store(value, builder.bitcast(builder.gep(dst, [args[1]]), vt.as_pointer()), align=64)
        store.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))
        return context.get_dummy_value()

    return types.void(row, idx, src, sidx), codegen


@intrinsic
def misalign(typingctx, row):
    """Doubles from the last 64-byte boundary to ``row[0]`` (0…7; a float64 array is 8-byte aligned)."""
    if not (isinstance(row, types.Array) and row.dtype == types.float64):
        return None

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        addr = builder.ptrtoint(data, ir.IntType(64))
        return builder.and_(builder.lshr(addr, ir.Constant(ir.IntType(64), 3)), ir.Constant(ir.IntType(64), 7))

    return types.int64(row), codegen


@intrinsic
def store_fence(typingctx):
    """``sfence``: the streaming stores before it are visible to every core before any store after it."""

    def codegen(context, builder, signature, args):
        emit_store_fence(builder, X86)
        return context.get_dummy_value()

    return types.void(), codegen


def emit_store_fence(builder: ir.IRBuilder, x86: bool) -> None:
    """``sfence`` on x86; elsewhere LLVM's sequentially consistent fence (orders every store before it)."""
    if x86:
        fn = builder.module.declare_intrinsic("llvm.x86.sse.sfence", fnty=ir.FunctionType(ir.VoidType(), []))
        builder.call(fn, [])
    else:
        builder.fence("seq_cst")


@numba.njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _out_rows(w, a, b, ot, od, om, of, ov):
    """Elements [a, b) of the chunk's θ, θ̇, τ_m, τ_f, U rows into the output rows (plain stores: the few
    elements before and after a streamed run). Through views indexed from 0: an index ``a + e`` would carry numba's
    negative-index wraparound into the loop."""
    n = b - a
    o1, o2, o3, o4, o5 = ot[a:b], od[a:b], om[a:b], of[a:b], ov[a:b]
    w1, w2, w3 = w[R_TH * S + a : R_TH * S + b], w[R_DTH * S + a : R_DTH * S + b], w[R_TM * S + a : R_TM * S + b]
    w4, w5 = w[R_TF * S + a : R_TF * S + b], w[R_VOLTS * S + a : R_VOLTS * S + b]
    for e in range(n):
        o1[e] = w1[e]
        o2[e] = w2[e]
        o3[e] = w3[e]
        o4[e] = w4[e]
        o5[e] = w5[e]


@numba.njit(cache=True, nogil=True, inline="always", error_model="numpy")
def stream_rows(w, m, ot, od, om, of, ov):
    """The θ, θ̇, τ_m, τ_f, U rows of a chunk block ``w`` (:mod:`.chunk_rows`, ``m`` elements) into the output
    rows, their 64-byte aligned run by streaming stores; False (nothing written) when the five rows are not equally
    aligned."""
    a = misalign(ot)
    if misalign(od) != a or misalign(om) != a or misalign(of) != a or misalign(ov) != a:
        return False
    k = min((LANES - a) % LANES, m)
    body = k + (m - k) // LANES * LANES
    _out_rows(w, 0, k, ot, od, om, of, ov)
    for e in range(k, body, LANES):
        stream8(ot, e, w, R_TH * S + e)
        stream8(od, e, w, R_DTH * S + e)
        stream8(om, e, w, R_TM * S + e)
        stream8(of, e, w, R_TF * S + e)
        stream8(ov, e, w, R_VOLTS * S + e)
    _out_rows(w, body, m, ot, od, om, of, ov)
    return True
