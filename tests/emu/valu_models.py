"""Shared models and operands of the vector ALU semantics tests (``tests/emu/test_valu_*.py``).

- FP modes (:data:`CTX`, :data:`DENORM`, :data:`NON_IEEE`) and special bit patterns (NaN,
  infinities, denormals);
- :func:`lanes` and :func:`run`: operands broadcast to a wave of 64 lanes, and an op of
  :data:`~gpgpu_hdl.emu.valu_ops.VALU_OPS` run on them;
- the reference rounding of an exact rational (:func:`round_fraction`, :func:`rn32`,
  :func:`rn64`) and flush-to-zero (:func:`ftz32`);
- the seeded operand generator (:data:`RNG`, :func:`reseed`, :func:`rand_u32`,
  :func:`rand_f32`, :func:`rand_f64`) and the integer corner operands (:func:`pairs`);
- :func:`decimal_pi`, a high-precision pi independent of the model.

Plain helpers for the test modules to import; the fixture that reseeds :data:`RNG`, quiets
numpy and sets the decimal precision of every test is ``valu_environment`` in
``tests/emu/conftest.py``.
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np

from gpgpu_hdl.emu.context import FpMode, LaneContext
from gpgpu_hdl.emu.valu_ops import VALU_OPS
from tests.bits import M32, f32, f64

CTX = LaneContext()                          # LLVM default: f32 flushed, f64 kept, IEEE
DENORM = LaneContext(FpMode(0x3F0))          # all denormals kept
NON_IEEE = LaneContext(FpMode(0x1C0))
QNAN32, QNAN64 = 0x7FC00000, 0x7FF8000000000000
INF32, NINF32 = 0x7F800000, 0xFF800000
DEN_POS, DEN_NEG = 0x00000005, 0x80400000        # denormals
D = decimal.Decimal


def lanes(values, dtype=np.uint32):
    """Values (Python ints taken modulo the width) repeated to fill 64 lanes."""
    if dtype is not bool:
        mask = (1 << (8 * np.dtype(dtype).itemsize)) - 1
        values = [int(v) & mask for v in values]
    return np.resize(np.array(values, dtype=dtype), 64)


def _lane_array(a):
    """A 64-lane array as is; a list of bools as a bool wave; other lists as uint32, or uint64
    when a value needs more than 32 bits."""
    if isinstance(a, np.ndarray) and a.shape == (64,):
        return a
    if isinstance(a[0], (bool, np.bool_)):
        return lanes(a, bool)
    return lanes(a, np.uint64 if max(int(v) for v in a) > M32 else np.uint32)


def run(name, *args, ctx=CTX):
    """Run an op on lists broadcast to 64 lanes; return the first len(args[0]) lanes."""
    n = len(args[0])
    out = VALU_OPS[name](ctx, *(_lane_array(a) for a in args))
    if isinstance(out, tuple):
        return tuple(o[:n] for o in out)
    return out[:n]


def round_fraction(x: Fraction, frac_bits: int, emin: int, emax: int) -> float:
    """Reference rounding of an exact rational to nearest-even binary (with denormals)."""
    if x == 0:
        return 0.0
    neg, x = x < 0, abs(x)
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    quantum = Fraction(2) ** (max(e, emin) - frac_bits)
    m, rem = divmod(x, quantum)
    if rem > quantum / 2 or (rem == quantum / 2 and m % 2):
        m += 1
    v = m * quantum
    out = math.inf if v >= Fraction(2) ** (emax + 1) else float(v)
    return -out if neg else out


def rn32(x: Fraction) -> int:
    """Bits of the correctly rounded binary32 value of an exact rational."""
    return f32(round_fraction(x, 23, -126, 127))


def rn64(x: Fraction) -> int:
    """Bits of the correctly rounded binary64 value of an exact rational."""
    return f64(round_fraction(x, 52, -1022, 1023))


def ftz32(b: int) -> int:
    """The binary32 ``b`` with a denormal flushed to a zero of its sign."""
    return b & 0x80000000 if (b & 0x7F800000) == 0 else b


RNG = np.random.default_rng(20240521)


def reseed():
    """Every test draws the same random operands whatever order or worker runs it."""
    RNG.bit_generator.state = np.random.default_rng(20240521).bit_generator.state


def zipped(*iterables):
    """zip that insists on equal lengths."""
    return zip(*iterables, strict=True)


def rand_u32(n=64):
    """Uniformly random 32-bit words."""
    return RNG.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)


def rand_f32(n=64, lo=-30, hi=30):
    """Finite normal binary32 bit patterns with exponents in [lo, hi]."""
    mant = RNG.integers(0, 1 << 23, n, dtype=np.uint64)
    exp = RNG.integers(lo + 127, hi + 128, n).astype(np.uint64)
    sign = RNG.integers(0, 2, n).astype(np.uint64)
    return ((sign << np.uint64(31)) | (exp << np.uint64(23)) | mant).astype(np.uint32)


def rand_f64(n=64, lo=-60, hi=60):
    """Finite normal binary64 bit patterns with exponents in [lo, hi]."""
    mant = RNG.integers(0, 1 << 52, n, dtype=np.uint64)
    exp = RNG.integers(lo + 1023, hi + 1024, n).astype(np.uint64)
    sign = RNG.integers(0, 2, n).astype(np.uint64)
    return (sign << np.uint64(63)) | (exp << np.uint64(52)) | mant


EDGE32 = [0, 1, 2, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFF, 0xFFFFFFFE, 0x12345678,
          0xDEADBEEF]


#: how many 64-lane batches :func:`pairs` takes to cover every pair of :data:`EDGE32` corners
PAIR_BATCHES = -(-len(EDGE32) ** 2 // 64)


def pairs(batch: int = 0):
    """Two 64-lane operand lists: batch ``batch`` of the (a, b) pairs of :data:`EDGE32`
    corners, every pair once over the :data:`PAIR_BATCHES` batches, the last one filled up
    with random words."""
    n = PAIR_BATCHES * 64
    fill = n - len(EDGE32) ** 2
    a = [x for x in EDGE32 for _ in EDGE32] + [int(v) for v in rand_u32(fill)]
    b = [y for _ in EDGE32 for y in EDGE32] + [int(v) for v in rand_u32(fill)]
    return a[64 * batch:64 * (batch + 1)], b[64 * batch:64 * (batch + 1)]


def decimal_pi() -> D:
    """pi by the decimal module documentation's series (independent of the model), to the
    current decimal precision."""
    with decimal.localcontext() as ctx:
        ctx.prec += 2
        three = D(3)
        lasts, t, s, n, na, d, da = 0, three, 3, 1, 0, 0, 24
        while s != lasts:
            lasts = s
            n, na = n + na, na + 8
            d, da = d + da, da + 32
            t = (t * n) / d
            s += t
    return +s
