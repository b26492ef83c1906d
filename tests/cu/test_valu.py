# amaranth: UnusedElaboratable=no
"""The integer vector ALU lane (:mod:`gpgpu_hdl.cu.valu`) against the golden model.

Every :data:`VALU_INT_OPS` instruction is driven through one simulation of the whole ALU with
corner and random operands, and each result is compared with :data:`VALU_OPS` evaluated on the
same operands as 64-lane numpy arrays. Inputs the instruction does not read (the upper half of
a 32-bit operand slot, unused slots, ``cin``, ``lane``) carry random junk, which must not
change the result.

The multiplies and shifts are also run for both shifter styles on three op subsets: multiplies
and shifts together (with the ``"multiplier"`` style the 32-bit shifts then run through the
multiplier of the multiplies), shifts only (a standalone shifter of the style) and multiplies
only.
"""

from __future__ import annotations

import functools
import itertools
import random
import re
import warnings
from typing import NamedTuple

import numpy as np
import pytest
from amaranth.back import rtlil, verilog
from amaranth.hdl import Cat

from gpgpu_hdl.cu.shifter import SHIFTER_STYLES
from gpgpu_hdl.cu.valu import VALU_INT_OPS, FunnelShifter, IntLaneAlu, ValuOp
from gpgpu_hdl.emu.context import LaneContext
from gpgpu_hdl.emu.valu_ops import VALU_OPS
from gpgpu_hdl.isa.formats import Format
from gpgpu_hdl.isa.table import TABLE, Unit
from tests.bits import M32, M64
from tests.golden import lane_outputs, waves
from tests.simulation import Vector, simulate

#: 32-bit corner operands: zero, one, all ones, the sign bits of 32/24/16/8 bits and their
#: neighbours, byte patterns.
CORNERS32 = (0, 1, M32, 0x8000_0000, 0x7FFF_FFFF, 0xFFFF, 0x80_0000, 0x7F_FFFF, 0xFF_FFFF,
             0xFF80_0000, 0x1_0000, 0x8000, 0x7FFF, 0xFFFF_8000, 0xFFFF_7FFF, 0x80, 0xFF, 2,
             0x0101_0101, 0xFF00_FF00, 0x1F, 0x20)
#: 64-bit corners, including pairs equal in one half only.
CORNERS64 = (0, 1, M64, 1 << 63, M64 >> 1, M32, 1 << 32, 0x8000_0000, 0xFFFF_FFFF_0000_0000,
             0x8000_0000_FFFF_FFFF, 0x1_0000_0001, 0xFFFF_FFFF_8000_0000, 0x7FFF_FFFF_0000_0000)
N_RANDOM = 64
#: Vectors per instruction in the simulation of the whole ALU.
N_QUICK = 40


# --- operands -----------------------------------------------------------------------------

def source_bits(name: str) -> list[int]:
    """Widths of the source operands the golden model takes (the carry/select SGPR pair of
    ``v_cndmask_b32``/``v_addc_u32``/... is the ``cin`` input, not a source)."""
    info = TABLE.by_mnemonic(name)
    slots = [info.src0, info.src1, info.src2]
    if info.flags & {"carry_in", "sel"}:
        slots[2] = None
    return [0 if t is None else t.bits for t in slots]


def takes_cin(name: str) -> bool:
    return bool(TABLE.by_mnemonic(name).flags & {"carry_in", "sel"})


def random_value(rng: random.Random, bits: int) -> int:
    """Random operand biased towards the interesting: corners, small, 24-bit, sparse bytes."""
    kind = rng.randrange(6)
    if kind == 0:
        return rng.choice(CORNERS64 if bits == 64 else CORNERS32)
    if kind == 1:
        return rng.randrange(64)
    if kind == 2:          # a 24-bit value, sign-extended half of the time
        v = rng.getrandbits(24)
        return v | (((1 << bits) - 1) ^ 0xFF_FFFF) * (rng.getrandbits(1) & v >> 23)
    if kind == 3:          # some bytes zero (masked SADs), some 0xFF
        return sum(rng.choice((0, 0xFF, rng.getrandbits(8))) << (8 * i) for i in range(bits // 8))
    return rng.getrandbits(bits)


def operand_tuples(name: str, rng: random.Random) -> list[tuple[int, ...]]:
    """The (src0, src1, src2, cin, lane) values the golden model sees, for one instruction."""
    bits = source_bits(name)
    n_src = sum(1 for w in bits if w)

    def corners(w):
        return CORNERS64 if w == 64 else CORNERS32

    def rnd(w):
        return random_value(rng, w) if w else 0

    def junk(n, above):
        """Half of the time, random bits above the ``above`` bits an amount or width uses."""
        return rng.getrandbits(n) << above if rng.getrandbits(1) else 0

    if family(name) == "shift" and n_src == 2:          # every amount 0..63, junk above
        w = bits[1] if "rev" in name else bits[0]
        values = [*corners(w)[:6], rng.getrandbits(w), rng.getrandbits(w)]
        pairs = [(v, amount | junk(26, 6)) for v in values for amount in range(64)]
        if "rev" in name:
            pairs = [(amount, v) for v, amount in pairs]
        base = [(x, y, 0) for x, y in pairs]
    elif name in ("v_bfe_u32", "v_bfe_i32"):          # every offset and width
        base = [(rng.choice((rng.getrandbits(32), M32, 0x8000_0000, 0x7FFF_FFFF)),
                 off | junk(27, 5), width | junk(27, 5))
                for off in range(32) for width in range(32)]
    elif name == "v_bfm_b32":
        base = [(width | junk(27, 5), off | junk(27, 5), 0)
                for off in range(32) for width in range(32)]
    elif name in ("v_alignbit_b32", "v_alignbyte_b32"):
        pairs = [(rng.getrandbits(32), rng.getrandbits(32)) for _ in range(3)]
        pairs += [(M32, 0), (0, M32), (0x8000_0001, 0x8000_0001)]
        base = [(x, y, amount | rng.getrandbits(26) << 6)
                for x, y in pairs for amount in range(64)]
    elif n_src == 1:
        base = [(v, 0, 0) for v in CORNERS32]
        base += [(1 << i, 0, 0) for i in range(32)] + [(M32 >> i, 0, 0) for i in range(32)]
        base += [(M32 << i & M32, 0, 0) for i in range(32)]
    elif n_src == 2:
        base = [(x, y, 0) for x in corners(bits[0]) for y in corners(bits[1])]
    else:
        triples = list(itertools.product(*(corners(w)[:9] for w in bits)))
        base = rng.sample(triples, 192)

    tuples = []
    for s0, s1, s2 in base:
        if takes_cin(name):
            tuples += [(s0, s1, s2, 0, rng.randrange(64)), (s0, s1, s2, 1, rng.randrange(64))]
        else:
            tuples.append((s0, s1, s2, rng.getrandbits(1), rng.randrange(64)))
    if name.startswith("v_mbcnt"):
        for v in (M32, 0x5555_5555, 0x8000_0001, rng.getrandbits(32)):
            tuples += [(v, rng.choice((0, 7, M32)), 0, rng.getrandbits(1), lane)
                       for lane in range(64)]
    for _ in range(N_RANDOM):
        values = [rnd(w) for w in bits]
        if bits[0] == bits[1] and rng.getrandbits(2) == 0:   # equal operands, or halves
            values[1] = values[0] ^ (rng.choice((0, rng.getrandbits(32), rng.getrandbits(32) << 32))
                                     if bits[0] == 64 else 0)
        tuples.append((*values, rng.getrandbits(1), rng.randrange(64)))
    return tuples


def hardware_vector(name: str, operands: tuple[int, ...], rng: random.Random) -> Vector:
    """The ALU inputs for golden-model operands (``src0`` to ``src2``, ``cin``, ``lane``): junk
    wherever the instruction does not look."""
    bits = source_bits(name)
    srcs = [v if w == 64 else v | rng.getrandbits(64 - w) << w
            for v, w in zip(operands[:3], bits, strict=True)]
    return Vector(name, *srcs, cin=operands[3], lane=operands[4])


# --- the golden model ------------------------------------------------------------------------

def golden(name: str, operands: list[tuple[int, ...]]) -> list[tuple[int, int]]:
    """(result, flag) of the golden model for each operand tuple, evaluated 64 lanes at a time.

    VOPC compares give result 0 and the compare as flag; the ``vop3b`` add/subtract family its
    carry or borrow as flag; every other instruction flag 0.
    """
    fn = VALU_OPS[name]
    bits = source_bits(name)
    out = []
    for chunk, padded in waves(operands):
        cols = list(zip(*padded, strict=True))
        srcs = [np.array(cols[i], dtype=np.uint64 if w == 64 else np.uint32)
                for i, w in enumerate(bits) if w]
        extra = [np.array(cols[3], dtype=bool)] if takes_cin(name) else []
        ctx = LaneContext(lane=np.array(cols[4], dtype=np.uint32))
        out += lane_outputs(fn(ctx, *srcs, *extra))[:len(chunk)]
    return out


class Case(NamedTuple):
    vector: Vector
    want: tuple[int, int]


@functools.cache
def cases_for(name: str) -> tuple[Case, ...]:
    """The full set of test vectors of one instruction, with the golden model's outputs."""
    rng = random.Random(name)
    operands = operand_tuples(name, rng)
    wants = golden(name, operands)
    return tuple(Case(hardware_vector(name, ops, rng), want)
                 for ops, want in zip(operands, wants, strict=True))


def quick_cases_for(name: str) -> tuple[Case, ...]:
    """A sample of :func:`cases_for`, for the simulation of the whole ALU."""
    cases = cases_for(name)
    return tuple(random.Random(name).sample(cases, min(N_QUICK, len(cases))))


Results = dict[str, tuple[tuple[Case, ...], list[tuple[int, int]]]]


def run(alu: IntLaneAlu, cases: dict[str, tuple[Case, ...]]) -> Results:
    """Simulate ``alu`` over ``cases``; per mnemonic the cases and the ALU's (result, flag)."""
    got = {name: [] for name in cases}
    # One assignment per vector: the simulator settles once instead of once per port.
    inputs = Cat(alu.src0, alu.src1, alu.src2, alu.cin, alu.lane)
    outputs = Cat(alu.result, alu.flag)

    async def testbench(ctx):
        for name, name_cases in cases.items():
            ctx.set(alu.op, ValuOp[name.removeprefix("v_").upper()])
            for case in name_cases:
                v = case.vector
                ctx.set(inputs, v.src0 | v.src1 << 64 | v.src2 << 128 | v.cin << 192
                        | v.lane << 193)
                out = ctx.get(outputs)
                got[name].append((out & M64, out >> 64))

    simulate(alu, testbench)
    return {name: (cases[name], got[name]) for name in cases}


def check(name: str, results: Results) -> None:
    cases, got = results[name]
    assert len(got) == len(cases) > 0
    failures = [(c.vector.describe(), f"got=({g[0]:#x}, {g[1]})",
                 f"want=({c.want[0]:#x}, {c.want[1]})")
                for c, g in zip(cases, got, strict=True) if g != c.want]
    assert not failures, f"{len(failures)}/{len(cases)} wrong, e.g. {failures[:5]}"


def family(name: str) -> str:
    """Test group of an instruction: its table subunit, with the compares apart."""
    info = TABLE.by_mnemonic(name)
    return "cmp" if info.format is Format.VOPC else info.subunit


FAMILIES = {f: tuple(n for n in VALU_INT_OPS if family(n) == f)
            for f in dict.fromkeys(map(family, VALU_INT_OPS))}


#: The op groups of the ``group_results`` fixture (``tests/conftest.py``).
GROUPS = FAMILIES


def run_group(names) -> Results:
    """Every instruction of ``names`` with its full vector set, on an ALU built for those only
    (a small ALU simulates several times faster than the whole one)."""
    return run(IntLaneAlu(ops=names), {n: cases_for(n) for n in names})


@pytest.fixture(scope="module", params=SHIFTER_STYLES)
def full_alu_results(request) -> Results:
    return run(IntLaneAlu(shifter=request.param), {n: quick_cases_for(n) for n in VALU_INT_OPS})


#: Op subsets run with both shifter styles: with ``"multiplier"``, ``"mul+shift"`` runs the 32-bit
#: shifts and ``v_bfe_*`` through the multiplier of the multiplies, ``"shift"`` builds a standalone
#: multiplier shifter, ``"mul"`` no shifter at all.
SUBSETS = {
    "mul+shift": FAMILIES["mul"] + FAMILIES["shift"],
    "shift": FAMILIES["shift"],
    "mul": FAMILIES["mul"],
}


@functools.cache
def subset_results(style: str, subset: str) -> Results:
    """Every instruction of a subset with its full vector set (every shift amount 0 to 63 on
    corner and random values; every bfe offset and width), on an ALU built for that subset."""
    names = SUBSETS[subset]
    return run(IntLaneAlu(ops=names, shifter=style), {n: cases_for(n) for n in names})


# --- every instruction against the golden model -------------------------------------------------

@pytest.mark.parametrize("name", VALU_INT_OPS)
def test_op_matches_golden(name, group_results):
    assert len(group_results[name][0]) > N_RANDOM
    check(name, group_results)


@pytest.mark.parametrize("name", VALU_INT_OPS)
def test_op_matches_golden_in_full_alu(name, full_alu_results):
    check(name, full_alu_results)


@pytest.mark.parametrize(("style", "subset", "name"), [
    pytest.param(style, subset, name, id=f"{style}-{subset}-{name}")
    for style in SHIFTER_STYLES for subset, names in SUBSETS.items() for name in names])
def test_op_matches_golden_by_shifter_style(style, subset, name):
    alu = IntLaneAlu(ops=SUBSETS[subset], shifter=style)
    assert alu.shift32_in_mul == (style == "multiplier" and subset == "mul+shift")
    check(name, subset_results(style, subset))


def test_shift_vectors_cover_every_amount_and_corner():
    """The vectors of the style tests: every amount with 0, 1, -1, the extreme signed values
    and random values, for each shift; every (offset, width) for each bit-field extract."""
    for name in ("v_lshl_b32", "v_lshrrev_b32", "v_ashr_i32", "v_ashrrev_i32", "v_ashr_i64"):
        wide = name.endswith("64")
        m = M64 if wide else M32
        value_slot, amount_slot = (1, 0) if "rev" in name else (0, 1)
        pairs = {(c.vector.srcs[value_slot] & m, c.vector.srcs[amount_slot] & (63 if wide else 31))
                 for c in cases_for(name)}
        corners = (0, 1, m, m ^ (m >> 1), m >> 1)
        for amount in range(64 if wide else 32):
            assert {(v, amount) for v in corners} <= pairs, (name, amount)
        assert len({v for v, _ in pairs}) >= len(corners) + 2, name
    fields = {(c.vector.src1 & 31, c.vector.src2 & 31) for c in cases_for("v_bfe_i32")}
    assert fields == {(off, width) for off in range(32) for width in range(32)}


def test_families_cover_every_op():
    assert set(FAMILIES) == {"cmp", "alu", "mul", "shift"}
    assert sorted(n for names in FAMILIES.values() for n in names) == sorted(VALU_INT_OPS)


def test_subset_alu_matches_golden_and_leaves_other_ops_zero():
    built = ("v_add_i32", "v_mad_u32_u24", "v_cmp_lt_i64", "v_ffbl_b32", "v_sad_u32")
    results = run(IntLaneAlu(ops=built), {n: quick_cases_for(n) for n in VALU_INT_OPS})
    for name in VALU_INT_OPS:
        if name in built:
            check(name, results)
        else:
            assert set(results[name][1]) == {(0, 0)}, name


# --- the op list and the enum -------------------------------------------------------------------

def test_valu_int_ops_is_the_table_minus_core_ops():
    core = {"v_nop", "v_clrexcp", "v_mov_b32", "v_readlane_b32", "v_readfirstlane_b32",
            "v_movrels_b32", "v_movreld_b32", "v_movrelsd_b32"}
    not_built = {"v_writelane_b32"}           # the CU does not implement it: it traps as illegal
    valu = [e.mnemonic for e in TABLE if e.unit is Unit.VALU]
    assert list(VALU_INT_OPS) == [n for n in valu if n not in core | not_built]
    assert core | not_built <= set(valu)
    assert all(TABLE.by_mnemonic(n).subunit != "lane" for n in VALU_INT_OPS)
    assert set(VALU_INT_OPS) <= set(VALU_OPS)
    for required in ("v_cmpx_ge_u64", "v_cndmask_b32", "v_mbcnt_hi_u32_b32", "v_ashr_i64",
                     "v_mqsad_pk_u16_u8", "v_lerp_u8", "v_cvt_pk_i16_i32", "v_alignbyte_b32",
                     "v_med3_u32", "v_mad_i32_i24", "v_mul_hi_i32"):
        assert required in VALU_INT_OPS


def test_valu_op_enum():
    members = list(ValuOp)
    assert [m.mnemonic for m in members] == list(VALU_INT_OPS)
    assert [m.value for m in members] == list(range(len(VALU_INT_OPS)))
    assert ValuOp.as_shape().width == (len(VALU_INT_OPS) - 1).bit_length()
    assert not ValuOp.as_shape().signed
    assert ValuOp.ADD_I32.mnemonic == "v_add_i32"
    assert ValuOp["MQSAD_PK_U16_U8"].name == "MQSAD_PK_U16_U8"


# --- construction, structure, conversion --------------------------------------------------------

def _hierarchy(alu: IntLaneAlu) -> set[str]:
    """Submodule paths below the top in the Verilog of ``alu`` (``mul``, ``mul.mul33``, ...)."""
    text = verilog.convert(alu, name="top", emit_src=False)
    return {name.removeprefix("top.") for name in re.findall(r"^module \\?(\S+) ?\(", text, re.M)
            if name != "top"}


@pytest.mark.parametrize("style", SHIFTER_STYLES)
@pytest.mark.parametrize("name", VALU_INT_OPS)
def test_single_op_builds_only_its_unit(name, style):
    info = TABLE.by_mnemonic(name)
    alu = IntLaneAlu(ops=[name], shifter=style)
    assert not alu.shift32_in_mul
    units = alu.units
    if info.subunit == "mul":
        assert units == {"mul"}
    elif info.subunit == "shift":
        want = {"v_alignbit_b32": "align", "v_alignbyte_b32": "align", "v_lshl_b64": "shift64",
                "v_lshr_b64": "shift64", "v_ashr_i64": "shift64"}.get(name, "shift32")
        assert units == {want}
    else:
        assert units == frozenset()


@pytest.mark.parametrize(("ops", "units"), [
    ((), set()),
    (("v_add_i32", "v_and_b32", "v_cmp_lt_u64", "v_sad_u8", "v_bfm_b32"), set()),
    (("v_mul_lo_u32", "v_mad_i32_i24"), {"mul", "mul.mul33"}),
    (("v_lshl_b32", "v_bfe_i32"), {"shift32"}),
    (("v_ashr_i64",), {"shift64"}),
    (("v_alignbyte_b32",), {"align"}),
    (None, {"mul", "mul.mul33", "shift32", "shift64", "align"}),
])
def test_hierarchy_has_only_the_needed_units(ops, units):
    alu = IntLaneAlu() if ops is None else IntLaneAlu(ops=ops)
    assert _hierarchy(alu) == units
    assert alu.units == {u for u in units if "." not in u}
    assert alu.ops == (frozenset(VALU_INT_OPS) if ops is None else frozenset(ops))
    assert not alu.shift32_in_mul


def _mul_cell_count(alu: IntLaneAlu) -> int:
    """Number of ``$mul`` cells in the RTLIL of ``alu`` (four per 33x33 multiplier)."""
    return len(re.findall(r"^\s*cell \$mul ", rtlil.convert(alu, name="top"), re.M))


_MULS = ("v_mul_lo_u32", "v_mad_i32_i24")


@pytest.mark.parametrize(("ops", "style", "units", "shared", "mul_cells"), [
    # The multiplier-style 32-bit shifter goes into the multiplier whenever there is one ...
    (None, "multiplier", {"mul", "mul.mul33", "shift64", "align"}, True, 4 + 1),
    ((*_MULS, "v_lshl_b32"), "multiplier", {"mul", "mul.mul33"}, True, 4),
    ((*_MULS, "v_bfe_i32"), "multiplier", {"mul", "mul.mul33"}, True, 4),
    ((*_MULS, "v_ashrrev_i32", "v_ashr_i64"), "multiplier", {"mul", "mul.mul33", "shift64"},
     True, 4 + 1),
    # ... and stands alone without one; the 64-bit shifts never share.
    (("v_lshl_b32", "v_bfe_i32"), "multiplier", {"shift32"}, False, 1),
    ((*_MULS, "v_lshr_b64"), "multiplier", {"mul", "mul.mul33", "shift64"}, False, 4 + 1),
    (_MULS, "multiplier", {"mul", "mul.mul33"}, False, 4),
    # A barrel shifter never shares.
    ((*_MULS, "v_lshl_b32"), "barrel", {"mul", "mul.mul33", "shift32"}, False, 4),
    (None, "barrel", {"mul", "mul.mul33", "shift32", "shift64", "align"}, False, 4),
])
def test_multiplier_shifter_shares_the_multiplier(ops, style, units, shared, mul_cells):
    alu = IntLaneAlu(shifter=style) if ops is None else IntLaneAlu(ops=ops, shifter=style)
    assert alu.shift32_in_mul is shared
    assert _hierarchy(alu) == units
    assert alu.units == {u for u in units if "." not in u}
    assert _mul_cell_count(alu) == mul_cells


def test_properties():
    alu = IntLaneAlu(shifter="multiplier")
    assert alu.latency == 0
    assert alu.shifter == "multiplier"
    assert alu.shift32_in_mul is True
    assert isinstance(alu.ops, frozenset)
    assert IntLaneAlu().shifter == "barrel"
    assert IntLaneAlu().shift32_in_mul is False
    assert FunnelShifter().latency == 0


@pytest.mark.parametrize("ops", [["v_add_i32", "v_foo"], ["v_mov_b32"], ["v_add_f32"],
                                 ["V_ADD_I32"], [ValuOp.ADD_I32]])
def test_rejects_unknown_op(ops):
    with pytest.raises(ValueError, match=r"ops must be integer vector ALU mnemonics "
                                         r"\(VALU_INT_OPS\); unknown: "):
        IntLaneAlu(ops=ops)


def test_rejects_string_ops():
    with pytest.raises(ValueError, match=r"ops must be an iterable of mnemonics, not the string"):
        IntLaneAlu(ops="v_add_i32")


@pytest.mark.parametrize("style", ["dsp", "Barrel", "", None])
def test_rejects_unknown_shifter(style):
    with pytest.raises(ValueError, match=r"shifter must be one of 'barrel', 'multiplier', not "):
        IntLaneAlu(shifter=style)


@pytest.mark.parametrize("style", SHIFTER_STYLES)
def test_converts_to_verilog_without_warnings(style):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = verilog.convert(IntLaneAlu(shifter=style), name="valu", emit_src=False)
    assert "module valu(" in text
    for port in ("op", "src0", "src1", "src2", "cin", "lane", "result", "flag"):
        assert re.search(rf"\b(input|output) .*\b{port};", text), port
