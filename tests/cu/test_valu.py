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
import re
import warnings

import pytest
from amaranth.back import rtlil, verilog
from amaranth.hdl import Cat

from gpgpu_hdl.cu.shifter import SHIFTER_STYLES
from gpgpu_hdl.cu.valu import VALU_INT_OPS, FunnelShifter, IntLaneAlu, ValuOp
from gpgpu_hdl.emu.valu_ops import VALU_OPS
from gpgpu_hdl.isa.table import TABLE, Unit
from tests.bits import M32, M64
from tests.cu.valu_cases import (
    FAMILIES,
    N_RANDOM,
    Case,
    Results,
    cases_for,
    check,
    quick_cases_for,
)
from tests.simulation import simulate


# --- simulation -----------------------------------------------------------------------------

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
