# amaranth: UnusedElaboratable=no
"""Compute-unit functional units (shifters, multipliers) against Python models.

The Python models here are checked against the golden model (:data:`VALU_OPS`) first; the
RTL is then simulated with many vectors per simulation run and compared with the models.
"""

from __future__ import annotations

import random
import re
import warnings

import numpy as np
import pytest
from amaranth.back import rtlil, verilog

from gpgpu_hdl.cu.multiplier import Multiplier33, MulOp, MulUnit
from gpgpu_hdl.cu.shifter import (
    SHIFTER_STYLES,
    BarrelShifter,
    MultiplierShifter,
    ShiftOp,
    make_shifter,
)
from gpgpu_hdl.emu.context import WAVE_SIZE, LaneContext
from gpgpu_hdl.emu.valu_ops import VALU_OPS
from tests.bits import sext
from tests.simulation import simulate

WIDTHS = (32, 64)


# --- Python models ------------------------------------------------------------------------

def shift_model(op: ShiftOp, a: int, amount: int, width: int) -> int:
    """``a`` shifted by ``amount`` (already in ``[0, width)``), as an unsigned ``width``-bit int."""
    mask = (1 << width) - 1
    if op == ShiftOp.SHL:
        return (a << amount) & mask
    if op == ShiftOp.LSHR:
        return a >> amount
    return (sext(a, width) >> amount) & mask


def mul_model(op: MulOp, a: int, b: int) -> int:
    """The 32-bit result of the SI multiply ``op`` on raw 32-bit operands."""
    name = op.name
    narrow = name.endswith("24")
    is_signed = "_I" in name
    bits = 24 if narrow else 32
    x, y = a & ((1 << bits) - 1), b & ((1 << bits) - 1)
    if is_signed:
        x, y = sext(x, bits), sext(y, bits)
    product = x * y
    if "_HI_" in name:
        product >>= 32
    return product & 0xFFFF_FFFF


#: Golden-model mnemonic of each (op, width), with the shift amount as the second source.
_SHIFT_MNEMONICS = {
    (ShiftOp.SHL, 32): "v_lshl_b32", (ShiftOp.LSHR, 32): "v_lshr_b32",
    (ShiftOp.ASHR, 32): "v_ashr_i32", (ShiftOp.SHL, 64): "v_lshl_b64",
    (ShiftOp.LSHR, 64): "v_lshr_b64", (ShiftOp.ASHR, 64): "v_ashr_i64",
}

_MUL_MNEMONICS = {
    MulOp.MUL_LO_U32: "v_mul_lo_u32", MulOp.MUL_HI_U32: "v_mul_hi_u32",
    MulOp.MUL_LO_I32: "v_mul_lo_i32", MulOp.MUL_HI_I32: "v_mul_hi_i32",
    MulOp.MUL_U32_U24: "v_mul_u32_u24", MulOp.MUL_HI_U32_U24: "v_mul_hi_u32_u24",
    MulOp.MUL_I32_I24: "v_mul_i32_i24", MulOp.MUL_HI_I32_I24: "v_mul_hi_i32_i24",
}


# --- operand sets -------------------------------------------------------------------------

def shift_operands(width: int, rng: random.Random, n_random: int = 4) -> list[int]:
    mask = (1 << width) - 1
    msb = 1 << (width - 1)
    alt = int("01" * (width // 2), 2)
    corners = [0, 1, msb, mask, alt, mask ^ alt, msb | 1, mask >> 1, 0x8000_0000, 0xFFFF_FFFF]
    values = list(dict.fromkeys(v & mask for v in corners))
    return values + [rng.getrandbits(width) for _ in range(n_random)]


def mul_operands(rng: random.Random, n_random: int) -> list[tuple[int, int]]:
    corners = [0, 1, 0xFFFF_FFFF, 0x8000_0000, 0x7FFF_FFFF, 0x0080_0000, 0x007F_FFFF,
               0x00FF_FFFF, 0xFF80_0000, 0x1234_5678]
    pairs = [(x, y) for x in corners for y in corners]
    pairs += [(rng.getrandbits(32), rng.getrandbits(32)) for _ in range(n_random)]
    return pairs


# --- the models against the golden model --------------------------------------------------

@pytest.mark.parametrize("width", WIDTHS)
def test_shift_model_matches_golden(width):
    rng = random.Random(width)
    dtype = np.uint32 if width == 32 else np.uint64
    ctx = LaneContext()
    values = shift_operands(width, rng, n_random=WAVE_SIZE)[:WAVE_SIZE]
    a = np.array(values, dtype=dtype)
    for amount in range(width):
        # Put junk above the amount's low bits: the golden model masks it off, as SI does.
        b = np.array([amount | (rng.getrandbits(26) << 6) for _ in values], dtype=np.uint32)
        for op in ShiftOp:
            golden = VALU_OPS[_SHIFT_MNEMONICS[op, width]](ctx, a, b)
            assert [int(x) for x in golden] == [shift_model(op, v, amount, width)
                                                for v in values], (op, amount)


def test_mul_model_matches_golden():
    rng = random.Random(1)
    pairs = mul_operands(rng, n_random=4 * WAVE_SIZE)
    ctx = LaneContext()
    for start in range(0, len(pairs) - WAVE_SIZE + 1, WAVE_SIZE):
        chunk = pairs[start:start + WAVE_SIZE]
        a = np.array([x for x, _ in chunk], dtype=np.uint32)
        b = np.array([y for _, y in chunk], dtype=np.uint32)
        for op in MulOp:
            golden = VALU_OPS[_MUL_MNEMONICS[op]](ctx, a, b)
            assert [int(x) for x in golden] == [mul_model(op, x, y) for x, y in chunk], op


# --- shifters -------------------------------------------------------------------------------

@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("style", SHIFTER_STYLES)
def test_shifter_every_amount(style, width):
    dut = make_shifter(style, width)
    assert dut.width == width
    assert dut.latency == 0
    assert len(dut.amount) == width.bit_length() - 1
    values = shift_operands(width, random.Random(style + str(width)))
    failures = []
    checked = []

    async def testbench(ctx):
        for op in ShiftOp:
            ctx.set(dut.op, op)
            for a in values:
                ctx.set(dut.a, a)
                for amount in range(width):
                    ctx.set(dut.amount, amount)
                    got, want = ctx.get(dut.result), shift_model(op, a, amount, width)
                    checked.append(got)
                    if got != want:
                        failures.append((op.name, hex(a), amount, hex(got), hex(want)))

    simulate(dut, testbench)
    assert len(checked) == len(ShiftOp) * len(values) * width
    assert not failures, failures[:10]


def test_make_shifter_styles():
    barrel, mult = make_shifter("barrel", 32), make_shifter("multiplier", width=64)
    assert type(barrel) is BarrelShifter and barrel.width == 32
    assert type(mult) is MultiplierShifter and mult.width == 64
    # Elaborate both (components made by the factory are not covered by this file's pragma).
    assert _mul_cells(barrel) == [] and len(_mul_cells(mult)) == 1


@pytest.mark.parametrize("style", ["Barrel", "dsp", "", None])
def test_make_shifter_rejects_unknown_style(style):
    with pytest.raises(ValueError, match=r"shifter style must be one of 'barrel', 'multiplier'"):
        make_shifter(style, 32)


@pytest.mark.parametrize("width", [0, 1, 3, 48, "32"])
@pytest.mark.parametrize("cls", [BarrelShifter, MultiplierShifter])
def test_shifter_rejects_bad_width(cls, width):
    with pytest.raises(ValueError, match=r"width must be a power of two"):
        cls(width=width)
    with pytest.raises(ValueError, match=r"width must be a power of two"):
        make_shifter("barrel", width)


# --- multipliers ----------------------------------------------------------------------------

def test_multiplier33():
    dut = Multiplier33()
    assert dut.latency == 0
    rng = random.Random(33)
    corners = [-(1 << 32), (1 << 32) - 1, 0, -1, 1, (1 << 31), -(1 << 31), (1 << 17) - 1,
               1 << 17, -(1 << 17), (1 << 34 // 2) + 1, 0x1_5555_5555 - (1 << 33)]
    pairs = [(x, y) for x in corners for y in corners]
    pairs += [(rng.randrange(-(1 << 32), 1 << 32), rng.randrange(-(1 << 32), 1 << 32))
              for _ in range(2000)]
    failures = []
    checked = []

    async def testbench(ctx):
        for x, y in pairs:
            ctx.set(dut.a, x)
            ctx.set(dut.b, y)
            got = ctx.get(dut.product)
            checked.append(got)
            if got != x * y:
                failures.append((x, y, got, x * y))

    simulate(dut, testbench)
    assert len(checked) == len(pairs)
    assert not failures, failures[:10]


def _multiply_testbench(dut, pairs, checked, failures, junk=None):
    """A testbench running every MulOp on ``pairs`` against :func:`mul_model`; ``junk(ctx)``
    drives unrelated inputs before each check."""
    async def testbench(ctx):
        for x, y in pairs:
            ctx.set(dut.a, x)
            ctx.set(dut.b, y)
            for op in MulOp:
                ctx.set(dut.op, op)
                if junk is not None:
                    junk(ctx)
                got, want = ctx.get(dut.result), mul_model(op, x, y)
                checked.append(got)
                if got != want:
                    failures.append((op.name, hex(x), hex(y), hex(got), hex(want)))
    return testbench


def test_mul_unit_every_op():
    dut = MulUnit()
    assert dut.latency == 0
    pairs = mul_operands(random.Random(32), n_random=300)
    failures = []
    checked = []

    simulate(dut, _multiply_testbench(dut, pairs, checked, failures))
    assert len(checked) == len(MulOp) * len(pairs)
    assert not failures, failures[:10]


def test_mul_unit_shift_mode_every_amount():
    """``MulUnit(shifts=True)`` shifts like the shifters, whatever ``op`` and ``b`` hold."""
    dut = MulUnit(shifts=True)
    assert dut.shifts and dut.latency == 0
    rng = random.Random("mul-shift")
    values = shift_operands(32, rng, n_random=6)
    failures = []
    checked = []

    async def testbench(ctx):
        ctx.set(dut.shift, 1)
        for shift_op in ShiftOp:
            ctx.set(dut.shift_op, shift_op)
            for a in values:
                ctx.set(dut.a, a)
                for amount in range(32):
                    ctx.set(dut.op, rng.choice(list(MulOp)))        # ignored in shift mode
                    ctx.set(dut.b, rng.getrandbits(32))             # unused in shift mode
                    ctx.set(dut.amount, amount)
                    got, want = ctx.get(dut.result), shift_model(shift_op, a, amount, 32)
                    checked.append(got)
                    if got != want:
                        failures.append((shift_op.name, hex(a), amount, hex(got), hex(want)))

    simulate(dut, testbench)
    assert len(checked) == len(ShiftOp) * len(values) * 32
    assert not failures, failures[:10]


def test_mul_unit_with_shifts_multiplies_when_not_shifting():
    """With ``shift`` 0 the shift inputs (junk here) do not reach the multiply."""
    dut = MulUnit(shifts=True)
    rng = random.Random("mul-noshift")
    pairs = mul_operands(rng, n_random=100)
    failures = []
    checked = []

    def junk(ctx):
        ctx.set(dut.shift_op, rng.choice(list(ShiftOp)))
        ctx.set(dut.amount, rng.randrange(32))

    simulate(dut, _multiply_testbench(dut, pairs, checked, failures, junk))
    assert len(checked) == len(MulOp) * len(pairs)
    assert not failures, failures[:10]


def test_mul_unit_shift_ports_only_with_shifts():
    plain, shifting = MulUnit(), MulUnit(shifts=True)
    assert not plain.shifts
    assert set(plain.signature.members) == {"op", "a", "b", "result"}
    assert set(shifting.signature.members) == {"op", "a", "b", "shift", "shift_op", "amount",
                                               "result"}
    assert shifting.shift_op.shape() == ShiftOp
    assert len(shifting.amount) == 5
    with pytest.raises(TypeError, match=r"shifts must be a bool, not 1"):
        MulUnit(shifts=1)


# --- conversion and netlist structure ---------------------------------------------------------

_ALL_UNITS = [
    *[pytest.param(cls, {"width": w}, id=f"{cls.__name__}-{w}")
      for cls in (BarrelShifter, MultiplierShifter) for w in WIDTHS],
    pytest.param(Multiplier33, {}, id="Multiplier33"),
    pytest.param(MulUnit, {}, id="MulUnit"),
    pytest.param(MulUnit, {"shifts": True}, id="MulUnit-shifts"),
]


@pytest.mark.parametrize(("cls", "kwargs"), _ALL_UNITS)
def test_converts_to_verilog_without_warnings(cls, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = verilog.convert(cls(**kwargs), name="top")
    assert "module top" in text


def _mul_cells(component) -> list[dict[str, int]]:
    """Parameters of every ``$mul`` cell in the RTLIL of ``component``."""
    text = rtlil.convert(component, name="top")
    cells = []
    for body in re.findall(r"^\s*cell \$mul \S+\n(.*?)^\s*end$", text, re.M | re.S):
        cells.append({k: int(v) for k, v in re.findall(r"parameter \\(\w+) (\d+)", body)})
    return cells


@pytest.mark.parametrize("width", WIDTHS)
def test_multiplier_shifter_uses_a_multiplication(width):
    assert len(_mul_cells(MultiplierShifter(width=width))) == 1
    assert _mul_cells(BarrelShifter(width=width)) == []


def test_multiplier33_is_tiled_from_18x18_signed_products():
    cells = _mul_cells(Multiplier33())
    assert len(cells) == 4
    for cell in cells:
        # Each operand must fit a signed 18-bit DSP input: up to 18 bits signed, 17 unsigned.
        for port in "AB":
            assert cell[f"{port}_WIDTH"] <= 17 + cell[f"{port}_SIGNED"], cell
    assert len(_mul_cells(MulUnit())) == 4


def test_mul_unit_shift_mode_adds_no_multiplier():
    """The shift mode reuses the four 18x18 products: no other multiplication appears."""
    assert _mul_cells(MulUnit(shifts=True)) == _mul_cells(MulUnit())
