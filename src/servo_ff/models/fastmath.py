"""Branch-free exp, log and sin for the SIMD kernel (double precision, ≲ 2 ulp on the ranges used).

numba's LLVM has no vector math library on PyPI builds (llvmlite is built without the SVML patch and without
LLVM's ``-vector-library`` option), so calls to libm keep a loop scalar. These polynomial versions are plain
arithmetic plus bit casts, which LLVM vectorises (8 lanes, AVX-512). Range reduction follows fdlibm (Cody–Waite
with split constants); exp and sin are Taylor series truncated below 1e-17, log is fdlibm's minimax.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

LOG2E = 1.4426950408889634
LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
SQRT2 = 1.4142135623730951
TWO_OVER_PI = 0.6366197723675814
PIO2_1 = 1.57079632673412561417e00
PIO2_2 = 6.07710050630396597660e-11
PIO2_3 = 2.02226624871116645580e-21


@intrinsic
def _bits_to_float(typingctx, bits):
    if not isinstance(bits, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@intrinsic
def _float_to_bits(typingctx, x):
    if not isinstance(x, types.Float):
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


_jit = numba.njit(inline="always", cache=True, error_model="numpy")


@_jit
def exp_(x: float) -> float:
    """e^x; inputs are clamped to [−708, 709] (e^−708 ≈ 3e−308 stands for 0). The degree-13 Taylor polynomial is
    evaluated by Estrin's scheme (depth 4 instead of Horner's 13: the kernel's exp(−exp(α·log x)) chain is latency-
    bound, one loop iteration fills the out-of-order window)."""
    x = min(max(x, -708.0), 709.0)
    k = np.floor(x * LOG2E + 0.5)
    r = (x - k * LN2_HI) - k * LN2_LO
    r2 = r * r
    r4 = r2 * r2
    r8 = r4 * r4
    a0 = 1.0 + r
    a1 = 0.5 + 0.16666666666666666 * r
    a2 = 0.041666666666666664 + 0.008333333333333333 * r
    a3 = 0.001388888888888889 + 0.0001984126984126984 * r
    a4 = 2.48015873015873e-05 + 2.755731922398589e-06 * r
    a5 = 2.755731922398589e-07 + 2.505210838544172e-08 * r
    a6 = 2.08767569878681e-09 + 1.6059043836821613e-10 * r  # 1/12!, 1/13!
    p = (a0 + a1 * r2) + (a2 + a3 * r2) * r4 + ((a4 + a5 * r2) + a6 * r4) * r8
    return p * _bits_to_float((np.int64(k) + 1023) << 52)


#: fdlibm's (e_log.c) minimax coefficients of (log(1+s)−log(1−s)−2s)/s in z = s² on |s| < 0.1716 (error < 2^−58.45)
LG1, LG2, LG3, LG4 = (
    6.666666666666735130e-01,
    3.999999999940941908e-01,
    2.857142874366239149e-01,
    2.222219843214978396e-01,
)
LG5, LG6, LG7 = 1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01


@_jit
def log_(x: float) -> float:
    """ln x for finite x > 0 (normal numbers): x = 2^e·m, m in [√2/2, √2], ln m = 2s + s·R(s²) with
    s = (m − 1)/(m + 1) and fdlibm's degree-7 minimax R, evaluated in two interleaved halves."""
    bits = _float_to_bits(x)
    e = np.float64((bits >> 52) - 1023)
    m = _bits_to_float((bits & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000)
    big = m > SQRT2
    m = m * 0.5 if big else m
    e = e + 1.0 if big else e
    s = (m - 1.0) / (m + 1.0)
    z = s * s
    w = z * z
    w2 = w * w
    t1 = w * ((LG2 + w * LG4) + w2 * LG6)
    t2 = z * ((LG1 + w * LG3) + w2 * (LG5 + w * LG7))
    return e * LN2_HI + (e * LN2_LO + (2.0 * s + s * (t1 + t2)))


@_jit
def sin_(x: float) -> float:
    """sin x for |x| < 1e5 (pendulum angles)."""
    k = np.floor(x * TWO_OVER_PI + 0.5)
    r = ((x - k * PIO2_1) - k * PIO2_2) - k * PIO2_3
    r2 = r * r
    s = 2.8114572543455206e-15 * r2 - 7.647163731819816e-13
    s = s * r2 + 1.6059043836821613e-10
    s = s * r2 - 2.505210838544172e-08
    s = s * r2 + 2.7557319223985893e-06
    s = s * r2 - 0.0001984126984126984
    s = s * r2 + 0.008333333333333333
    s = s * r2 - 0.16666666666666666
    sin_r = r + r * r2 * s
    c = 1.5619206968586225e-16 * r2 - 4.779477332387385e-14
    c = c * r2 + 1.1470745597729725e-11
    c = c * r2 - 2.08767569878681e-09
    c = c * r2 + 2.755731922398589e-07
    c = c * r2 - 2.48015873015873e-05
    c = c * r2 + 0.001388888888888889
    c = c * r2 - 0.041666666666666664
    c = c * r2 + 0.5
    cos_r = 1.0 - r2 * c
    quadrant = k - 4.0 * np.floor(k * 0.25)  # 0, 1, 2, 3 as floats keeps the loop vectorisable
    odd = quadrant == 1.0 or quadrant == 3.0
    out = cos_r if odd else sin_r
    return -out if quadrant >= 2.0 else out


EXPONENT = 0x7FF0000000000000


@_jit
def finite_tag(x: float) -> int:
    """0 if ``x`` is ±inf or NaN (exponent bits all ones), else > 0: the minimum over a loop is 0 iff any element
    was non-finite (an integer min-reduction vectorises; a float one would need reassociation)."""
    return ~_float_to_bits(x) & EXPONENT
