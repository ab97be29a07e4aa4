"""Branch-free exp, log and sin for the SIMD kernel (double precision, ≲ 2 ulp on the ranges used).

numba's LLVM has no vector math library on PyPI builds, so calls to libm keep a loop scalar. These
polynomial versions are plain arithmetic plus bit casts, which LLVM vectorises. Range reduction follows
fdlibm (Cody–Waite with split constants); polynomials are Taylor series truncated below 1e-17.
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
    """e^x; inputs are clamped to [−708, 709] (e^−708 ≈ 3e−308 stands for 0)."""
    x = min(max(x, -708.0), 709.0)
    k = np.floor(x * LOG2E + 0.5)
    r = (x - k * LN2_HI) - k * LN2_LO
    p = 1.6059043836821613e-10  # 1/13!
    p = p * r + 2.08767569878681e-09
    p = p * r + 2.505210838544172e-08
    p = p * r + 2.755731922398589e-07
    p = p * r + 2.755731922398589e-06
    p = p * r + 2.48015873015873e-05
    p = p * r + 0.0001984126984126984
    p = p * r + 0.001388888888888889
    p = p * r + 0.008333333333333333
    p = p * r + 0.041666666666666664
    p = p * r + 0.16666666666666666
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    return p * _bits_to_float((np.int64(k) + 1023) << 52)


@_jit
def log_(x: float) -> float:
    """ln x for finite x > 0 (normal numbers)."""
    bits = _float_to_bits(x)
    e = np.float64((bits >> 52) - 1023)
    m = _bits_to_float((bits & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000)
    big = m > SQRT2
    m = m * 0.5 if big else m
    e = e + 1.0 if big else e
    f = (m - 1.0) / (m + 1.0)
    f2 = f * f
    s = 1.0 / 25.0
    s = s * f2 + 1.0 / 23.0
    s = s * f2 + 1.0 / 21.0
    s = s * f2 + 1.0 / 19.0
    s = s * f2 + 1.0 / 17.0
    s = s * f2 + 1.0 / 15.0
    s = s * f2 + 1.0 / 13.0
    s = s * f2 + 1.0 / 11.0
    s = s * f2 + 1.0 / 9.0
    s = s * f2 + 1.0 / 7.0
    s = s * f2 + 1.0 / 5.0
    s = s * f2 + 1.0 / 3.0
    s = s * f2 + 1.0
    return e * LN2_HI + (e * LN2_LO + 2.0 * f * s)


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
