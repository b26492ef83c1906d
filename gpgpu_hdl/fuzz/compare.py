"""Comparing the output buffers of two implementations: integers bit for bit, floats by their
distance in float32 steps (the example suite's rule, ``examples/suite/framework.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

__all__ = ["ulp_distance", "Mismatch", "first_mismatch"]


def ulp_distance(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Elementwise distance in float32 steps (int64). +0 and -0 are 0 apart, two NaNs are 0
    apart, a NaN and a number 2**32 apart."""
    x = np.asarray(x, np.float32)
    y = np.asarray(y, np.float32)

    def key(v: np.ndarray) -> np.ndarray:
        i = v.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)

    d = np.abs(key(x) - key(y))
    nx, ny = np.isnan(x), np.isnan(y)
    return np.where(nx & ny, 0, np.where(nx | ny, 1 << 32, d))


@dataclass(frozen=True)
class Mismatch:
    """The first element where two runs differ: buffer, flat index, both values (as text),
    how many elements differ."""

    buffer: str
    index: int
    left: str
    right: str
    count: int

    def __str__(self) -> str:
        return (f"{self.buffer}[{self.index}]: {self.left} != {self.right} "
                f"({self.count} element(s) differ)")


def _text(v: np.generic) -> str:
    if isinstance(v, np.floating):
        return f"{float(v)!r} ({int(np.asarray(v).view(np.uint32)):#010x})"
    return str(int(v))


def first_mismatch(left: Mapping[str, np.ndarray], right: Mapping[str, np.ndarray],
                   ulp: int = 0) -> Mismatch | None:
    """The first difference between two runs' buffers (in ``left``'s order), or None:
    integer buffers must be identical, float32 ones within ``ulp`` steps."""
    for name, a in left.items():
        b = right[name]
        a, b = np.asarray(a).reshape(-1), np.asarray(b).reshape(-1)
        if a.dtype.kind == "f":
            bad = np.flatnonzero(ulp_distance(a, b) > ulp)
        else:
            bad = np.flatnonzero(a != b)
        if bad.size:
            i = int(bad[0])
            return Mismatch(name, i, _text(a[i]), _text(b[i]), int(bad.size))
    return None
