"""Float math whose results are the same bits on every x86-64 machine.

numpy picks the kernel of a transcendental ufunc (``exp``, ``log``,
``power``, ``sin``...) at import time from the CPU's features: AVX-512
machines run other polynomials than AVX2 or SSE ones, and the answers
differ in the last bit. BLAS (``@``, ``dot``) likewise picks its kernels,
and with them the order of a sum, by CPU. A value that becomes a table
entry, a P4 constant, a generated file or a digest a test compares must
not go through either, or the same checkout writes different bytes on
different machines.

These helpers give such values a fixed definition:

* transcendental functions element by element through Python's ``math``
  (the C library's scalar routines, which numpy's random generators use
  too), never numpy's dispatched kernels;
* a dot product as an elementwise product and numpy's pairwise sum, whose
  order is fixed by the array's length and not by the CPU (basic IEEE
  arithmetic, ``+ - * /`` and ``sqrt``, is correctly rounded everywhere);
* exact integer answers (``bit_length``) where the quantity allows.

``tests/common/test_samebits.py`` checks that no other module calls a
dispatched kernel, and that the byte-compared outputs are the same with
numpy's kernels limited to its baseline.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["DISPATCHED_UFUNCS", "bit_length", "dot", "exp", "log", "log1p", "power"]

DISPATCHED_UFUNCS = frozenset({
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp", "logaddexp2",
    "power", "float_power", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2",
    "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "cbrt", "hypot",
    "dot", "matmul", "vdot", "inner", "outer", "tensordot", "einsum",
})
"""numpy functions whose result can depend on the CPU they run on: the SIMD
kernels of transcendental ufuncs, and BLAS behind the products."""


def _elementwise(fn: Callable[[float], float], x: ArrayLike) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    flat = np.fromiter(map(fn, a.ravel().tolist()), dtype=np.float64, count=a.size)
    return flat.reshape(a.shape)


def exp(x: ArrayLike) -> np.ndarray:
    """``e**x`` of every element, by ``math.exp``."""
    return _elementwise(math.exp, x)


def log(x: ArrayLike) -> np.ndarray:
    """The natural logarithm of every (positive) element, by ``math.log``."""
    return _elementwise(math.log, x)


def log1p(x: ArrayLike) -> np.ndarray:
    """``log(1 + x)`` of every element, by ``math.log1p``."""
    return _elementwise(math.log1p, x)


def power(base: ArrayLike, exponent: ArrayLike) -> np.ndarray:
    """``base ** exponent`` elementwise (broadcast), by ``math.pow``."""
    b, e = np.broadcast_arrays(np.asarray(base, dtype=np.float64),
                               np.asarray(exponent, dtype=np.float64))
    flat = np.fromiter(map(math.pow, b.ravel().tolist(), e.ravel().tolist()),
                       dtype=np.float64, count=b.size)
    return flat.reshape(b.shape)


def dot(a: ArrayLike, b: ArrayLike) -> np.ndarray | float:
    """``a @ b`` for a vector ``b`` and a vector or matrix ``a``, summed by
    numpy's pairwise sum over the last axis instead of BLAS."""
    left, right = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if right.ndim != 1 or left.ndim not in (1, 2) or left.shape[-1] != right.shape[0]:
        raise ValueError(f"dot needs (n,) or (m, n) by (n,), not {left.shape} by {right.shape}")
    out = np.ascontiguousarray(left * right).sum(axis=-1)
    return float(out) if left.ndim == 1 else out


def bit_length(values: ArrayLike) -> np.ndarray:
    """``int.bit_length`` of every integer in ``[0, 2**64)``, exactly:
    ``floor(log2(v)) + 1`` for ``v > 0`` and 0 for 0, read off the binary
    exponents of the two 32-bit halves (``frexp`` is exact on them)
    instead of a rounded logarithm."""
    v = np.asarray(values)
    if v.dtype.kind not in "ui":
        raise ValueError(f"bit_length needs integers, not {v.dtype}")
    if v.dtype.kind == "i" and v.size and int(v.min()) < 0:
        raise ValueError("bit_length needs non-negative integers")
    u = v.astype(np.uint64)
    high = np.frexp((u >> np.uint64(32)).astype(np.float64))[1]
    low = np.frexp((u & np.uint64(0xFFFFFFFF)).astype(np.float64))[1]
    return np.where(high > 0, high + 32, low).astype(np.int64)
