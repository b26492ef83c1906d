"""Unit tests of the vector ALU semantics (gpgpu_hdl.emu.valu_ops / gpgpu_hdl.emu.fp).

Every expectation comes from an independent model: Python integers, struct-packed floats,
fractions.Fraction (exact arithmetic, rounded by the reference rounding below), decimal
(high-precision transcendental references) or numpy float32/float64 arithmetic where that is
the IEEE-754 definition of the operation.
"""

from __future__ import annotations

import decimal
import math
import struct
from fractions import Fraction

import numpy as np
import pytest

from gpgpu_hdl.emu.context import FpMode, LaneContext
from gpgpu_hdl.emu.valu_ops import VALU_OPS
from gpgpu_hdl.isa.formats import Format
from gpgpu_hdl.isa.table import TABLE, Unit
from tests.bits import M32, b32, b64, f32, f64, sext

CTX = LaneContext()                          # LLVM default: f32 flushed, f64 kept, IEEE
DENORM = LaneContext(FpMode(0x3F0))          # all denormals kept
NON_IEEE = LaneContext(FpMode(0x1C0))
CORE_HANDLED = {"v_nop", "v_clrexcp", "v_readlane_b32", "v_readfirstlane_b32", "v_movrels_b32",
                "v_movreld_b32", "v_movrelsd_b32", "v_mov_b32"}
QNAN32, QNAN64 = 0x7FC00000, 0x7FF8000000000000
INF32, NINF32 = 0x7F800000, 0xFF800000


@pytest.fixture(autouse=True)
def _quiet_fp():
    """numpy FP warnings off (the core does the same per launch); 60-digit decimal references."""
    with np.errstate(all="ignore"), decimal.localcontext() as ctx:
        ctx.prec = 60
        yield


# ---------------------------------------------------------------------------------------------
# helpers

def lanes(values, dtype=np.uint32):
    """Values (Python ints taken modulo the width) repeated to fill 64 lanes."""
    if dtype is not bool:
        mask = (1 << (8 * np.dtype(dtype).itemsize)) - 1
        values = [int(v) & mask for v in values]
    return np.resize(np.array(values, dtype=dtype), 64)


def _lane_array(a):
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
    return f64(round_fraction(x, 52, -1022, 1023))


def ftz32(b: int) -> int:
    return b & 0x80000000 if (b & 0x7F800000) == 0 else b


def is_nan32(b: int) -> bool:
    return (b & 0x7F800000) == 0x7F800000 and (b & 0x7FFFFF) != 0


def canon32(b: int) -> int:
    return QNAN32 if is_nan32(b) else b


def np32(bits) -> np.ndarray:
    return np.asarray(bits, np.uint32).view(np.float32)


RNG = np.random.default_rng(20240521)


@pytest.fixture(autouse=True)
def _reseed():
    """Every test draws the same random operands whatever order or worker runs it."""
    RNG.bit_generator.state = np.random.default_rng(20240521).bit_generator.state


def zipped(*iterables):
    return zip(*iterables, strict=True)


def rand_u32(n=64):
    return RNG.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)


def rand_f32(n=64, lo=-30, hi=30):
    """Finite normal binary32 bit patterns with exponents in [lo, hi]."""
    mant = RNG.integers(0, 1 << 23, n, dtype=np.uint64)
    exp = RNG.integers(lo + 127, hi + 128, n).astype(np.uint64)
    sign = RNG.integers(0, 2, n).astype(np.uint64)
    return ((sign << np.uint64(31)) | (exp << np.uint64(23)) | mant).astype(np.uint32)


def rand_f64(n=64, lo=-60, hi=60):
    mant = RNG.integers(0, 1 << 52, n, dtype=np.uint64)
    exp = RNG.integers(lo + 1023, hi + 1024, n).astype(np.uint64)
    sign = RNG.integers(0, 2, n).astype(np.uint64)
    return (sign << np.uint64(63)) | (exp << np.uint64(52)) | mant


# ---------------------------------------------------------------------------------------------
# registry and calling convention

def _vector_alu_rows():
    return [e for e in TABLE if e.unit in (Unit.VALU, Unit.FPU, Unit.FPU64)]


def test_registry_covers_the_table_exactly():
    names = {e.mnemonic for e in _vector_alu_rows()} - CORE_HANDLED
    assert names - set(VALU_OPS) == set(), "table rows without semantics"
    assert set(VALU_OPS) - names == set(), "semantics without a table row"


def _args_for(e):
    """The arguments the core passes (see the valu_ops module docstring)."""
    types = [t for t in e.sources if t is not None]
    if "carry_in" in e.flags or "sel" in e.flags:
        types = types[:2]                    # the lane mask arrives as a bool array instead
    if e.mnemonic in ("v_madmk_f32", "v_madak_f32", "v_cvt_pkaccum_u8_f32") or "acc" in e.flags:
        types = types[:2] + [e.dst]          # literal K, or the old destination
    args = [RNG.integers(0, 1 << 64, 64, dtype=np.uint64) if t.bits == 64 else rand_u32()
            for t in types]
    if "vcc" in e.reads:
        args.append(RNG.integers(0, 2, 64).astype(bool))
    return args


@pytest.mark.parametrize("ctx", [CTX, DENORM, NON_IEEE], ids=["ftz", "denorm", "non_ieee"])
def test_calling_convention(ctx):
    for e in _vector_alu_rows():
        if e.mnemonic in CORE_HANDLED:
            continue
        args = _args_for(e)
        saved = [a.copy() for a in args]
        out = VALU_OPS[e.mnemonic](ctx, *args)
        for a, s in zipped(args, saved):
            assert np.array_equal(a, s), f"{e.mnemonic} modified an input"
        want = np.uint64 if e.dst is not None and e.dst.bits == 64 else np.uint32
        if e.format is Format.VOPC:
            assert out.dtype == np.bool_ and out.shape == (64,), e.mnemonic
            results = [out]
        elif "vop3b" in e.flags:
            d, flag = out
            assert d.dtype == want and d.shape == (64,), e.mnemonic
            assert flag.dtype == np.bool_ and flag.shape == (64,), e.mnemonic
            results = [d, flag]
        else:
            assert out.dtype == want and out.shape == (64,), (e.mnemonic, out.dtype)
            results = [out]
        for r in results:
            assert not any(np.shares_memory(r, a) for a in args), f"{e.mnemonic} returns a view"


# ---------------------------------------------------------------------------------------------
# integer ops

EDGE32 = [0, 1, 2, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFF, 0xFFFFFFFE, 0x12345678,
          0xDEADBEEF]


def _pairs():
    a = [x for x in EDGE32 for _ in EDGE32] + [int(v) for v in rand_u32(36)]
    b = [y for _ in EDGE32 for y in EDGE32] + [int(v) for v in rand_u32(36)]
    return a[:64], b[:64]


def test_add_sub_carry_and_borrow():
    a, b = _pairs()
    d, c = run("v_add_i32", a, b)
    assert [int(x) for x in d] == [(x + y) & M32 for x, y in zipped(a, b)]
    assert list(c) == [x + y > M32 for x, y in zipped(a, b)]
    d, c = run("v_sub_i32", a, b)
    assert [int(x) for x in d] == [(x - y) & M32 for x, y in zipped(a, b)]
    assert list(c) == [y > x for x, y in zipped(a, b)]
    d, c = run("v_subrev_i32", a, b)
    assert [int(x) for x in d] == [(y - x) & M32 for x, y in zipped(a, b)]
    assert list(c) == [x > y for x, y in zipped(a, b)]
    cin = [bool(v & 1) for v in rand_u32(64)]
    cin[0:4] = [True, True, True, True]
    d, c = run("v_addc_u32", a, b, cin)
    assert [int(x) for x in d] == [(x + y + k) & M32 for x, y, k in zipped(a, b, cin)]
    assert list(c) == [x + y + k > M32 for x, y, k in zipped(a, b, cin)]
    d, c = run("v_subb_u32", a, b, cin)
    assert [int(x) for x in d] == [(x - y - k) & M32 for x, y, k in zipped(a, b, cin)]
    assert list(c) == [x - y - k < 0 for x, y, k in zipped(a, b, cin)]
    d, c = run("v_subbrev_u32", a, b, cin)
    assert [int(x) for x in d] == [(y - x - k) & M32 for x, y, k in zipped(a, b, cin)]
    assert list(c) == [y - x - k < 0 for x, y, k in zipped(a, b, cin)]
    # 0xFFFFFFFF + 0 + carry: carry out, zero result; 0 - 0 - borrow: borrow out
    assert [int(x) for x in run("v_addc_u32", [M32], [0], [True])[0]] == [0]
    assert list(run("v_addc_u32", [M32], [0], [True])[1]) == [True]
    assert list(run("v_subb_u32", [0], [0], [True])[1]) == [True]


SHIFTS = [0, 1, 7, 31, 32, 33, 63, 64, 65, 0xFFFFFFFF, 0x80000001, 36]


def test_shifts_mask_their_amount():
    vals = [0x80000001, 0xFFFFFFFF, 0x12345678, 0x40000000, 1, 0x87654321] * 2
    am = SHIFTS
    sh = [s & 31 for s in am]
    exp_shl = [(v << s) & M32 for v, s in zipped(vals, sh)]
    exp_shr = [v >> s for v, s in zipped(vals, sh)]
    exp_sar = [(sext(v) >> s) & M32 for v, s in zipped(vals, sh)]
    assert [int(x) for x in run("v_lshl_b32", vals, am)] == exp_shl
    assert [int(x) for x in run("v_lshlrev_b32", am, vals)] == exp_shl
    assert [int(x) for x in run("v_lshr_b32", vals, am)] == exp_shr
    assert [int(x) for x in run("v_lshrrev_b32", am, vals)] == exp_shr
    assert [int(x) for x in run("v_ashr_i32", vals, am)] == exp_sar
    assert [int(x) for x in run("v_ashrrev_i32", am, vals)] == exp_sar


def test_64bit_shifts():
    vals = [0x8000000000000001, 0xFFFFFFFFFFFFFFFF, 0x0123456789ABCDEF, 1 << 62, 0x80000000,
            0xFEDCBA9876543210] * 2
    am = SHIFTS
    m64 = (1 << 64) - 1
    sign = [v - (1 << 64) if v >> 63 else v for v in vals]
    got = [int(x) for x in run("v_lshl_b64", lanes(vals, np.uint64), am)[:12]]
    assert got == [(v << (s & 63)) & m64 for v, s in zipped(vals, am)]
    got = [int(x) for x in run("v_lshr_b64", lanes(vals, np.uint64), am)[:12]]
    assert got == [v >> (s & 63) for v, s in zipped(vals, am)]
    got = [int(x) for x in run("v_ashr_i64", lanes(vals, np.uint64), am)[:12]]
    assert got == [(v >> (s & 63)) & m64 for v, s in zipped(sign, am)]


def test_signed_and_unsigned_min_max():
    a, b = _pairs()
    c = [int(v) for v in rand_u32(64)]
    assert [int(x) for x in run("v_min_i32", a, b)] == [min(sext(x), sext(y)) & M32
                                                        for x, y in zipped(a, b)]
    assert [int(x) for x in run("v_max_i32", a, b)] == [max(sext(x), sext(y)) & M32
                                                        for x, y in zipped(a, b)]
    assert [int(x) for x in run("v_min_u32", a, b)] == [min(x, y) for x, y in zipped(a, b)]
    assert [int(x) for x in run("v_max_u32", a, b)] == [max(x, y) for x, y in zipped(a, b)]
    for name, key, pick in (("v_min3_i32", sext, min), ("v_max3_i32", sext, max),
                            ("v_min3_u32", int, min), ("v_max3_u32", int, max)):
        got = [int(x) for x in run(name, a, b, c)]
        assert got == [pick(x, y, z, key=key) for x, y, z in zipped(a, b, c)], name
    for name, key in (("v_med3_i32", sext), ("v_med3_u32", int)):
        got = [int(x) for x in run(name, a, b, c)]
        assert got == [sorted((x, y, z), key=key)[1] for x, y, z in zipped(a, b, c)], name
    # -1 against 0x80000000: signed and unsigned orders differ
    assert int(run("v_max_i32", [M32], [0x80000000])[0]) == M32
    assert int(run("v_min_i32", [M32], [0x80000000])[0]) == 0x80000000
    assert int(run("v_min_u32", [M32], [0x80000000])[0]) == 0x80000000


def test_multiplies():
    a, b = _pairs()
    c = [int(v) for v in rand_u32(64)]
    assert [int(x) for x in run("v_mul_lo_u32", a, b)] == [(x * y) & M32 for x, y in zipped(a, b)]
    assert [int(x) for x in run("v_mul_lo_i32", a, b)] == [(sext(x) * sext(y)) & M32
                                                           for x, y in zipped(a, b)]
    assert [int(x) for x in run("v_mul_hi_u32", a, b)] == [(x * y) >> 32 for x, y in zipped(a, b)]
    assert [int(x) for x in run("v_mul_hi_i32", a, b)] == [((sext(x) * sext(y)) >> 32) & M32
                                                           for x, y in zipped(a, b)]

    def i24(v):
        v &= 0xFFFFFF
        return v - (1 << 24) if v >> 23 else v

    def u24(v):
        return v & 0xFFFFFF

    # bit 23 set with garbage above bit 23: sign extension of the 24-bit field
    a24 = [0x00800000, 0xFF800001, 0x12FFFFFF, 0x007FFFFF, 0xABC00000, 1] + a[:58]
    b24 = [0x00800000, 0x00000003, 0x34FFFFFF, 0x007FFFFF, 0x00400000, M32] + b[:58]
    prod_i = [i24(x) * i24(y) for x, y in zipped(a24, b24)]
    prod_u = [u24(x) * u24(y) for x, y in zipped(a24, b24)]
    assert [int(x) for x in run("v_mul_i32_i24", a24, b24)] == [p & M32 for p in prod_i]
    assert [int(x) for x in run("v_mul_hi_i32_i24", a24, b24)] == [(p >> 32) & M32
                                                                   for p in prod_i]
    assert [int(x) for x in run("v_mul_u32_u24", a24, b24)] == [p & M32 for p in prod_u]
    assert [int(x) for x in run("v_mul_hi_u32_u24", a24, b24)] == [p >> 32 for p in prod_u]
    assert [int(x) for x in run("v_mad_i32_i24", a24, b24, c)] == [(p + z) & M32
                                                                   for p, z in zipped(prod_i, c)]
    assert [int(x) for x in run("v_mad_u32_u24", a24, b24, c)] == [(p + z) & M32
                                                                   for p, z in zipped(prod_u, c)]
    assert int(run("v_mul_i32_i24", [0xFF800000], [0x00800000])[0]) == (1 << 46) & M32
    assert int(run("v_mul_hi_i32_i24", [0x00800000], [0x007FFFFF])[0]) == \
        ((-(1 << 23) * 0x7FFFFF) >> 32) & M32


def test_bitfield_ops():
    src = [0xF0F0F0F0, 0x80000000, 0xFFFFFFFF, 0x12345678] * 4
    offs = [0, 4, 28, 31, 16, 8, 30, 36, 0, 1, 29, 24, 3, 33, 12, 20]
    widths = [0, 5, 8, 1, 16, 31, 4, 4, 32, 31, 3, 8, 0, 31, 33, 40]

    def bfe_u(v, o, w):
        o, w = o & 31, w & 31
        return 0 if w == 0 else (v >> o) & ((1 << w) - 1)

    def bfe_i(v, o, w):
        o, w = o & 31, w & 31
        if w == 0:
            return 0
        w = min(w, 32 - o)
        field = (v >> o) & ((1 << w) - 1)
        return (field - (1 << w) if field >> (w - 1) else field) & M32

    assert [int(x) for x in run("v_bfe_u32", src, offs, widths)] == \
        [bfe_u(v, o, w) for v, o, w in zipped(src, offs, widths)]
    assert [int(x) for x in run("v_bfe_i32", src, offs, widths)] == \
        [bfe_i(v, o, w) for v, o, w in zipped(src, offs, widths)]
    # CLRX: offset + width > 32 is (int)S0 >> offset
    assert int(run("v_bfe_i32", [0x80000000], [28], [8])[0]) == (sext(0x80000000) >> 28) & M32
    m = [int(v) for v in rand_u32(16)]
    assert [int(x) for x in run("v_bfi_b32", m, src, offs)] == \
        [(k & x) | (~k & y) & M32 for k, x, y in zipped(m, src, offs)]
    assert [int(x) for x in run("v_bfm_b32", widths, offs)] == \
        [(((1 << (w & 31)) - 1) << (o & 31)) & M32 for w, o in zipped(widths, offs)]
    hi, lo = [int(v) for v in rand_u32(16)], [int(v) for v in rand_u32(16)]
    assert [int(x) for x in run("v_alignbit_b32", hi, lo, offs)] == \
        [(((h << 32) | lw) >> (s & 31)) & M32 for h, lw, s in zipped(hi, lo, offs)]
    assert [int(x) for x in run("v_alignbyte_b32", hi, lo, offs)] == \
        [(((h << 32) | lw) >> ((s & 3) * 8)) & M32 for h, lw, s in zipped(hi, lo, offs)]


def test_bit_counts_and_scans():
    vals = [0, 1, 0x80000000, 0xFFFFFFFF, 0x7FFFFFFF, 0x00010000, 0xFFFF0000, 0x40000000,
            0xBFFFFFFF] + [int(v) for v in rand_u32(20)]

    def ffbh(v):
        return M32 if v == 0 else 32 - v.bit_length()

    def ffbl(v):
        return M32 if v == 0 else (v & -v).bit_length() - 1

    def ffbh_i(v):
        y = v ^ M32 if v >> 31 else v
        return M32 if y == 0 else 32 - y.bit_length()

    assert [int(x) for x in run("v_ffbh_u32", vals)] == [ffbh(v) for v in vals]
    assert [int(x) for x in run("v_ffbl_b32", vals)] == [ffbl(v) for v in vals]
    assert [int(x) for x in run("v_ffbh_i32", vals)] == [ffbh_i(v) for v in vals]
    assert [int(x) for x in run("v_bfrev_b32", vals)] == \
        [int(f"{v:032b}"[::-1], 2) for v in vals]
    assert [int(x) for x in run("v_not_b32", vals)] == [v ^ M32 for v in vals]
    acc = [int(v) for v in rand_u32(len(vals))]
    assert [int(x) for x in run("v_bcnt_u32_b32", vals, acc)] == \
        [(bin(v).count("1") + c) & M32 for v, c in zipped(vals, acc)]


def test_mbcnt_counts_lower_lanes():
    exec_mask = 0xF0F0_1234_8000_0001
    lo = VALU_OPS["v_mbcnt_lo_u32_b32"](CTX, lanes([exec_mask & M32]), lanes([0]))
    hi = VALU_OPS["v_mbcnt_hi_u32_b32"](CTX, lanes([exec_mask >> 32]), lo)
    assert [int(x) for x in hi] == [bin(exec_mask & ((1 << n) - 1)).count("1") for n in range(64)]
    shuffled = LaneContext(lane=np.arange(63, -1, -1, dtype=np.uint32))
    lo = VALU_OPS["v_mbcnt_lo_u32_b32"](shuffled, lanes([M32]), lanes([5]))
    assert [int(x) for x in lo] == [min(63 - n, 32) + 5 for n in range(64)]


def _bytes_of(v, n=4):
    return [(v >> (8 * i)) & 0xFF for i in range(n)]


def test_sad_family_and_lerp():
    a, b, c = ([int(v) for v in rand_u32(64)] for _ in range(3))
    b[0] = a[0] & 0xFF00FF00                     # some zero bytes for msad
    sad = [sum(abs(x - y) for x, y in zipped(_bytes_of(p), _bytes_of(q))) for p, q in zipped(a, b)]
    assert [int(x) for x in run("v_sad_u8", a, b, c)] == [(s + z) & M32 for s, z in zipped(sad, c)]
    assert [int(x) for x in run("v_sad_hi_u8", a, b, c)] == [((s << 16) + z) & M32
                                                             for s, z in zipped(sad, c)]
    assert [int(x) for x in run("v_sad_u16", a, b, c)] == \
        [(abs((p & 0xFFFF) - (q & 0xFFFF)) + abs((p >> 16) - (q >> 16)) + z) & M32
         for p, q, z in zipped(a, b, c)]
    assert [int(x) for x in run("v_sad_u32", a, b, c)] == [(abs(p - q) + z) & M32
                                                           for p, q, z in zipped(a, b, c)]

    def msad(p, q, acc):
        return acc + sum(abs(x - y) for x, y in zipped(_bytes_of(p), _bytes_of(q)) if y)

    assert [int(x) for x in run("v_msad_u8", a, b, c)] == [msad(p, q, z) & M32
                                                           for p, q, z in zipped(a, b, c)]
    def lerp(p, q, r):
        return sum(((x + y + (z & 1)) >> 1) << (8 * i) for i, (x, y, z) in
                   enumerate(zipped(_bytes_of(p), _bytes_of(q), _bytes_of(r))))

    assert [int(x) for x in run("v_lerp_u8", a, b, c)] == [lerp(*t) for t in zipped(a, b, c)]
    s0 = [int(v) for v in RNG.integers(0, 1 << 64, 64, dtype=np.uint64)]
    s2 = [int(v) for v in RNG.integers(0, 1 << 64, 64, dtype=np.uint64)]
    s2[1] = 0xFFFF_FFFF_FFFF_FFFF                # accumulators overflow 16 bits

    def mqsad(p, q, acc):
        out = 0
        for j in range(4):
            window = (p >> (8 * j)) & M32
            out |= (msad(window, q, (acc >> (16 * j)) & 0xFFFF) & 0xFFFF) << (16 * j)
        return out

    got = VALU_OPS["v_mqsad_pk_u16_u8"](CTX, lanes(s0, np.uint64), lanes(b), lanes(s2, np.uint64))
    assert [int(x) for x in got] == [mqsad(p, q, z) for p, q, z in zipped(s0, b, s2)]


def test_packing_and_select():
    a = [0, 0xFFFF, 0x10000, M32, 0x7FFF, 0x8000, 0xFFFF8000, 0xFFFF7FFF]
    b = a[::-1]
    assert [int(x) for x in run("v_cvt_pk_u16_u32", a, b)] == \
        [min(x, 0xFFFF) | (min(y, 0xFFFF) << 16) for x, y in zipped(a, b)]

    def sat16(v):
        return max(-32768, min(32767, sext(v))) & 0xFFFF

    assert [int(x) for x in run("v_cvt_pk_i16_i32", a, b)] == \
        [sat16(x) | (sat16(y) << 16) for x, y in zipped(a, b)]
    sel = [True, False, True, True, False, False, True, False]
    assert [int(x) for x in run("v_cndmask_b32", a, b, sel)] == \
        [y if s else x for x, y, s in zipped(a, b, sel)]


# ---------------------------------------------------------------------------------------------
# f32 arithmetic, flushing, NaN

DEN_POS, DEN_NEG = 0x00000005, 0x80400000        # denormals
TINY = f32(2.0 ** -126)                          # smallest normal


def test_add_mul_match_ieee_binary32():
    a, b = rand_f32(64, -60, 60), rand_f32(64, -60, 60)
    fa, fb = np32(a), np32(b)
    assert np.array_equal(VALU_OPS["v_add_f32"](DENORM, a, b), (fa + fb).view(np.uint32))
    assert np.array_equal(VALU_OPS["v_sub_f32"](DENORM, a, b), (fa - fb).view(np.uint32))
    assert np.array_equal(VALU_OPS["v_subrev_f32"](DENORM, a, b), (fb - fa).view(np.uint32))
    assert np.array_equal(VALU_OPS["v_mul_f32"](DENORM, a, b), (fa * fb).view(np.uint32))


def test_input_and_output_flushing():
    # input denormals: 1.0 + denormal is 1.0 either way, but denormal + denormal is not
    assert [int(x) for x in run("v_add_f32", [DEN_POS], [DEN_POS])] == [0]
    assert [int(x) for x in run("v_add_f32", [DEN_POS], [DEN_POS], ctx=DENORM)] == [10]
    assert [int(x) for x in run("v_mul_f32", [DEN_NEG], [f32(2.0 ** 100)])] == [0x80000000]
    assert [int(x) for x in run("v_mul_f32", [DEN_NEG], [f32(2.0 ** 100)], ctx=DENORM)] == \
        [f32(-(2.0 ** -127) * 2.0 ** 100)]
    # output denormals: 2^-126 * 0.5 and 2^-126 - 2^-127 * 1.5 are denormal results
    half, big, small = f32(0.5), f32(1.5 * 2.0 ** -126), f32(-(2.0 ** -126))
    assert [int(x) for x in run("v_mul_f32", [TINY, TINY | 0x80000000], [half, half])] == \
        [0, 0x80000000]
    assert [int(x) for x in run("v_mul_f32", [TINY], [half], ctx=DENORM)] == [f32(2.0 ** -127)]
    assert [int(x) for x in run("v_add_f32", [big], [small])] == [0]
    assert [int(x) for x in run("v_add_f32", [big], [small], ctx=DENORM)] == [f32(2.0 ** -127)]
    # flush-out only (MODE denorm field 1) keeps denormal inputs
    out_only = LaneContext(FpMode(0x3D0))
    assert [int(x) for x in run("v_add_f32", [DEN_POS], [f32(2.0 ** -126)], ctx=out_only)] == \
        [TINY + 5]
    # mad always flushes: inputs, product and result, even with denormals enabled
    for ctx in (CTX, DENORM):
        assert [int(x) for x in run("v_mad_f32", [DEN_POS], [f32(2.0 ** 30)], [0],
                                    ctx=ctx)] == [0]
        assert [int(x) for x in run("v_mad_f32", [TINY], [half], [f32(2.0 ** -126)],
                                    ctx=ctx)] == [TINY]        # product 2^-127 flushed
        assert [int(x) for x in run("v_mac_f32", [TINY], [half], [0], ctx=ctx)] == [0]
    # f64 denormals are kept by default and flushed with FP_DENORM[7:6] = 0
    d64 = lanes([1], np.uint64)
    assert int(VALU_OPS["v_add_f64"](CTX, d64, d64)[0]) == 2
    assert int(VALU_OPS["v_add_f64"](LaneContext(FpMode(0x300)), d64, d64)[0]) == 0


def test_nan_results_are_canonical():
    inf, ninf = INF32, NINF32
    payload = [0x7F800001, 0xFFC12345, 0x7FFFFFFF]
    assert [int(x) for x in run("v_add_f32", [inf], [ninf])] == [QNAN32]
    assert [int(x) for x in run("v_mul_f32", [0], [inf])] == [QNAN32]
    assert [int(x) for x in run("v_add_f32", payload, [f32(1.0)] * 3)] == [QNAN32] * 3
    # a NaN x loses every |.| >= comparison, so x is the major axis: 2 * NaN
    assert [int(x) for x in run("v_cubema_f32", payload, [0] * 3, [f32(9.0)] * 3)] == [QNAN32] * 3
    got = VALU_OPS["v_fma_f64"](CTX, lanes([0xFFF0000000000001], np.uint64),
                                lanes([f64(1.0)], np.uint64), lanes([0], np.uint64))
    assert int(got[0]) == QNAN64
    assert [int(x) for x in run("v_cvt_f16_f32", payload)] == [0x7E00] * 3


def _mad_reference(a, b, c):
    p = ftz32(rn32(Fraction(b32(a)) * Fraction(b32(b))))
    return ftz32(rn32(Fraction(b32(p)) + Fraction(b32(c))))


def _fma_reference(fa: float, fb: float, fc: float, rn):
    """IEEE-754 fusedMultiplyAdd: exact rational result, one rounding by ``rn``; returns a
    float (NaN for invalid operations)."""
    if math.isnan(fa) or math.isnan(fb) or math.isnan(fc):
        return math.nan
    if math.isinf(fa) or math.isinf(fb):
        if fa == 0 or fb == 0:
            return math.nan                                        # inf * 0
        prod = math.copysign(math.inf, fa) * math.copysign(1.0, fb)
        return math.nan if math.isinf(fc) and fc != prod else prod
    if math.isinf(fc):
        return fc
    exact = Fraction(fa) * Fraction(fb) + Fraction(fc)
    if exact != 0:
        return rn(exact)
    both_neg = math.copysign(1, fa) * math.copysign(1, fb) < 0 and math.copysign(1, fc) < 0
    return -0.0 if (fa == 0 or fb == 0) and fc == 0 and both_neg else 0.0


def _fma32_reference(a, b, c):
    r = _fma_reference(b32(a), b32(b), b32(c), lambda x: round_fraction(x, 23, -126, 127))
    return QNAN32 if math.isnan(r) else f32(r)


def test_unfused_mad_differs_from_fused_fma():
    # a*b = 1 + 2^-11 + 2^-24 is a binary32 tie; c removes the leading 1
    a = b = f32(1.0 + 2.0 ** -12)
    c = f32(-1.0)
    mad = int(run("v_mad_f32", [a], [b], [c])[0])
    fma = int(run("v_fma_f32", [a], [b], [c])[0])
    assert mad == _mad_reference(a, b, c) == f32(2.0 ** -11)
    assert fma == _fma32_reference(a, b, c) == f32(2.0 ** -11 + 2.0 ** -24)
    assert mad != fma
    assert [int(x) for x in run("v_madmk_f32", [a], [c], [b])] == [mad]     # S0*K + S1
    assert [int(x) for x in run("v_madak_f32", [a], [b], [c])] == [mad]     # S0*S1 + K
    assert [int(x) for x in run("v_mac_f32", [a], [b], [c])] == [mad]


def test_mad_against_reference():
    a, b, c = rand_f32(64, -70, 50), rand_f32(64, -70, 50), rand_f32(64, -126, 0)
    got = VALU_OPS["v_mad_f32"](CTX, a, b, c)
    assert [int(x) for x in got] == [_mad_reference(*map(int, t)) for t in zipped(a, b, c)]


def _fma32_hard_cases():
    """Exact products on binary32 ties (or just off them) with small addends, and
    denormal-range results."""
    out = []
    for k in range(1, 40, 2):
        for j in (1, 3, 5, 7):
            a, b = 1.0 + k * 2.0 ** -12, 1.0 + j * 2.0 ** -12       # k*j odd: tie product
            scale = 2.0 ** int(RNG.integers(-60, 60))
            for c in (0.0, 2.0 ** -100, -(2.0 ** -100), 2.0 ** -47, -(2.0 ** -47)):
                out.append((f32(a * scale), f32(b), f32(c * scale)))
    for _ in range(64):                                            # denormal results
        a = float(np.float32(RNG.uniform(1, 2) * 2.0 ** -70))
        b = float(np.float32(RNG.uniform(1, 2) * 2.0 ** -70))
        c = float(np.float32(RNG.uniform(-1, 1) * 2.0 ** -130))
        out.append((f32(a), f32(b), f32(c)))
    out.append((f32(2.0 ** 127), f32(3.0), f32(-(2.0 ** 127))))        # exactly 2^128: inf
    out.append((f32(3.4e38), f32(1.0000001), 0))                         # overflow to inf
    out.append((f32(2.0 ** 64), f32(2.0 ** 64), NINF32))                  # finite * finite - inf
    out.append((0x80000000, f32(5.0), 0))                                  # -0*5 + 0 = +0
    out.append((0x80000000, f32(5.0), 0x80000000))                         # -0*5 + -0 = -0
    out.append((f32(1.0 + 2.0 ** -23), f32(1.0 - 2.0 ** -23), f32(-1.0)))  # exact -2^-46
    return out


def test_fma_f32_is_correctly_rounded():
    cases = _fma32_hard_cases()
    cases += list(zipped(*(map(int, rand_f32(192, -40, 40)) for _ in range(3))))
    cases += list(zipped(map(int, rand_f32(64, -60, 0)), map(int, rand_f32(64, -60, 0)),
                      map(int, rand_f32(64, -130, -100))))
    for i in range(0, len(cases), 64):
        chunk = cases[i:i + 64]
        a, b, c = (lanes([t[k] for t in chunk]) for k in range(3))
        got = VALU_OPS["v_fma_f32"](DENORM, a, b, c)[:len(chunk)]
        assert [int(x) for x in got] == [_fma32_reference(*t) for t in chunk]


def _fma64_reference(a, b, c):
    r = _fma_reference(b64(a), b64(b), b64(c), lambda x: round_fraction(x, 52, -1022, 1023))
    return QNAN64 if math.isnan(r) else f64(r)


def _fma64_hard_cases():
    out = []
    for k in range(1, 24, 2):
        for j in (1, 3, 5):
            a, b = 1.0 + k * 2.0 ** -27, 1.0 + j * 2.0 ** -26       # tie product
            scale = 2.0 ** int(RNG.integers(-300, 300))
            for c in (0.0, 2.0 ** -90, -(2.0 ** -90), 2.0 ** -60, -(2.0 ** -60)):
                out.append((f64(a * scale), f64(b), f64(c * scale)))
    for _ in range(40):
        x, y = (float(v) for v in RNG.uniform(1, 2, 2))
        p = x * y
        out.append((f64(x), f64(y), f64(-p)))                        # exact product error
        e = float(RNG.integers(-1074, -1000))
        out.append((f64(x * 2.0 ** (e / 2)), f64(y * 2.0 ** (e / 2)),
                    f64(float(RNG.uniform(-1, 1)) * 2.0 ** -1060)))   # denormal results
    # c + RN(a*b) is a tie that the product's rounding error (below w's precision) breaks
    a, b = 1.0 - 2.0 ** -53, (1.0 + 2.0 ** -52) * 2.0 ** -53
    for sc in (1.0, 2.0 ** -700, 2.0 ** 700):
        out += [(f64(a * sc), f64(b), f64(sc)), (f64(-a * sc), f64(b), f64(-sc))]
    big = 2.0 ** 1000
    out += [(f64(big), f64(2.0 ** 24), f64(-1.7976931348623157e308)),  # product overflows
            (f64(1.7976931348623157e308), f64(1.0000000000000002), f64(0.0)),
            (f64(2.0 ** 600), f64(2.0 ** 600), f64(-math.inf)),
            (f64(-0.0), f64(3.0), f64(0.0)), (f64(-0.0), f64(3.0), f64(-0.0)),
            (f64(math.inf), f64(0.0), f64(1.0)), (f64(math.inf), f64(2.0), f64(-math.inf)),
            (f64(5e-324), f64(0.5), f64(0.0)), (f64(5e-324), f64(1.5), f64(5e-324)),
            (f64(2.0 ** -540), f64(2.0 ** -540), f64(2.0 ** -1074))]
    return out


def test_fma_f64_is_correctly_rounded():
    cases = _fma64_hard_cases()
    cases += list(zipped(*(map(int, rand_f64(128, -300, 300)) for _ in range(3))))
    cases += list(zipped(map(int, rand_f64(64)), map(int, rand_f64(64)), map(int, rand_f64(64))))
    for i in range(0, len(cases), 64):
        chunk = cases[i:i + 64]
        a, b, c = (lanes([t[k] for t in chunk], np.uint64) for k in range(3))
        got = VALU_OPS["v_fma_f64"](CTX, a, b, c)[:len(chunk)]
        assert [int(x) for x in got] == [_fma64_reference(*t) for t in chunk]


def test_legacy_multiplies():
    inf, nan = INF32, QNAN32
    one, two, m0 = f32(1.0), f32(2.0), 0x80000000
    # 0 times anything (inf, NaN) is +0 under the DX9 rules
    assert [int(x) for x in run("v_mul_legacy_f32", [0, m0, inf, nan, two],
                                [inf, nan, 0, m0, two])] == [0, 0, 0, 0, f32(4.0)]
    assert [int(x) for x in run("v_mad_legacy_f32", [0, two], [inf, two], [one, one])] == \
        [one, f32(5.0)]
    assert [int(x) for x in run("v_mac_legacy_f32", [nan], [0], [f32(3.0)])] == [f32(3.0)]
    assert [int(x) for x in run("v_mullit_f32", [two, two, two, 0], [two, two, two, inf],
                                [one, 0, nan, one])] == \
        [f32(4.0), f32(-3.4028234663852886e38), f32(-3.4028234663852886e38), 0]


# ---------------------------------------------------------------------------------------------
# min / max

def test_min_max_ieee_nan_rules_and_signed_zero():
    one, two, m0, p0 = f32(1.0), f32(2.0), 0x80000000, 0
    qnan, snan = 0x7FC00001, 0x7F800001
    a = [one, qnan, one, qnan, m0, p0, snan, one]
    b = [two, one, qnan, qnan, p0, m0, one, snan]
    assert [int(x) for x in run("v_min_f32", a, b)] == [one, one, one, QNAN32, m0, m0,
                                                        QNAN32, QNAN32]
    assert [int(x) for x in run("v_max_f32", a, b)] == [two, one, one, QNAN32, p0, p0,
                                                        QNAN32, QNAN32]
    # without IEEE mode a signalling NaN is just a NaN: the other operand wins
    assert [int(x) for x in run("v_min_f32", a, b, ctx=NON_IEEE)][6:] == [one, one]
    d = [f64(1.0), 0x7FF8000000000001, f64(-0.0), 0x7FF0000000000001]
    e = [f64(-1.0), f64(3.0), f64(0.0), f64(3.0)]
    got = VALU_OPS["v_min_f64"](CTX, lanes(d, np.uint64), lanes(e, np.uint64))
    assert [int(x) for x in got[:4]] == [f64(-1.0), f64(3.0), f64(-0.0), QNAN64]
    got = VALU_OPS["v_max_f64"](CTX, lanes(d, np.uint64), lanes(e, np.uint64))
    assert [int(x) for x in got[:4]] == [f64(1.0), f64(3.0), f64(0.0), QNAN64]
    # legacy: s0 < s1 ? s0 : s1, so any NaN yields s1
    assert [int(x) for x in run("v_min_legacy_f32", [qnan, one, m0], [one, qnan, p0])] == \
        [one, QNAN32, p0]
    assert [int(x) for x in run("v_max_legacy_f32", [qnan, one, p0], [one, qnan, m0])] == \
        [one, QNAN32, m0]


def test_min3_max3_med3_f32():
    vals = [f32(v) for v in (-2.5, 1.0, 7.0, -0.0, 0.0, 3.0)]
    a = [x for x in vals for _ in vals for _ in vals][:64]
    b = [y for _ in vals for y in vals for _ in vals][:64]
    c = [z for _ in vals for _ in vals for z in vals][:64]
    f = b32
    assert [f(x) for x in run("v_min3_f32", a, b, c)] == \
        [min(f(x), f(y), f(z)) for x, y, z in zipped(a, b, c)]
    assert [f(x) for x in run("v_max3_f32", a, b, c)] == \
        [max(f(x), f(y), f(z)) for x, y, z in zipped(a, b, c)]
    assert [f(x) for x in run("v_med3_f32", a, b, c)] == \
        [sorted((f(x), f(y), f(z)))[1] for x, y, z in zipped(a, b, c)]
    nan, one, two = QNAN32, f32(1.0), f32(2.0)
    assert [int(x) for x in run("v_med3_f32", [nan, one, nan], [one, nan, nan],
                                [two, two, two])] == [one, one, two]   # any NaN: min3
    assert [int(x) for x in run("v_max3_f32", [nan], [nan], [nan])] == [QNAN32]


# ---------------------------------------------------------------------------------------------
# conversions

def test_float_to_int_conversions_saturate_and_map_nan_to_zero():
    vals = [1.5, -1.5, 2.5, -2.5, 0.49999997, -0.5, 1e10, -1e10, 4294967295.0, 2147483520.0,
            -2147483648.0, math.inf, -math.inf, math.nan, -0.0, 3e-45, 4294967040.0]
    bits = [f32(v) for v in vals]
    fv = [b32(b) for b in bits]

    def sat(x, lo, hi):
        return 0 if math.isnan(x) else max(lo, min(hi, x))

    def expect(fn, lo, hi):
        return [int(sat(fn(x) if math.isfinite(x) else x, lo, hi)) & M32 for x in fv]

    assert [int(x) for x in run("v_cvt_i32_f32", bits)] == expect(math.trunc, -2**31, 2**31 - 1)
    assert [int(x) for x in run("v_cvt_u32_f32", bits)] == expect(math.trunc, 0, 2**32 - 1)
    assert [int(x) for x in run("v_cvt_flr_i32_f32", bits, ctx=DENORM)] == \
        expect(math.floor, -2**31, 2**31 - 1)
    assert [int(x) for x in run("v_cvt_rpi_i32_f32", bits)] == \
        expect(lambda x: math.floor(Fraction(x) + Fraction(1, 2)), -2**31, 2**31 - 1)
    # flushing matters for floor of a negative denormal
    assert int(run("v_cvt_flr_i32_f32", [0x80000001])[0]) == 0
    assert int(run("v_cvt_flr_i32_f32", [0x80000001], ctx=DENORM)[0]) == M32
    dv = [1.9, -1.9, 3e9, -3e9, 5e9, math.nan, -0.7]
    d = lanes([f64(v) for v in dv], np.uint64)
    assert [int(x) for x in VALU_OPS["v_cvt_i32_f64"](CTX, d)[:7]] == \
        [int(sat(math.trunc(x) if math.isfinite(x) else x, -2**31, 2**31 - 1)) & M32 for x in dv]
    assert [int(x) for x in VALU_OPS["v_cvt_u32_f64"](CTX, d)[:7]] == \
        [int(sat(math.trunc(x) if math.isfinite(x) else x, 0, 2**32 - 1)) for x in dv]


def test_int_to_float_conversions_round_to_nearest_even():
    vals = [0, 1, M32, 0x80000000, 0x7FFFFFFF, 16777217, 16777219, 0x89ABCDEF] + \
        [int(v) for v in rand_u32(40)]
    assert [int(x) for x in run("v_cvt_f32_u32", vals)] == [rn32(Fraction(v)) for v in vals]
    assert [int(x) for x in run("v_cvt_f32_i32", vals)] == [rn32(Fraction(sext(v))) for v in vals]
    assert [int(x) for x in run("v_cvt_f64_i32", vals)] == [f64(float(sext(v))) for v in vals]
    assert [int(x) for x in run("v_cvt_f64_u32", vals)] == [f64(float(v)) for v in vals]
    for k in range(4):
        assert [int(x) for x in run(f"v_cvt_f32_ubyte{k}", vals)] == \
            [f32(float((v >> (8 * k)) & 0xFF)) for v in vals]
    assert [b32(x) for x in run("v_cvt_off_f32_i4", list(range(16)))] == \
        [((i ^ 8) - 8) / 16 for i in range(16)]


def test_f32_f64_conversions():
    d = [f64(v) for v in (1.0 / 3.0, 1e300, -1e-300, 2.0 ** -130, 3.4028235677973366e38)]
    got = VALU_OPS["v_cvt_f32_f64"](DENORM, lanes(d, np.uint64))[:5]
    assert [int(x) for x in got] == [rn32(Fraction(b64(v))) for v in d]
    got = VALU_OPS["v_cvt_f32_f64"](CTX, lanes(d, np.uint64))[:5]
    assert [int(x) for x in got] == [ftz32(rn32(Fraction(b64(v)))) for v in d]
    s = [f32(v) for v in (0.1, -3.0, 1e38)] + [DEN_POS]
    assert [int(x) for x in run("v_cvt_f64_f32", s, ctx=DENORM)] == [f64(b32(v)) for v in s]
    assert int(run("v_cvt_f64_f32", [DEN_POS])[0]) == 0


def test_half_precision_conversions():
    vals = [0.1, -2.5, 65504.0, 65519.99, 65520.0, 1e5, 2.0 ** -24, 2.0 ** -25,
            1.5 * 2.0 ** -25, 3.0 * 2.0 ** -26, 6e-8, -1e-10, math.inf, -0.0]
    bits = [f32(v) for v in vals]

    def half(x):
        try:
            return struct.unpack("<H", struct.pack("<e", b32(f32(x))))[0]
        except OverflowError:
            return 0x7C00 | (0x8000 if x < 0 else 0)

    assert [int(x) for x in run("v_cvt_f16_f32", bits)] == [half(v) for v in vals]
    h = [0x0001, 0x03FF, 0x3C00, 0xC000, 0x7BFF, 0xFC00, 0x8000, 0x7E01 | 0xFFFF0000]
    exp = [f32(struct.unpack("<e", struct.pack("<H", v & 0xFFFF))[0]) for v in h[:-1]]
    assert [int(x) for x in run("v_cvt_f32_f16", h)] == exp + [QNAN32]

    finite_halves = np.arange(0x7C00, dtype=np.uint16).view(np.float16).astype(np.float64)

    def rtz_half(x):
        """The largest-magnitude binary16 not beyond x (toward zero)."""
        if math.isinf(x) or math.isnan(x):
            return half(x)
        bits16 = int(np.searchsorted(finite_halves, abs(x), side="right")) - 1
        return bits16 | (0x8000 if math.copysign(1, x) < 0 else 0)

    lo = [0.1, -2.5, 70000.0, -1e9, 1.0 + 2.0 ** -11, -(1.0 + 3 * 2.0 ** -12), 3e-8, math.inf]
    hi = [1.0 / 3, 65504.0, -65519.0, 2.0 ** -24 * 1.99, 0.0, -0.0, 1e-3, -math.inf]
    got = run("v_cvt_pkrtz_f16_f32", [f32(v) for v in lo], [f32(v) for v in hi])
    assert [int(x) for x in got] == [rtz_half(b32(f32(x))) | (rtz_half(b32(f32(y))) << 16)
                                     for x, y in zipped(lo, hi)]


def test_packed_normalised_and_byte_conversions():
    vals = [0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -7.0, 0.25 / 32767, 1.5 / 65535, math.nan,
            0.99999, -0.99999, 2.5 / 65535, 0.5 / 32767]
    bits = [f32(v) for v in vals]

    def rne(x):
        return 0 if math.isnan(x) else round(Fraction(x))        # Python round: half even

    def norm_i(x):
        return max(-32767, min(32767, rne(x * 32767 if math.isfinite(x) else x))) & 0xFFFF

    def norm_u(x):
        return max(0, min(65535, rne(x * 65535 if math.isfinite(x) else x)))

    f = [b32(b) for b in bits]
    rev = bits[::-1]
    assert [int(x) for x in run("v_cvt_pknorm_i16_f32", bits, rev)] == \
        [norm_i(x) | (norm_i(y) << 16) for x, y in zipped(f, f[::-1])]
    assert [int(x) for x in run("v_cvt_pknorm_u16_f32", bits, rev)] == \
        [norm_u(x) | (norm_u(y) << 16) for x, y in zipped(f, f[::-1])]
    u8 = [0.5, 1.5, 2.5, 254.5, 255.5, 300.0, -3.0, math.nan, 17.49, math.inf, -math.inf, 7.0]
    sel = list(range(12))
    base = [int(v) for v in rand_u32(12)]

    def byte(x):
        return 0 if math.isnan(x) else max(0, min(255, rne(x) if math.isfinite(x) else x))

    expect = [(bb & ~(0xFF << 8 * (s & 3)) & M32) | (int(byte(x)) << 8 * (s & 3))
              for x, s, bb in zipped(u8, sel, base)]
    assert [int(x) for x in run("v_cvt_pk_u8_f32", [f32(v) for v in u8], sel, base)] == expect
    assert [int(x) for x in run("v_cvt_pkaccum_u8_f32", [f32(v) for v in u8], sel, base)] == \
        expect


def test_rounding_ops_and_fract():
    vals = [1.5, -1.5, 2.5, -2.5, 0.3, -0.3, -0.0, 1e20, -1e-30, 8388609.5, math.inf, math.nan]
    bits = [f32(v) for v in vals]
    fv = [b32(b) for b in bits]

    def keep(fn):
        return [canon32(f32(float(fn(x)))) if math.isfinite(x) else canon32(f32(x)) for x in fv]

    assert [int(x) for x in run("v_trunc_f32", bits, ctx=DENORM)] == \
        keep(lambda x: math.copysign(math.trunc(x), x))
    assert [int(x) for x in run("v_floor_f32", bits, ctx=DENORM)] == \
        keep(lambda x: math.copysign(math.floor(x), x) if math.floor(x) == 0 else math.floor(x))
    assert [int(x) for x in run("v_ceil_f32", bits, ctx=DENORM)] == \
        keep(lambda x: math.copysign(math.ceil(x), x) if math.ceil(x) == 0 else math.ceil(x))
    assert [int(x) for x in run("v_rndne_f32", bits, ctx=DENORM)] == \
        keep(lambda x: math.copysign(round(x), x) if round(x) == 0 else round(x))
    almost_one = b32(f32(1.0) - 1)

    def fract(x):
        if not math.isfinite(x):
            return QNAN32
        return rn32(min(Fraction(x) - math.floor(x), Fraction(almost_one)))

    assert [int(x) for x in run("v_fract_f32", bits, ctx=DENORM)] == [fract(x) for x in fv]
    assert int(run("v_fract_f32", [f32(-(2.0 ** -30))])[0]) == f32(almost_one)
    d = [f64(v) for v in (-1e-300, 2.75, -2.75, math.inf)]
    got = VALU_OPS["v_fract_f64"](CTX, lanes(d, np.uint64))[:4]
    assert [int(x) for x in got] == [f64(1.0) - 1, f64(0.75), f64(0.25), QNAN64]


def test_frexp_and_ldexp():
    vals = [1.0, 0.75, -6.0, 2.0 ** -130, 0.0, -0.0, math.inf, math.nan, 3.4e38]
    bits = [f32(v) for v in vals]
    exps = [math.frexp(v)[1] & M32 if math.isfinite(v) else M32 for v in vals]
    assert [int(x) for x in run("v_frexp_exp_i32_f32", bits, ctx=DENORM)] == exps
    mants = [f32(math.frexp(v)[0]) if math.isfinite(v) else QNAN32 for v in vals]
    assert [int(x) for x in run("v_frexp_mant_f32", bits, ctx=DENORM)] == mants
    d = [f64(v) for v in vals]
    assert [int(x) for x in VALU_OPS["v_frexp_exp_i32_f64"](CTX, lanes(d, np.uint64))[:9]] \
        == exps
    assert [int(x) for x in VALU_OPS["v_frexp_mant_f64"](CTX, lanes(d, np.uint64))[:9]] == \
        [f64(math.frexp(v)[0]) if math.isfinite(v) else QNAN64 for v in vals]
    xs = [f32(v) for v in (1.5, 1.5, 1.5, -3.0, 1.0, 2.0 ** -126, 3.0, 3.0)]
    ns = [1, -127, 200, -150, -149, -1, -100000, 0x7FFFFFFF]
    expect = [rn32(Fraction(b32(x)) * Fraction(2) ** sext(n)) for x, n in zipped(xs[:-1], ns[:-1])]
    expect.append(INF32)                          # 3 * 2^(2^31 - 1) overflows
    assert [int(x) for x in run("v_ldexp_f32", xs, ns, ctx=DENORM)] == expect
    got = VALU_OPS["v_ldexp_f64"](CTX, lanes([f64(1.5)], np.uint64), lanes([-1075, 1024, 3]))
    assert [b64(x) for x in got[:3]] == [2.0 ** -1074, math.inf, 12.0]


# ---------------------------------------------------------------------------------------------
# transcendentals

D = decimal.Decimal


def _ulp32(x: float) -> float:
    x = abs(x)
    return 2.0 ** max(math.frexp(x)[1] - 24, -149) if x else 2.0 ** -149


def _close_to_reference(got_bits, ref: D) -> bool:
    """Within 0.5 ulp (+2^-20 ulp slack for the binary64 model) of the exact reference."""
    got = b32(got_bits)
    return abs(D(got) - ref) <= D(_ulp32(got)) * (D("0.5") + D(2) ** -20)


def _pi() -> D:
    """pi by the decimal module documentation's series (independent of the model)."""
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


def _sin(x: D) -> D:
    x = x % (2 * _pi())
    term, total, k = x, x, 1
    while abs(term) > D(10) ** -55:
        term = -term * x * x / ((2 * k) * (2 * k + 1))
        total += term
        k += 1
    return total


def test_rcp_and_sqrt_are_correctly_rounded():
    xs = [int(v) for v in rand_f32(64, -125, 125)]
    xs[:6] = [f32(v) for v in (3.0, 0.1, 7.0, 2.0 ** -126, 1.5 * 2.0 ** 126, 1.0)]
    assert [int(x) for x in run("v_rcp_f32", xs, ctx=DENORM)] == \
        [rn32(1 / Fraction(b32(x))) for x in xs]
    assert [int(x) for x in run("v_rcp_iflag_f32", xs, ctx=DENORM)] == \
        [rn32(1 / Fraction(b32(x))) for x in xs]
    pos = [x & 0x7FFFFFFF for x in xs]
    for x, r in zipped(pos, run("v_sqrt_f32", pos)):
        fx, fr = Fraction(b32(x)), Fraction(b32(r))
        half = Fraction(_ulp32(b32(r))) / 2
        assert (fr - half) ** 2 < fx < (fr + half) ** 2      # nearest: no ties for sqrt
    d = [int(v) for v in rand_f64(32, -1000, 1000)]
    assert [int(x) for x in VALU_OPS["v_rcp_f64"](CTX, lanes(d, np.uint64))[:32]] == \
        [rn64(1 / Fraction(b64(v))) for v in d]
    dp = [v & 0x7FFFFFFFFFFFFFFF for v in d]
    got = VALU_OPS["v_sqrt_f64"](CTX, lanes(dp, np.uint64))[:32]
    for x, r in zipped(dp, got):
        fx, fr = Fraction(b64(x)), Fraction(b64(r))
        half = (Fraction(b64(int(r) + 1)) - fr) / 2
        assert (fr - half) ** 2 < fx < (fr + half) ** 2
    rsq = VALU_OPS["v_rsq_f64"](CTX, lanes(dp, np.uint64))[:32]
    for x, r in zipped(dp, rsq):
        ref = 1 / D(b64(x)).sqrt()
        assert abs(D(b64(r)) - ref) < D(math.ulp(b64(r)))


def test_special_values_of_reciprocals():
    z, mz, inf, ninf, one = 0, 0x80000000, INF32, NINF32, f32(1.0)
    fmax = f32(3.4028234663852886e38)
    assert [int(x) for x in run("v_rcp_f32", [z, mz, inf, ninf])] == [inf, ninf, z, mz]
    assert [int(x) for x in run("v_rcp_clamp_f32", [z, mz])] == [fmax, fmax | 0x80000000]
    assert [int(x) for x in run("v_rcp_legacy_f32", [z, mz, inf, DEN_POS])] == [z, mz, z, z]
    assert [int(x) for x in run("v_rsq_f32", [z, mz, inf, f32(-1.0), f32(4.0)])] == \
        [inf, ninf, z, QNAN32, f32(0.5)]
    assert [int(x) for x in run("v_rsq_clamp_f32", [z, mz])] == [fmax, fmax | 0x80000000]
    assert [int(x) for x in run("v_rsq_legacy_f32", [z, f32(4.0)])] == [z, f32(0.5)]
    # v_rsq/v_log ignore MODE and always flush denormal inputs
    assert [int(x) for x in run("v_rsq_f32", [DEN_POS], ctx=DENORM)] == [inf]
    assert [int(x) for x in run("v_log_f32", [DEN_POS], ctx=DENORM)] == [ninf]
    assert [int(x) for x in run("v_log_f32", [z, one, f32(-2.0), inf, f32(8.0)])] == \
        [ninf, z, QNAN32, inf, f32(3.0)]
    assert [int(x) for x in run("v_log_clamp_f32", [z])] == [fmax | 0x80000000]
    assert [int(x) for x in run("v_sqrt_f32", [mz, f32(-4.0), inf])] == [mz, QNAN32, inf]
    assert [int(x) for x in run("v_exp_f32", [f32(-126.0), f32(-126.5), f32(3.0), ninf, inf],
                                ctx=DENORM)] == [TINY, z, f32(8.0), z, inf]
    dmax = f64(1.7976931348623157e308)
    got = VALU_OPS["v_rcp_clamp_f64"](CTX, lanes([0, 1 << 63], np.uint64))[:2]
    assert [int(x) for x in got] == [dmax, dmax | (1 << 63)]
    got = VALU_OPS["v_rsq_clamp_f64"](CTX, lanes([0], np.uint64))[:1]
    assert int(got[0]) == dmax


def test_exp_log_rsq_accuracy():
    xs = [f32(float(v)) for v in RNG.uniform(-120, 120, 40)] + [f32(0.5), f32(-0.25)]
    ln2 = D(2).ln()
    for x, r in zipped(xs, run("v_exp_f32", xs)):
        assert _close_to_reference(r, (D(b32(x)) * ln2).exp()), hex(x)
    pos = [int(v) for v in rand_f32(42, -120, 120) & np.uint32(0x7FFFFFFF)]
    for x, r in zipped(pos, run("v_log_f32", pos)):
        assert _close_to_reference(r, D(b32(x)).ln() / ln2), hex(x)
    for x, r in zipped(pos, run("v_rsq_f32", pos)):
        assert _close_to_reference(r, 1 / D(b32(x)).sqrt()), hex(x)


def test_sin_cos_take_revolutions():
    exact = [0.0, 0.25, 0.5, 0.75, 1.0, -0.25, 1.0 / 12, 5.25, -256.0, -0.0]
    bits = [f32(v) for v in exact]
    assert [int(x) for x in run("v_sin_f32", bits)] == \
        [f32(v) for v in (0.0, 1.0, 0.0, -1.0, 0.0, -1.0, 0.5, 1.0, -0.0, -0.0)]
    assert [int(x) for x in run("v_cos_f32", bits[:6] + bits[7:])] == \
        [f32(v) for v in (1.0, 0.0, -1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0)]
    xs = [f32(float(v)) for v in RNG.uniform(-3, 3, 24)] + [f32(1e-6), f32(100.3)]
    two_pi = 2 * _pi()
    for x, r in zipped(xs, run("v_sin_f32", xs)):
        assert _close_to_reference(r, _sin(D(b32(x)) * two_pi)), hex(x)
    for x, r in zipped(xs, run("v_cos_f32", xs)):
        assert _close_to_reference(r, _sin(D(b32(x)) * two_pi + _pi() / 2)), hex(x)
    # out of the [-256, 256] input range, and non-finite inputs
    assert [int(x) for x in run("v_sin_f32", [f32(300.25), INF32, QNAN32])] == [0, QNAN32, QNAN32]
    assert [int(x) for x in run("v_cos_f32", [f32(300.5), NINF32])] == [f32(1.0), QNAN32]


# ---------------------------------------------------------------------------------------------
# compares

FLOAT_PREDICATES = {
    "f": lambda a, b: False, "lt": lambda a, b: a < b, "eq": lambda a, b: a == b,
    "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "lg": lambda a, b: a < b or a > b,
    "ge": lambda a, b: a >= b, "o": lambda a, b: not (math.isnan(a) or math.isnan(b)),
    "u": lambda a, b: math.isnan(a) or math.isnan(b), "nge": lambda a, b: not a >= b,
    "nlg": lambda a, b: not (a < b or a > b), "ngt": lambda a, b: not a > b,
    "nle": lambda a, b: not a <= b, "neq": lambda a, b: a != b,
    "nlt": lambda a, b: not a < b, "tru": lambda a, b: True,
}


@pytest.mark.parametrize("cond", sorted(FLOAT_PREDICATES))
def test_float_compares_including_nan(cond):
    pairs = [(1.0, 2.0), (2.0, 1.0), (1.0, 1.0), (math.nan, 1.0), (1.0, math.nan),
             (math.nan, math.nan), (-0.0, 0.0), (math.inf, -math.inf), (-math.inf, math.nan)]
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    expect = [FLOAT_PREDICATES[cond](x, y) for x, y in pairs]
    for kind in ("cmp", "cmpx", "cmps", "cmpsx"):
        assert list(run(f"v_{kind}_{cond}_f32", [f32(x) for x in a], [f32(y) for y in b])) == \
            expect, kind
        got = VALU_OPS[f"v_{kind}_{cond}_f64"](CTX, lanes([f64(x) for x in a], np.uint64),
                                              lanes([f64(y) for y in b], np.uint64))
        assert list(got[:len(pairs)]) == expect, kind


def test_float_compares_flush_denormal_inputs():
    assert list(run("v_cmp_eq_f32", [DEN_POS, DEN_NEG], [0, 0])) == [True, True]
    assert list(run("v_cmp_eq_f32", [DEN_POS, DEN_NEG], [0, 0], ctx=DENORM)) == [False, False]
    assert list(run("v_cmp_lt_f32", [0], [DEN_POS])) == [False]


INT_PREDICATES = {"f": lambda a, b: False, "lt": lambda a, b: a < b, "eq": lambda a, b: a == b,
                  "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
                  "ne": lambda a, b: a != b, "ge": lambda a, b: a >= b, "t": lambda a, b: True}


@pytest.mark.parametrize("cond", sorted(INT_PREDICATES))
def test_integer_compares(cond):
    a, b = _pairs()
    pred = INT_PREDICATES[cond]
    for kind in ("cmp", "cmpx"):
        assert list(run(f"v_{kind}_{cond}_u32", a, b)) == [pred(x, y) for x, y in zipped(a, b)]
        assert list(run(f"v_{kind}_{cond}_i32", a, b)) == [pred(sext(x), sext(y))
                                                          for x, y in zipped(a, b)]
        wa = [(x << 32) | y for x, y in zipped(a, b)]
        wb = [(y << 32) | x for x, y in zipped(a, b)]

        def s64(v):
            return v - (1 << 64) if v >> 63 else v

        got = VALU_OPS[f"v_{kind}_{cond}_u64"](CTX, lanes(wa, np.uint64), lanes(wb, np.uint64))
        assert list(got) == [pred(x, y) for x, y in zipped(wa, wb)]
        got = VALU_OPS[f"v_{kind}_{cond}_i64"](CTX, lanes(wa, np.uint64), lanes(wb, np.uint64))
        assert list(got) == [pred(s64(x), s64(y)) for x, y in zipped(wa, wb)]


CLASS_SAMPLES32 = [(0x7F800001, 0), (0x7FC00000, 1), (NINF32, 2), (f32(-1.5), 3),
                   (DEN_NEG, 4), (0x80000000, 5), (0, 6), (DEN_POS, 7), (f32(1e30), 8),
                   (INF32, 9)]
CLASS_SAMPLES64 = [(0x7FF0000000000001, 0), (0x7FF8000000000000, 1), (0xFFF0000000000000, 2),
                   (f64(-3.0), 3), (0x800F000000000000, 4), (1 << 63, 5), (0, 6), (1, 7),
                   (f64(2.0 ** -1022), 8), (0x7FF0000000000000, 9)]


@pytest.mark.parametrize("width", [32, 64])
def test_cmp_class_every_class_bit(width):
    samples = CLASS_SAMPLES32 if width == 32 else CLASS_SAMPLES64
    for name in (f"v_cmp_class_f{width}", f"v_cmpx_class_f{width}"):
        for bit in range(10):
            vals = [v for v, _ in samples]
            masks = [1 << bit] * 10
            src = lanes(vals, np.uint64 if width == 64 else np.uint32)
            got = VALU_OPS[name](CTX, src, lanes(masks))[:10]     # FTZ mode: no flushing
            assert list(got) == [cls == bit for _, cls in samples], (name, bit)
        all_but = [(0x3FF & ~(1 << cls)) for _, cls in samples]
        got = VALU_OPS[name](CTX, src, lanes(all_but))[:10]
        assert not got.any()


# ---------------------------------------------------------------------------------------------
# cube map and trig_preop

def test_cube_ops():
    vecs = [(1.0, 2.0, 3.0), (1.0, 2.0, -3.0), (1.0, -5.0, 3.0), (4.0, -2.0, 3.0),
            (-4.0, 2.0, 3.0), (2.0, 2.0, 2.0), (-2.0, 2.0, -2.0), (3.0, -3.0, 1.0),
            (-0.0, 0.0, -0.0), (7.0, 1.0, -7.0)]
    x, y, z = ([f32(v[k]) for v in vecs] for k in range(3))

    def ref(a, b, c):                           # (id, sc, tc, ma) per CLRX's pseudo-code
        if abs(c) >= abs(a) and abs(c) >= abs(b):
            return (5.0 if c < 0 else 4.0), (-a if c < 0 else a), -b, 2 * c
        if abs(b) >= abs(a):
            return (3.0 if b < 0 else 2.0), a, (-c if b < 0 else c), 2 * b
        return (1.0 if a < 0 else 0.0), (c if a < 0 else -c), -b, 2 * a

    expect = [ref(*v) for v in vecs]
    for k, name in enumerate(("v_cubeid_f32", "v_cubesc_f32", "v_cubetc_f32", "v_cubema_f32")):
        assert [int(r) for r in run(name, x, y, z)] == [f32(e[k]) for e in expect], name


def test_trig_preop_returns_bits_of_two_over_pi():
    with decimal.localcontext() as ctx:
        ctx.prec = 420
        ref_bits = int(2 / _pi_precise(420) * D(2) ** 1300)   # floor(2/pi * 2^1300)

    def chunk(shift):
        return (ref_bits >> (1300 - 53 - shift)) & ((1 << 53) - 1)

    segs = list(range(32))
    x = [f64(1.0)] * 32
    got = VALU_OPS["v_trig_preop_f64"](CTX, lanes(x, np.uint64), lanes(segs))[:32]
    expect = [math.ldexp(chunk(53 * s), -53 - 53 * s) if 53 * s < 1120 else 0.0 for s in segs]
    assert [b64(g) for g in got] == expect
    # large S0 skips exponent - 1077 leading bits; exponent >= 1968 adds 2^128
    for e in (1078, 1500, 1968, 2000):
        xv = lanes([e << 52], np.uint64)
        got = VALU_OPS["v_trig_preop_f64"](CTX, xv, lanes([1]))[0]
        shift = 53 + e - 1077
        scale = -53 - shift + (128 if e >= 1968 else 0)
        assert b64(got) == (math.ldexp(chunk(shift), scale) if shift < 1120 else 0.0), e


def _pi_precise(digits: int) -> D:
    with decimal.localcontext() as ctx:
        ctx.prec = digits + 5
        return _pi()


# ---------------------------------------------------------------------------------------------
# division: the sequences LLVM 19 emits (-cl-fp32-correctly-rounded-divide-sqrt, tahiti)

def _neg32(x):
    return x ^ np.uint32(0x80000000)


def llvm_fdiv_f32(n, d, outer=CTX):
    """v_div_scale x2, v_rcp, s_setreg(denormals on), 5 fma + mul, s_setreg(back),
    v_div_fmas, v_div_fixup."""
    inner = LaneContext(FpMode(outer.mode.bits | 0x30))
    one = lanes([f32(1.0)])
    ds, _ = VALU_OPS["v_div_scale_f32"](outer, d, d, n)
    r = VALU_OPS["v_rcp_f32"](outer, ds)
    ns, vcc = VALU_OPS["v_div_scale_f32"](outer, n, d, n)
    e = VALU_OPS["v_fma_f32"](inner, _neg32(ds), r, one)
    r = VALU_OPS["v_fma_f32"](inner, e, r, r)
    q = VALU_OPS["v_mul_f32"](inner, ns, r)
    t = VALU_OPS["v_fma_f32"](inner, _neg32(ds), q, ns)
    q = VALU_OPS["v_fma_f32"](inner, t, r, q)
    t = VALU_OPS["v_fma_f32"](inner, _neg32(ds), q, ns)
    x = VALU_OPS["v_div_fmas_f32"](outer, t, r, q, vcc)
    return VALU_OPS["v_div_fixup_f32"](outer, x, d, n)


def _div_reference32(n, d, flush):
    fn, fd = b32(ftz32(n) if flush else n), b32(ftz32(d) if flush else d)
    if math.isnan(fn) or math.isnan(fd) or (fn == 0 and fd == 0) or \
            (math.isinf(fn) and math.isinf(fd)):
        return QNAN32
    sign = math.copysign(1, fn) * math.copysign(1, fd) < 0
    if fd == 0 or math.isinf(fn):
        return NINF32 if sign else INF32
    if math.isinf(fd) or fn == 0:
        return 0x80000000 if sign else 0
    q = rn32(Fraction(fn) / Fraction(fd))
    return ftz32(q) if flush else q


def _division_operands32():
    """Random operands plus quotients on and next to binary32 ties, denormal-range and
    near-overflow quotients, tiny/huge/denormal operands and special values."""
    cases = list(zipped(map(int, rand_f32(64, -126, 127)), map(int, rand_f32(64, -126, 127))))
    cases += list(zipped(map(int, rand_u32(64)), map(int, rand_u32(64))))    # any bit pattern
    for _ in range(320):
        d = float(np.float32(RNG.uniform(1, 2) * 2.0 ** int(RNG.choice(
            [-149, -140, -130, -127, -20, 0, 20, 100, 126, 127]))))
        qe = int(RNG.choice([-160, -150, -140, -127, -126, -103, -5, 0, 5, 95, 126, 127, 130]))
        q = (int(RNG.integers(1 << 23, 1 << 24)) + 0.5) * 2.0 ** (qe - 23)
        n = np.float32(d * q * (1 + float(RNG.choice([0.0, 1e-9, -1e-9]))))
        if np.isfinite(n) and d != 0:
            cases.append((f32(float(n)) ^ int(RNG.integers(0, 2)) << 31, f32(d)))
    specials = [0, 0x80000000, INF32, NINF32, QNAN32, DEN_POS, f32(1.0), f32(3.0),
                f32(3.4e38), f32(2.0 ** -126)]
    cases += [(a, b) for a in specials for b in specials]
    return cases


@pytest.mark.parametrize("mode", [0x3C0, 0x3F0], ids=["llvm_ftz", "denormals"])
def test_llvm_f32_division_is_correctly_rounded(mode):
    outer = LaneContext(FpMode(mode))
    flush = mode == 0x3C0
    cases = _division_operands32()
    for i in range(0, len(cases), 64):
        chunk = cases[i:i + 64]
        n, d = lanes([c[0] for c in chunk]), lanes([c[1] for c in chunk])
        got = llvm_fdiv_f32(n, d, outer)[:len(chunk)]
        assert [int(x) for x in got] == [_div_reference32(a, b, flush) for a, b in chunk]


def llvm_fdiv_f64(n, d, ctx=CTX):
    """The SI f64 sequence: VCC is recomputed from the high dwords of the scaled operands
    (SI's div_scale VCC output is not used)."""
    neg = np.uint64(1 << 63)
    one = lanes([f64(1.0)], np.uint64)
    hi = np.uint64(32)
    ds, _ = VALU_OPS["v_div_scale_f64"](ctx, d, d, n)
    r = VALU_OPS["v_rcp_f64"](ctx, ds)
    vcc = (d >> hi) == (ds >> hi)
    e = VALU_OPS["v_fma_f64"](ctx, ds ^ neg, r, one)
    r = VALU_OPS["v_fma_f64"](ctx, r, e, r)
    ns, _ = VALU_OPS["v_div_scale_f64"](ctx, n, d, n)
    e = VALU_OPS["v_fma_f64"](ctx, ds ^ neg, r, one)
    r = VALU_OPS["v_fma_f64"](ctx, r, e, r)
    vcc = ((n >> hi) == (ns >> hi)) ^ vcc
    q = VALU_OPS["v_mul_f64"](ctx, ns, r)
    t = VALU_OPS["v_fma_f64"](ctx, ds ^ neg, q, ns)
    x = VALU_OPS["v_div_fmas_f64"](ctx, t, r, q, vcc)
    return VALU_OPS["v_div_fixup_f64"](ctx, x, d, n)


def _div_reference64(n, d):
    fn, fd = b64(n), b64(d)
    if math.isnan(fn) or math.isnan(fd) or (fn == 0 and fd == 0) or \
            (math.isinf(fn) and math.isinf(fd)):
        return QNAN64
    sign = math.copysign(1, fn) * math.copysign(1, fd) < 0
    if fd == 0 or math.isinf(fn):
        return f64(-math.inf if sign else math.inf)
    if math.isinf(fd) or fn == 0:
        return f64(-0.0 if sign else 0.0)
    return rn64(Fraction(fn) / Fraction(fd))


def test_llvm_f64_division_is_correctly_rounded():
    cases = list(zipped(map(int, rand_f64(64, -1000, 1000)), map(int, rand_f64(64, -1000, 1000))))
    for _ in range(130):
        d = float(RNG.uniform(1, 2)) * 2.0 ** int(RNG.choice([-1074, -1060, -1023, -600, 0, 600,
                                                              1000, 1023]))
        qe = int(RNG.choice([-1090, -1074, -1050, -1022, -970, -5, 0, 770, 1000, 1023, 1030]))
        q = Fraction(int(RNG.integers(1 << 52, 1 << 53)) * 2 + 1, 2) * Fraction(2) ** (qe - 52)
        n = round_fraction(Fraction(d) * q, 52, -1022, 1023)
        if math.isfinite(n) and d != 0:
            cases.append((f64(n) ^ (int(RNG.integers(0, 2)) << 63), f64(d)))
    specials = [0, 1 << 63, f64(math.inf), QNAN64, 1, f64(1.0), f64(1e308), f64(3.0)]
    cases += [(a, b) for a in specials for b in specials]
    for i in range(0, len(cases), 64):
        chunk = cases[i:i + 64]
        n = lanes([c[0] for c in chunk], np.uint64)
        d = lanes([c[1] for c in chunk], np.uint64)
        got = llvm_fdiv_f64(n, d)[:len(chunk)]
        assert [int(x) for x in got] == [_div_reference64(a, b) for a, b in chunk]


def test_div_scale_flags_and_div_fmas_scaling():
    big, one, tiny = f32(2.0 ** 100), f32(1.0), f32(2.0 ** -120)
    # quotient near overflow: the denominator is scaled by 2^64, VCC set on both calls
    d, vcc = run("v_div_scale_f32", [tiny], [tiny], [big])
    assert [int(x) for x in d] == [f32(2.0 ** -56)] and list(vcc) == [True]
    n, vcc = run("v_div_scale_f32", [big], [tiny], [big])
    assert [int(x) for x in n] == [big] and list(vcc) == [True]
    # denormal quotient: only the numerator is scaled
    n, vcc = run("v_div_scale_f32", [tiny], [big], [tiny])
    assert [int(x) for x in n] == [f32(2.0 ** -56)] and list(vcc) == [True]
    # ordinary operands: unchanged, no flag
    n, vcc = run("v_div_scale_f32", [f32(3.0)], [f32(7.0)], [f32(3.0)])
    assert [int(x) for x in n] == [f32(3.0)] and list(vcc) == [False]
    # div_fmas: 2^64 when |S2| >= 2, 2^-64 otherwise, only with VCC, one rounding
    a, b = f32(1.0 + 2.0 ** -23), f32(1.0 + 2.0 ** -22)
    got = run("v_div_fmas_f32", [a, a, a, a], [b, b, b, b], [f32(2.0), f32(0.5), f32(2.0), 0],
              [True, True, False, True], ctx=DENORM)
    expect = [rn32((Fraction(b32(a)) * Fraction(b32(b)) + c) * s) for c, s in
              ((2, Fraction(2) ** 64), (Fraction(1, 2), Fraction(2) ** -64), (2, 1),
               (0, Fraction(2) ** -64))]
    assert [int(x) for x in got] == expect
    assert int(run("v_div_fmas_f32", [f32(2.0 ** -62)], [one], [f32(2.0 ** -120)], [True],
                   ctx=DENORM)[0]) == rn32(Fraction(2) ** -126 + Fraction(2) ** -184)


def test_div_scale_cases_that_scale_both_operands():
    # d denormal (denormals on): both operands x2^64, no VCC
    for s0 in (f32(2.0 ** -60), 0x00000100):
        out, vcc = run("v_div_scale_f32", [s0], [0x00000100], [f32(2.0 ** -60)], ctx=DENORM)
        assert [int(x) for x in out] == [rn32(Fraction(b32(s0)) * 2 ** 64)]
        assert list(vcc) == [False]
    # |d| > 2^126: both x2^-64; tiny numerator (< 2^-103): both x2^64
    for s0, d, n, factor in ((f32(2.0 ** 127), f32(2.0 ** 127), f32(8.0), Fraction(1, 2 ** 64)),
                             (f32(8.0), f32(2.0 ** 127), f32(8.0), Fraction(1, 2 ** 64)),
                             (f32(2.0 ** -110), f32(3.0), f32(2.0 ** -110), 2 ** 64),
                             (f32(3.0), f32(3.0), f32(2.0 ** -110), 2 ** 64)):
        out, vcc = run("v_div_scale_f32", [s0], [d], [n])
        assert [int(x) for x in out] == [rn32(Fraction(b32(s0)) * factor)]
        assert list(vcc) == [False]
    # |d| > 2^126 with a denormal quotient: only d scaled (by 2^-64), VCC
    out, vcc = run("v_div_scale_f32", [f32(2.0 ** 127)] * 2, [f32(2.0 ** 127)] * 2,
                   [f32(2.0 ** -10)] * 2)
    assert [int(x) for x in out][0] == f32(2.0 ** 63) and list(vcc) == [True, True]
    f64s = [f64(2.0 ** -1000), f64(3.0), f64(2.0 ** -1000)]
    out, vcc = VALU_OPS["v_div_scale_f64"](CTX, *(lanes([v], np.uint64) for v in f64s))
    assert b64(out[0]) == 2.0 ** -872 and not vcc[0]


def test_div_fixup_special_cases():
    one, two, inf, nan = f32(1.0), f32(2.0), INF32, QNAN32
    q = [one, one, one, one, one, one, nan, f32(-0.75), one, one]
    d = [0, 0, inf, inf, two, f32(2.0 ** 100), two, f32(-2.0), nan, two]
    n = [0, f32(-3.0), inf, f32(3.0), 0x80000000, f32(2.0 ** -60), two, f32(1.5), one, inf]
    expect = [QNAN32, NINF32, QNAN32, 0, 0x80000000, 0, INF32, f32(-0.75), QNAN32, INF32]
    assert [int(x) for x in run("v_div_fixup_f32", q, d, n)] == expect
    q64 = [f64(1.0), f64(1.0), f64(5.0)]
    d64 = [f64(2.0 ** 600), f64(-0.0), f64(-2.0)]
    n64 = [f64(2.0 ** -600), f64(1.0), f64(10.0)]
    got = VALU_OPS["v_div_fixup_f64"](CTX, lanes(q64, np.uint64), lanes(d64, np.uint64),
                                      lanes(n64, np.uint64))
    assert [b64(x) for x in got[:3]] == [0.0, -math.inf, -5.0]
