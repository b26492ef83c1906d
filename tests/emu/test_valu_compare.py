"""The VOPC compares of the vector ALU (:mod:`gpgpu_hdl.emu.valu_compare`) against Python's
comparison operators.

- every f32/f64 predicate in its cmp, cmpx, cmps and cmpsx forms, NaN and signed zero
  included, and the flushing of denormal inputs;
- every integer predicate on u32/i32/u64/i64 operands (``cmp`` and ``cmpx``), where signed and
  unsigned orders differ;
- ``v_cmp_class_f32/f64`` on a sample of each of the ten classes, one mask bit at a time and
  every bit but the sample's.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpgpu_hdl.emu.valu_ops import VALU_OPS
from tests.bits import f32, f64, sext
from tests.emu.valu_models import (CTX, DEN_NEG, DEN_POS, DENORM, INF32, NINF32, PAIR_BATCHES,
                                   lanes, pairs, run, zipped)

pytestmark = pytest.mark.usefixtures("valu_environment")


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
@pytest.mark.parametrize("batch", range(PAIR_BATCHES))
def test_integer_compares(cond, batch):
    a, b = pairs(batch)
    pred = INT_PREDICATES[cond]
    for kind in ("cmp", "cmpx"):
        assert list(run(f"v_{kind}_{cond}_u32", a, b)) == [pred(x, y) for x, y in zipped(a, b)]
        assert list(run(f"v_{kind}_{cond}_i32", a, b)) == [pred(sext(x), sext(y))
                                                          for x, y in zipped(a, b)]
        wa = [(x << 32) | y for x, y in zipped(a, b)]
        wb = [(y << 32) | x for x, y in zipped(a, b)]
        got = VALU_OPS[f"v_{kind}_{cond}_u64"](CTX, lanes(wa, np.uint64), lanes(wb, np.uint64))
        assert list(got) == [pred(x, y) for x, y in zipped(wa, wb)]
        got = VALU_OPS[f"v_{kind}_{cond}_i64"](CTX, lanes(wa, np.uint64), lanes(wb, np.uint64))
        assert list(got) == [pred(sext(x, 64), sext(y, 64)) for x, y in zipped(wa, wb)]


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
