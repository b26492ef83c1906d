# amaranth: UnusedElaboratable=no
"""The FP32 compare sub-unit (:mod:`gpgpu_hdl.cu.fpu.cmp`) against the golden model.

Each op group (compares, ``v_cmp_class``, min/max, min3/max3/med3) runs in one simulation
of an :class:`FpCmp` built for that group, one vector per cycle (the unit takes a ``start``
every cycle), and every result is compared with :data:`VALU_OPS` evaluated on the same
operands and MODE, 64 lanes per call. Operands: corner values (signed zeros, ones, halves,
denormals, the normal range ends, infinities, quiet and signalling NaNs with payloads) crossed
with each other, plus seeded random bit patterns and random floats, under the four f32
FP_DENORM settings and, for min/max, both IEEE settings.

The harness (:func:`~tests.cu.fpu.harness.stream`, :func:`~tests.cu.fpu.harness.golden`,
:func:`~tests.cu.fpu.harness.check`) is the one of every FP sub-unit test.
"""

from __future__ import annotations

import itertools
import random

import pytest
from amaranth.back import rtlil

from gpgpu_hdl.cu.fpu.cmp import CMP_CONDITIONS, FpCmp
from gpgpu_hdl.cu.fpu.ops import FP_OPS, SUBUNIT_OF
from tests.bits import M32, f32
from tests.cu.fpu.harness import (
    DENORM_MODES, F32_CORNERS, MODES, check, check_ops_argument, check_pipeline_timing,
    check_unbuilt_ops_give_zero, mode_bits, random_f32, sample_every_op, stream, stream_ops,
)
from tests.simulation import Vector

#: A smaller set of f32 corners (see :data:`F32_CORNERS`) for crossing three operands.
F32_CORE = (0x0000_0000, 0x8000_0000, f32(1.0), f32(-1.0), f32(2.5), 0x0000_0001,
            0x807F_FFFF, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0x7F80_0001, 0xFFA0_0000)


def near(rng: random.Random, x: int) -> int:
    """An operand related to ``x``: equal, negated, or a neighbour."""
    return rng.choice((x, x ^ 0x8000_0000, (x + 1) & M32, (x - 1) & M32))


# --- the compare unit's vectors -------------------------------------------------------------

CMP_OPS = tuple(n for n in FP_OPS if SUBUNIT_OF[n] == "cmp")
COMPARES = tuple(n for n in CMP_OPS if n.split("_")[2] in CMP_CONDITIONS)
CLASS_OPS = ("v_cmp_class_f32", "v_cmpx_class_f32")
MINMAX_OPS = ("v_min_f32", "v_max_f32", "v_min_legacy_f32", "v_max_legacy_f32")
MINMAX3_OPS = ("v_min3_f32", "v_max3_f32", "v_med3_f32")
GROUPS = {"compare": COMPARES, "class": CLASS_OPS, "minmax": MINMAX_OPS,
          "minmax3": MINMAX3_OPS}
N_RANDOM = 96


def _pairs(rng: random.Random, n_random: int) -> list[tuple[int, int]]:
    """Every pair of corners, then random pairs (a third of them equal or neighbours)."""
    pairs = list(itertools.product(F32_CORNERS, repeat=2))
    for _ in range(n_random):
        x = random_f32(rng)
        pairs.append((x, near(rng, x) if rng.randrange(3) == 0 else random_f32(rng)))
    return pairs


def cases(name: str, n_random: int = N_RANDOM) -> list[Vector]:
    """The vectors of one op (seeded by its name)."""
    rng = random.Random(name)
    if name in COMPARES:
        kind = name.split("_")[1]
        pairs = _pairs(rng, n_random)
        if kind == "cmp":       # every pair flushed and not (flush_out does not matter)
            return [Vector(name, x, y, rng.getrandbits(32), mode)
                    for x, y in pairs for mode in (rng.choice(MODES[0:4:2]),
                                                   rng.choice(MODES[1:4:2]))]
        pairs = rng.sample(pairs, 48) + pairs[len(F32_CORNERS) ** 2:]   # same logic: a sample
        return [Vector(name, x, y, rng.getrandbits(32), rng.choice(MODES)) for x, y in pairs]
    if name in CLASS_OPS:
        masks = [1 << k for k in range(10)] + [0x3FF, 0, M32 ^ 0x3FF]
        values = list(F32_CORNERS) + [random_f32(rng) for _ in range(n_random // 4)]
        return [Vector(name, x, mask | rng.getrandbits(22) << 10 * (mask != M32 ^ 0x3FF),
                       rng.getrandbits(32), rng.choice(MODES))
                for x in values for mask in masks]
    if name in MINMAX_OPS:
        modes = MODES if name in ("v_min_f32", "v_max_f32") else DENORM_MODES
        return [Vector(name, x, y, rng.getrandbits(32), mode)
                for x, y in _pairs(rng, n_random) for mode in modes]
    assert name in MINMAX3_OPS
    vectors = [Vector(name, *t, mode) for t in itertools.product(F32_CORE, repeat=3)
               for mode in (rng.choice(MODES[:4]), rng.choice(MODES[4:]))]
    for _ in range(4 * n_random):
        x = random_f32(rng)
        t = [x, near(rng, x), random_f32(rng)]
        rng.shuffle(t)
        vectors.append(Vector(name, *t, rng.choice(MODES)))
    return vectors


def run_group(ops) -> dict[str, tuple[list[Vector], list]]:
    """Per op of ``ops``, its vectors and results from one run of an :class:`FpCmp` built for
    ``ops`` (the ``group_results`` fixture of ``tests/conftest.py`` runs every group)."""
    return stream_ops(FpCmp, ops, cases)


# --- every op against the golden model --------------------------------------------------------

def test_groups_cover_every_cmp_op():
    assert sorted(n for ops in GROUPS.values() for n in ops) == sorted(CMP_OPS)
    assert len(COMPARES) == 64 and set(FpCmp.OPS) == set(CMP_OPS)


@pytest.mark.parametrize("name", CMP_OPS)
def test_op_matches_golden(name, group_results):
    check(*group_results[name], more_than=N_RANDOM)


def test_full_unit_matches_golden():
    """A sample of every op through the unit built with all of them."""
    vectors = sample_every_op(CMP_OPS, cases, seed=1)
    check(vectors, stream(FpCmp(), vectors))


@pytest.mark.slow
@pytest.mark.parametrize("group", GROUPS)
def test_group_random_slow(group):
    rng = random.Random(group)
    vectors = []
    for name in GROUPS[group]:
        for _ in range(2000 if group != "compare" else 300):
            x = random_f32(rng)
            y = near(rng, x) if rng.randrange(3) == 0 else random_f32(rng)
            vectors.append(Vector(name, x, y, random_f32(rng), rng.choice(MODES)))
    check(vectors, stream(FpCmp(ops=GROUPS[group]), vectors))


# --- construction, structure, timing -----------------------------------------------------------

def test_constructor_errors():
    check_ops_argument(FpCmp, "v_min_f32", "v_add_f32", "v_cvt_f32_i32")
    assert FpCmp(ops=()).ops == frozenset()
    assert FpCmp().latency == 2


@pytest.mark.parametrize(("ops", "comparators"), [
    ((), 0), (CLASS_OPS, 0), (("v_cmp_lt_f32",), 1), (("v_min_legacy_f32", "v_max_f32"), 1),
    (("v_med3_f32",), 3), (None, 3)])
def test_only_the_needed_comparators_are_built(ops, comparators):
    unit = FpCmp() if ops is None else FpCmp(ops=ops)
    assert unit.comparators == comparators
    text = rtlil.convert(unit, name="top")
    for pair, built in (("ab", comparators >= 1), ("ac", comparators == 3),
                        ("bc", comparators == 3)):
        assert (f"{pair}_mag_lt" in text) == built, pair
    assert ("cond" in text) == any(n in COMPARES for n in unit.ops)


def test_unbuilt_ops_give_zero():
    rng = random.Random(3)
    vectors = [Vector(n, random_f32(rng), random_f32(rng), random_f32(rng), rng.choice(MODES))
               for n in CMP_OPS for _ in range(3)]
    check_unbuilt_ops_give_zero(FpCmp(ops=("v_cmp_lt_f32", "v_max3_f32")), vectors)


def test_timing_contract():
    """``done`` rises :attr:`latency` cycles after ``start`` and holds, with the outputs,
    until the cycle after the next ``start``, whatever the inputs do meanwhile."""
    mode = mode_bits(3, ieee=0)                 # no flushing, IEEE off
    first = Vector("v_max_f32", f32(1.0), f32(2.0), mode=mode)
    moved_on = Vector("v_cmp_lt_f32", f32(1.0), f32(-5.0), mode=mode)
    second = moved_on._replace(src1=f32(3.0))
    assert check_pipeline_timing(FpCmp(), first, moved_on, second) == [(f32(2.0), 0), (0, 1)]
