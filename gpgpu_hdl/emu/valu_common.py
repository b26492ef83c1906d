"""The registry of the vector ALU semantics and what its topic modules share.

:data:`VALU_OPS` is filled by :func:`register` as the topic modules (``valu_int``,
``valu_float``, ``valu_convert``, ``valu_divide``, ``valu_compare``) are imported; the public
entry, with the calling convention, is :mod:`gpgpu_hdl.emu.valu_ops`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["VALU_OPS", "register", "U32", "U64", "I32", "I64", "F32", "F64", "c32", "ONE",
           "BYTE", "M5"]

#: Mnemonic -> semantic function.
VALU_OPS: dict[str, Callable[..., object]] = {}


def register(*names: str) -> Callable[[Callable[..., object]], Callable[..., object]]:
    """Register the decorated function under each of ``names``."""

    def add(fn: Callable[..., object]) -> Callable[..., object]:
        for name in names:
            if name in VALU_OPS:
                raise ValueError(f"{name} registered twice")
            VALU_OPS[name] = fn
        return fn

    return add


U32 = np.uint32
U64 = np.uint64
I32 = np.int32
I64 = np.int64
F32 = np.float32
F64 = np.float64


def c32(v: int) -> np.ndarray:
    return np.array(v, U32)


ONE = c32(1)
M5 = c32(31)
BYTE = c32(0xFF)
