# amaranth: UnusedElaboratable=no
"""The FP32 converter sub-unit (:mod:`gpgpu_hdl.cu.fpu.cvt`) against the golden model.

Each op group runs in one simulation of an :class:`FpCvt` built for that group, one vector
per cycle, and every result is compared with :data:`VALU_OPS` on the same operands and MODE
(the harness of every FP sub-unit test, ``harness.py``). Operands per op: the f32 corners (signed
zeros, ties, denormals, the normal range ends, infinities, NaNs), the boundaries of the
integer conversions (2**31, 2**32 and their neighbours), of f16 (largest finite, overflow
threshold, denormal thresholds, rounding ties) and of the byte/16-bit packs, integer corners
for the integer sources, large positive and negative ``v_ldexp`` exponents, then seeded random
bit patterns and random floats of moderate range; the corners under each of the four f32
FP_DENORM settings.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from amaranth.back import rtlil

from gpgpu_hdl.cu.fpu.cvt import FpCvt
from gpgpu_hdl.cu.fpu.ops import FP_OPS, SUBUNIT_OF
from tests.bits import M32, f32
from tests.cu.fpu.harness import (
    DENORM_MODES, F32_CORNERS, MODES, check, check_ops_argument, check_pipeline_timing,
    check_unbuilt_ops_give_zero, mode_bits, random_f32, sample_every_op, stream, stream_ops,
)
from tests.simulation import Vector

CVT_OPS = tuple(n for n in FP_OPS if SUBUNIT_OF[n] == "cvt")
GROUPS = {
    "to_int": ("v_cvt_u32_f32", "v_cvt_i32_f32", "v_cvt_rpi_i32_f32", "v_cvt_flr_i32_f32",
               "v_cvt_pk_u8_f32", "v_cvt_pkaccum_u8_f32"),
    "round": ("v_trunc_f32", "v_ceil_f32", "v_rndne_f32", "v_floor_f32", "v_fract_f32"),
    "from_int": ("v_cvt_f32_i32", "v_cvt_f32_u32", "v_cvt_off_f32_i4", "v_cvt_f32_ubyte0",
                 "v_cvt_f32_ubyte1", "v_cvt_f32_ubyte2", "v_cvt_f32_ubyte3"),
    "exp": ("v_ldexp_f32", "v_frexp_exp_i32_f32", "v_frexp_mant_f32"),
    "f16": ("v_cvt_f16_f32", "v_cvt_f32_f16", "v_cvt_pkrtz_f16_f32"),
    "pknorm": ("v_cvt_pknorm_i16_f32", "v_cvt_pknorm_u16_f32"),
}
N_RANDOM = 160


def f16_to_f32_bits(h: int) -> int:
    return f32(float(np.uint16(h).view(np.float16)))


def _ties(values) -> list[int]:
    """Each value and the values just beside it."""
    out = []
    for x in values:
        b = f32(x)
        out += [b, b + 1, b - 1]
    return out


#: Extra f32 corners of the conversions: ties, integer and byte boundaries, tiny fractions.
CVT_CORNERS = tuple(dict.fromkeys(list(F32_CORNERS) + _ties([
    0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -3.5, 0.25, -0.75, 8388607.5, -8388607.5,
    2.0 ** 23, -(2.0 ** 23), 2.0 ** 24, 2.0 ** 31, -(2.0 ** 31), 2.0 ** 32, -(2.0 ** 32),
    254.5, 255.5, 256.0, -1.0, 2.0 ** -24, -(2.0 ** -25), -(2.0 ** -26), 2.0 ** -32,
    -(2.0 ** -32), -(2.0 ** -33), 3.0 * 2.0 ** -40, -1.0e-20,
]) + [f32(2.0 ** 127), f32(-(2.0 ** 127))]))

#: f32 values at the f16 boundaries: largest finite, the overflow threshold 65520, the
#: smallest normal and denormal, the half-denormal threshold, ties between f16 values.
F16_BOUNDARY = tuple(_ties([65504.0, 65520.0, -65520.0, 65536.0, 2.0 ** -14, 2.0 ** -24,
                            2.0 ** -25, -(2.0 ** -25), 1.5 * 2.0 ** -25, 1.0 + 2.0 ** -11,
                            1.0 + 3 * 2.0 ** -11, 2.0 ** -15 + 2.0 ** -25, -2049.0, 2047.5]))

#: Integer-source corners.
INT_CORNERS = (0, 1, 2, 3, M32, M32 - 1, 0x8000_0000, 0x7FFF_FFFF, 0x8000_0001, 0x7FFF_FFC0,
               0x7FFF_FFBF, 0x7FFF_FF80, 0xFFFF_FF7F, 0x0100_0000, 0x0100_0001, 0x0100_0002,
               0x0100_0003, 0x0200_0001, 0x00FF_FFFF, 0xFEFF_FFFF, 0xFFFF_FFC0, 0xFFFF_FFBF,
               0x80FF_7F01, 0x0000_0008, 0x0000_0007, 0x0000_000F, 0xFFFF_FFF8, 0x1234_5678)

#: ``v_ldexp`` exponents: small, the edges of the range, huge of both signs.
LDEXP_EXPONENTS = (0, 1, -1, 2, 23, -23, 126, -126, 127, -127, 149, -149, -150, -151, 150,
                   253, 254, -253, -254, 277, -277, 300, -300, 399, 400, 401, -400, -401,
                   1000, -1000, 0x7FFF_FFFF, 0x8000_0000, 0x8000_0001, 0x0001_0000)


def random_float(rng: random.Random) -> int:
    """A random f32: :func:`random_f32`, or a value with a fraction (|x| < 2**24)."""
    if rng.randrange(3):
        return random_f32(rng)
    return f32(rng.uniform(-1, 1) * 2.0 ** rng.randrange(0, 25))


def random_f16_range(rng: random.Random) -> int:
    """An f32 within or around the f16 range, a third of them f16 ties or neighbours."""
    if rng.randrange(3) == 0:
        h = f16_to_f32_bits(rng.getrandbits(15) | rng.getrandbits(1) << 15)
        if h & 0x7F80_0000 == 0x7F80_0000 or h & 0x7FFF_FFFF == 0:
            return h
        return h + rng.choice((0x1000, 0xFFF, 0x1001, 0x800, 0x1FFF))   # ties, neighbours
    return f32(rng.uniform(-1, 1) * 2.0 ** rng.randrange(-28, 18))


def fract_ties(rng: random.Random) -> list[int]:
    """Negative ``x`` with ``1 + x`` on a rounding tie of [0.5, 1) (an odd multiple of
    2**-25), or just above one with the difference below 2**-32 (only the sticky bit of the
    fraction's bits under 2**-32 tells it from the tie), and tiny fractions."""
    values = [f32(-(2 * j - 1) * 2.0 ** -25)
              for j in [*range(1, 8), *(rng.randrange(8, 1 << 23) for _ in range(24))]]
    for i in [*range(0, 4), *(rng.randrange(4, 1 << 15) for _ in range(12))]:
        for m in range(33, 49):
            x = i * 2.0 ** -24 + 2.0 ** -25 - 2.0 ** -m
            if np.float32(x) == x:                  # exactly representable
                values.append(f32(-x))
    values += [f32(s * (2.0 ** -k + d * 2.0 ** -60)) for k in range(1, 40)
               for s in (-1, 1) for d in (0, 1)]
    return values


def _int(x: int) -> int:
    return x & M32


def cases(name: str, n_random: int = N_RANDOM) -> list[Vector]:
    """The vectors of one op (seeded by its name)."""
    rng = random.Random(name)

    def vec(s0, s1=None, s2=None, mode=None):
        return Vector(name, _int(s0), rng.getrandbits(32) if s1 is None else _int(s1),
                      rng.getrandbits(32) if s2 is None else s2,
                      rng.choice(MODES) if mode is None else mode)

    def each_mode(values, **kw):
        return [vec(x, mode=mode, **kw) for x in values for mode in DENORM_MODES]

    if name in GROUPS["from_int"]:
        values = list(INT_CORNERS) + [rng.getrandbits(32) for _ in range(n_random)]
        values += [rng.getrandbits(rng.randrange(1, 33)) for _ in range(n_random)]
        if name == "v_cvt_off_f32_i4":
            values += [i | rng.getrandbits(28) << 4 for i in range(16)]
        return [vec(x) for x in values]
    if name == "v_cvt_f32_f16":
        values = [0, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00,
                  0x7C01, 0x7E00, 0xFE00, 0x7DFF, 0x3C00, 0xBC00, 0x3555]
        values = [h | rng.getrandbits(16) << 16 * rng.getrandbits(1) for h in values]
        return each_mode(values) + [vec(rng.getrandbits(32)) for _ in range(2 * n_random)]
    if name == "v_ldexp_f32":
        xs = [f32(1.0), f32(-1.5), f32(3.0), 0x3FC0_0001, 0x0000_0001, 0x8040_0001,
              0x0080_0000, 0x7F7F_FFFF, 0x8000_0000, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000,
              0x7F80_0001, 0x007F_FFFF]
        vectors = [vec(x, n) for x, n in itertools.product(xs, LDEXP_EXPONENTS)]
        # every shift into the denormals, with ties: 1.5 * 2**n and 2.5 * 2**n
        vectors += [vec(x, n, mode=rng.choice(DENORM_MODES))
                    for x in (f32(1.5), f32(-2.5), 0x3F80_0001, 0x3FFF_FFFF)
                    for n in range(-153, -120)]
        vectors += each_mode(CVT_CORNERS[:40], s1=rng.randrange(-3, 4))
        vectors += [vec(random_float(rng), rng.choice((rng.randrange(-300, 300),
                                                       rng.getrandbits(32))))
                    for _ in range(2 * n_random)]
        return vectors
    if name in ("v_cvt_f16_f32", "v_cvt_pkrtz_f16_f32"):
        values = list(CVT_CORNERS) + list(F16_BOUNDARY)
        vectors = [vec(x, mode=mode, s1=rng.choice(values))
                   for x in values for mode in DENORM_MODES]
        vectors += [vec(random_f16_range(rng), random_f16_range(rng))
                    for _ in range(2 * n_random)]
        return vectors
    if name in GROUPS["pknorm"]:
        values = list(CVT_CORNERS) + _ties([0.5, -0.5, 0.75, 1.0, -1.0, 1.0 / 65535,
                                            0.5 / 32767, -1.5 / 32767, 0.999])
        vectors = [vec(x, rng.choice(values), mode=mode)
                   for x in values for mode in DENORM_MODES]
        vectors += [vec(f32(rng.uniform(-1.2, 1.2)), f32(rng.uniform(-1.2, 1.2)))
                    for _ in range(2 * n_random)]
        vectors += [vec(random_f32(rng), random_f32(rng)) for _ in range(n_random // 2)]
        return vectors
    if name in ("v_cvt_pk_u8_f32", "v_cvt_pkaccum_u8_f32"):
        values = list(CVT_CORNERS) + _ties([127.5, 128.5, 255.0, -255.0, 300.0])
        vectors = [vec(x, rng.getrandbits(32), rng.getrandbits(32), mode)
                   for x in values for mode in DENORM_MODES]
        vectors += [vec(f32(rng.uniform(-20, 280)), rng.getrandbits(32))
                    for _ in range(2 * n_random)]
        return vectors + [vec(random_float(rng)) for _ in range(n_random)]
    # float sources: the rounding ops, frexp, fract, the float-to-integer conversions
    values = list(CVT_CORNERS)
    if name == "v_fract_f32":
        values += fract_ties(rng)
    vectors = each_mode(values)
    vectors += [vec(random_float(rng)) for _ in range(2 * n_random)]
    vectors += [vec(f32(rng.randrange(-400, 400) / 2)) for _ in range(n_random // 2)]
    if name in GROUPS["to_int"]:
        big = [f32(s * rng.uniform(2.0 ** 30, 2.0 ** 33)) for s in (-1, 1) for _ in range(16)]
        vectors += [vec(x) for x in big]
    return vectors


def run_group(ops) -> dict[str, tuple[list[Vector], list]]:
    """Per op of ``ops``, its vectors and results from one run of an :class:`FpCvt` built for
    ``ops`` (the ``group_results`` fixture of ``tests/conftest.py`` runs every group)."""
    return stream_ops(FpCvt, ops, cases)


# --- every op against the golden model --------------------------------------------------------

def test_groups_cover_every_cvt_op():
    assert sorted(n for ops in GROUPS.values() for n in ops) == sorted(CVT_OPS)
    assert set(FpCvt.OPS) == set(CVT_OPS)


@pytest.mark.parametrize("name", CVT_OPS)
def test_op_matches_golden(name, group_results):
    check(*group_results[name], more_than=N_RANDOM)


def test_full_unit_matches_golden():
    """A sample of every op through the unit built with all of them."""
    vectors = sample_every_op(CVT_OPS, cases, seed=2)
    check(vectors, stream(FpCvt(), vectors))


@pytest.mark.slow
def test_f32_from_f16_exhaustive():
    vectors = [Vector("v_cvt_f32_f16", h, 0, 0, MODES[h % len(MODES)]) for h in range(1 << 16)]
    check(vectors, stream(FpCvt(ops=["v_cvt_f32_f16"]), vectors))


@pytest.mark.slow
@pytest.mark.parametrize("group", GROUPS)
def test_group_random_slow(group):
    rng = random.Random(group)
    vectors = []
    for name in GROUPS[group]:
        for _ in range(2000):
            x = random_f16_range(rng) if group in ("f16", "pknorm") else random_float(rng)
            s1 = rng.choice((random_float(rng), rng.getrandbits(32), rng.randrange(-300, 300)))
            vectors.append(Vector(name, x & M32, s1 & M32, rng.getrandbits(32),
                                  rng.choice(MODES)))
    check(vectors, stream(FpCvt(ops=GROUPS[group]), vectors))


# --- construction, structure, timing -----------------------------------------------------------

def test_constructor_errors():
    check_ops_argument(FpCvt, "v_cvt_f32_i32", "v_min_f32", "v_cvt_f64_f32")
    assert FpCvt().latency == 4


@pytest.mark.parametrize(("ops", "blocks"), [
    ((), set()),
    (("v_cvt_f32_i32", "v_cvt_f32_ubyte2"), {"norm"}),
    (("v_cvt_i32_f32", "v_cvt_pk_u8_f32"), {"fix"}),
    (("v_floor_f32",), {"fix", "norm"}),
    (("v_ldexp_f32", "v_cvt_f32_f16"), {"norm"}),
    (("v_cvt_f16_f32",), {"f16"}),
    (("v_cvt_pkrtz_f16_f32",), {"f16", "f16_hi"}),
    (("v_cvt_pknorm_u16_f32",), {"pknorm", "pknorm_hi"}),
    (None, {"fix", "norm", "f16", "f16_hi", "pknorm", "pknorm_hi"}),
])
def test_only_the_needed_blocks_are_built(ops, blocks):
    unit = FpCvt() if ops is None else FpCvt(ops=ops)
    assert unit.blocks == blocks
    text = rtlil.convert(unit, name="top")
    marks = {"fix": "fix_wide", "norm": "norm_rp", "f16": "f16_wide", "f16_hi": "f16_hi_wide",
             "pknorm": "pknorm_product", "pknorm_hi": "pknorm_hi_product"}
    for block, mark in marks.items():
        assert (f"\\{mark} " in text or f"\\{mark}\n" in text) == (block in blocks), block


def test_unbuilt_ops_give_zero():
    rng = random.Random(3)
    vectors = [Vector(n, random_f32(rng), random_f32(rng), rng.getrandbits(32),
                      rng.choice(MODES)) for n in CVT_OPS for _ in range(3)]
    check_unbuilt_ops_give_zero(
        FpCvt(ops=("v_cvt_f32_u32", "v_fract_f32", "v_cvt_pkrtz_f16_f32")), vectors)


def test_timing_contract():
    """``done`` rises :attr:`latency` cycles after ``start`` and holds, with the result,
    until the cycle after the next ``start``, whatever the inputs do meanwhile."""
    mode = mode_bits(3, ieee=0)                 # no flushing, IEEE off
    first = Vector("v_cvt_f32_i32", 7, mode=mode)
    second = Vector("v_cvt_i32_f32", f32(-3.5), mode=mode)     # the lane moves on to it
    assert check_pipeline_timing(FpCvt(), first, second, second) == [(f32(7.0), 0),
                                                                     (_int(-3), 0)]
