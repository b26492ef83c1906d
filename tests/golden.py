"""Evaluating the golden model's vector semantic functions (:data:`VALU_OPS`) as the RTL unit
tests' reference: operands in waves of 64 lanes, and the (result, flag) of each lane.

Plain helpers for test modules to import; the shared fixtures are in ``tests/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from gpgpu_hdl.emu.context import WAVE_SIZE


def waves(items: list) -> Iterator[tuple[list, list]]:
    """``items`` a wave (64) at a time: each chunk, and the chunk padded to 64 with its first
    item (a semantic function takes full waves)."""
    for start in range(0, len(items), WAVE_SIZE):
        chunk = items[start:start + WAVE_SIZE]
        yield chunk, chunk + [chunk[0]] * (WAVE_SIZE - len(chunk))


def lane_outputs(result) -> list[tuple[int, int]]:
    """(result, flag) of each lane from what a semantic function of :data:`VALU_OPS` returned:
    the (values, flags) pair of an op with a VCC output (carry-out, ``v_div_scale``), a VOPC
    compare as flag with result 0, or the values with flag 0."""
    if isinstance(result, tuple):
        values, flags = result
    elif result.dtype == bool:
        values, flags = np.zeros(WAVE_SIZE, np.uint64), result
    else:
        values, flags = result, np.zeros(WAVE_SIZE, bool)
    return [(int(v), int(f)) for v, f in zip(values, flags, strict=True)]
