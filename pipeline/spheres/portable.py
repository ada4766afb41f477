"""exp and log made of IEEE basic operations only, so the fitter's numbers are the same everywhere.

numpy's own np.exp and np.log are not: each CPU feature level has its own
implementation (AVX-512, AVX2, baseline) and numpy versions change them, all within an ulp or
so of each other. The fitter is iterative and makes discrete choices (which pairs are near,
which sphere holds a sample), so one ulp changed the spheres of every link and with them the
description's identity between two machines. Additions, multiplications, divisions, rint,
frexp and powers of two built from their exponent bits are correctly rounded or exact on every
platform and numpy version.
"""

from __future__ import annotations

import math

import numpy as np

from pipeline.spheres.geometry import Array

_LN2_HI = 6.93147180369123816490e-01  # ln 2 in two parts: k * _LN2_HI is exact for |k| < 2**11
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e00
_EXP_TERMS = [1.0 / math.factorial(n) for n in range(14)]  # Taylor terms for |r| <= ln2 / 2
_SQRT_HALF = 0.7071067811865476


def exp(x: Array) -> Array:
    """e**x within 1 ulp or so; 0 below -745.2, the largest double's exponent above 709."""
    r = np.clip(np.asarray(x, dtype=np.float64), -746.0, 709.0)  # a new array: x, then r
    k = r * _INV_LN2
    np.rint(k, out=k)
    part = k * _LN2_HI
    r -= part  # r = (x - k * _LN2_HI) - k * _LN2_LO, in place: the same roundings
    np.multiply(k, _LN2_LO, out=part)
    r -= part
    p = np.multiply(r, _EXP_TERMS[13], out=part)  # the Horner form's first product
    for term in reversed(_EXP_TERMS[1:13]):  # in place: the same roundings, no temporaries
        p += term
        p *= r
    p += _EXP_TERMS[0]
    return times_power_of_two(p, k)


def times_power_of_two(p: Array, k: Array) -> Array:
    """p * 2**k for p in [0.5, 2) and whole k in [-1076, 1023]: np.ldexp's numbers, 4x faster;
    written into p, which the caller gives up.

    A product with an exact power of two rounds once, only where the result is subnormal, as
    ldexp rounds. Below 2**-1022, which is no normal double, the power is taken in two normal
    factors: p times the first is exact (it stays normal), so the product still rounds once.
    """
    if k.size == 0 or k.min() >= -1022:
        p *= _power_of_two(k)
        return p
    half = np.floor(k * 0.5)
    p *= _power_of_two(half)
    p *= _power_of_two(k - half)
    return p


def _power_of_two(k: Array) -> Array:
    """2.0**k for whole k in [-1022, 1023], from the exponent field."""
    bits = k.astype(np.int64)
    bits += 1023
    bits <<= 52
    return bits.view(np.float64)


def log(y: Array) -> Array:
    """Natural logarithm of positive finite y within a few ulps (log(m) by the atanh series)."""
    y = np.asarray(y, dtype=np.float64)
    m, e = np.frexp(y)
    low = m < _SQRT_HALF  # m in [sqrt(1/2), sqrt(2)): |s| <= 0.172 below
    m = np.where(low, m * 2.0, m)
    k = np.where(low, e - 1, e).astype(np.float64)
    f = m - 1.0
    s = f / (2.0 + f)
    s2 = s * s
    p = np.full_like(s, 1.0 / 23.0)
    for n in range(21, 0, -2):
        p *= s2
        p += 1.0 / n
    return (k * _LN2_HI + 2.0 * s * p) + k * _LN2_LO
