"""The integer and bit operations of the vector ALU (:mod:`gpgpu_hdl.emu.valu_int`) against
Python integer models.

Corner and random operands: add/sub with carry-in, carry-out and borrow; 32-bit shifts that
mask their amount and 64-bit shifts; signed and unsigned min/max/min3/max3/med3; full and
24-bit multiplies and multiply-adds (sign extension of the 24-bit field); bitfield extract,
insert and mask, alignbit/alignbyte; bit counts, scans, reversal and ``v_mbcnt`` (lane ids
from the context); the SAD family, ``v_msad``/``v_mqsad`` and ``v_lerp_u8``; 16-bit packing
and ``v_cndmask_b32``.
"""

from __future__ import annotations

import numpy as np
import pytest

from gpgpu_hdl.emu.context import LaneContext
from gpgpu_hdl.emu.valu_ops import VALU_OPS
from tests.bits import M32, M64, sext
from tests.emu.valu_models import CTX, PAIR_BATCHES, RNG, lanes, pairs, rand_u32, run, zipped

pytestmark = pytest.mark.usefixtures("valu_environment")


@pytest.mark.parametrize("batch", range(PAIR_BATCHES))
def test_add_sub_carry_and_borrow(batch):
    a, b = pairs(batch)
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
    sign = [sext(v, 64) for v in vals]
    got = [int(x) for x in run("v_lshl_b64", lanes(vals, np.uint64), am)[:12]]
    assert got == [(v << (s & 63)) & M64 for v, s in zipped(vals, am)]
    got = [int(x) for x in run("v_lshr_b64", lanes(vals, np.uint64), am)[:12]]
    assert got == [v >> (s & 63) for v, s in zipped(vals, am)]
    got = [int(x) for x in run("v_ashr_i64", lanes(vals, np.uint64), am)[:12]]
    assert got == [(v >> (s & 63)) & M64 for v, s in zipped(sign, am)]


@pytest.mark.parametrize("batch", range(PAIR_BATCHES))
def test_signed_and_unsigned_min_max(batch):
    a, b = pairs(batch)
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


@pytest.mark.parametrize("batch", range(PAIR_BATCHES))
def test_multiplies(batch):
    a, b = pairs(batch)
    c = [int(v) for v in rand_u32(64)]
    assert [int(x) for x in run("v_mul_lo_u32", a, b)] == [(x * y) & M32 for x, y in zipped(a, b)]
    assert [int(x) for x in run("v_mul_lo_i32", a, b)] == [(sext(x) * sext(y)) & M32
                                                           for x, y in zipped(a, b)]
    assert [int(x) for x in run("v_mul_hi_u32", a, b)] == [(x * y) >> 32 for x, y in zipped(a, b)]
    assert [int(x) for x in run("v_mul_hi_i32", a, b)] == [((sext(x) * sext(y)) >> 32) & M32
                                                           for x, y in zipped(a, b)]

    def i24(v):
        return sext(v, 24)

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
