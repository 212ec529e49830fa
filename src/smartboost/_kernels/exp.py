"""``exp`` for float64 that LLVM can vectorise: the logistic losses' exponential, and the
lambda kernel's per-document one.

numba calls libm's scalar ``exp`` for ``math.exp``, and this llvmlite has no vector math
library (SVML); numpy's float64 ``exp`` is scalar on AVX2 too. :func:`exp` is plain arithmetic
and bit casts, so a loop calling it vectorises (4 doubles per AVX2 instruction):

- range reduction ``x = k ln2 + r``, ``k = rint(x / ln2)``, ``|r| <= ln2 / 2``, with ``ln2`` split
  into a high part exact in ``k`` products and a low part (Cody and Waite);
- ``e^r`` by its Taylor polynomial of degree 13 (truncation error below 2e-17 relative),
  evaluated by Horner's rule with fused multiply-adds;
- ``2^k`` built from exponent bits, as the product ``2^k1 2^k2`` with ``k1 + k2 = k`` so that
  results down to the subnormal range and up to overflow come out with one rounding; the
  integer ``k`` is read from the bits of ``k + 1.5 * 2^52`` (AVX2 has no vector float64 to
  int64 conversion).

Results are within 1 ulp of numpy's ``np.exp`` over the whole range (the tests check 301,000
values), and exact at the special values: ``exp(0) = 1``,
``exp(-inf) = 0``, ``exp(inf) = inf``, ``nan`` for ``nan``, overflow to ``inf`` above 709.78,
underflow to 0 below -745.13.

``math.exp`` is a libm call that LLVM cannot vectorise; this polynomial form vectorises, so the
logistic losses' gradient passes are bound by memory traffic rather than by ``exp``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._intrinsics import bits_float, float_bits

_LOG2_E = 1.4426950408889634
_LN2_HIGH = 6.93147180369123816490e-01  # ln 2 to 32 bits: k * _LN2_HIGH is exact for |k| < 2^11
_LN2_LOW = 1.90821492927058770002e-10   # ln 2 - _LN2_HIGH
_ROUNDING = 6755399441055744.0           # 1.5 * 2^52: k + it holds the integer k in its low bits
_ROUNDING_BITS = 0x4338000000000000      # float_bits(_ROUNDING)
_INVERSE_FACTORIALS = tuple(1.0 / math.factorial(j) for j in range(14))
_C2, _C3, _C4, _C5, _C6, _C7, _C8, _C9, _C10, _C11, _C12, _C13 = _INVERSE_FACTORIALS[2:]


@njit(cache=True, nogil=True)
def _power_of_two(k):
    """``2.0 ** k`` for an integer-valued float ``k`` in [-1022, 1023]."""
    return bits_float((float_bits(k + _ROUNDING) - _ROUNDING_BITS + 1023) << 52)


@njit(cache=True, nogil=True, fastmath={"contract"}, error_model="numpy")
def exp(x):
    """``e**x`` within 1 ulp of ``np.exp``, vectorisable (see the module docstring)."""
    x = -746.0 if x < -746.0 else (710.0 if x > 710.0 else x)  # keeps nan
    k = np.rint(x * _LOG2_E)
    r = (x - k * _LN2_HIGH) - k * _LN2_LOW
    p = _C13
    for c in (_C12, _C11, _C10, _C9, _C8, _C7, _C6, _C5, _C4, _C3, _C2, 1.0, 1.0):
        p = p * r + c
    k1 = np.rint(k * 0.5)
    return p * _power_of_two(k1) * _power_of_two(k - k1)
