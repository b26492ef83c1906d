"""Vector ALU semantics: compares (VOPC and their VOP3 forms) and the class tests.

The 16 float conditions over f32/f64 (``v_cmp``, ``v_cmpx``, ``v_cmps``, ``v_cmpsx``), the 8
integer conditions over i32/u32/i64/u64, and ``v_cmp_class``. Each returns a ``bool`` array.
Registered in :data:`~gpgpu_hdl.emu.valu_common.VALU_OPS`; conventions in
:mod:`gpgpu_hdl.emu.valu_ops`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .fp import src_f32, src_f64
from .valu_common import I32, I64, ONE, U32, U64, c32, register

__all__: list[str] = []

_ABS32 = c32(0x7FFFFFFF)
_ABS64 = np.array(0x7FFFFFFFFFFFFFFF, U64)


def _lg(a, b):
    return (a < b) | (a > b)


_FLOAT_CONDS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "f": lambda a, b: np.zeros(a.shape, bool),
    "lt": np.less,
    "eq": np.equal,
    "le": np.less_equal,
    "gt": np.greater,
    "lg": _lg,
    "ge": np.greater_equal,
    "o": lambda a, b: ~(np.isnan(a) | np.isnan(b)),
    "u": lambda a, b: np.isnan(a) | np.isnan(b),
    "nge": lambda a, b: ~(a >= b),
    "nlg": lambda a, b: ~_lg(a, b),
    "ngt": lambda a, b: ~(a > b),
    "nle": lambda a, b: ~(a <= b),
    "neq": np.not_equal,                      # unordered: true on NaN
    "nlt": lambda a, b: ~(a < b),
    "tru": lambda a, b: np.ones(a.shape, bool),
}

_INT_CONDS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "f": _FLOAT_CONDS["f"],
    "lt": np.less,
    "eq": np.equal,
    "le": np.less_equal,
    "gt": np.greater,
    "ne": np.not_equal,
    "ge": np.greater_equal,
    "t": _FLOAT_CONDS["tru"],
}


def _float_cmp(cond, src):
    def op(ctx, a, b):
        return cond(src(ctx, a), src(ctx, b))
    return op


def _int_cmp(cond, view):
    def op(_ctx, a, b):
        return cond(a.view(view), b.view(view))
    return op


for _cond_name, _cond in _FLOAT_CONDS.items():
    for _t, _src in (("f32", src_f32), ("f64", src_f64)):
        register(*(f"v_{kind}_{_cond_name}_{_t}" for kind in ("cmp", "cmpx", "cmps", "cmpsx")))(
            _float_cmp(_cond, _src))

for _cond_name, _cond in _INT_CONDS.items():
    for _t, _view in (("i32", I32), ("u32", U32), ("i64", I64), ("u64", U64)):
        register(f"v_cmp_{_cond_name}_{_t}", f"v_cmpx_{_cond_name}_{_t}")(_int_cmp(_cond, _view))


# Class of a raw value from its magnitude bits: zero, denormal, normal, inf, sNaN, qNaN
# (searchsorted over the category edges), then the class bit number by sign:
# 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf.
_CLASS_EDGES32 = np.array([1, 0x00800000, 0x7F800000, 0x7F800001, 0x7FC00000], U32)
_CLASS_EDGES64 = np.array([1, 0x0010000000000000, 0x7FF0000000000000, 0x7FF0000000000001,
                           0x7FF8000000000000], U64)
_CLASS_BIT = np.array([6, 7, 8, 9, 0, 1,           # positive: by category
                       5, 4, 3, 2, 0, 1], U32)    # negative


def _class_op(f64):
    if f64:
        edges, absmask, sign_shift = _CLASS_EDGES64, _ABS64, U64(63)
    else:
        edges, absmask, sign_shift = _CLASS_EDGES32, _ABS32, U32(31)

    def op(_ctx, a, mask):
        """True when the class of the raw S0 (no flushing) is set in the mask S1."""
        category = np.searchsorted(edges, a & absmask, side="right")
        bit = _CLASS_BIT[category + 6 * (a >> sign_shift).astype(np.intp)]
        return ((mask >> bit) & ONE) != 0
    return op


register("v_cmp_class_f32", "v_cmpx_class_f32")(_class_op(False))
register("v_cmp_class_f64", "v_cmpx_class_f64")(_class_op(True))
