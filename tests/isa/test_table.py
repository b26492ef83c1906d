"""The instruction table against LLVM 19's own opcode list, and its internal consistency."""

from __future__ import annotations

import csv
from pathlib import Path

from gpgpu_hdl.isa.formats import ENCODING_OF, Format
from gpgpu_hdl.isa.table import TABLE, OpClass, Unit

REFERENCE = Path(__file__).parents[1] / "data" / "si_opcodes_llvm19.tsv"


def _reference_rows():
    with REFERENCE.open() as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _is_compute(row) -> bool:
    """Everything LLVM accepts for tahiti except graphics (VINTRP) and GDS/GWS-only DS ops."""
    name = row["mnemonic"]
    return row["format"] != "VINTRP" and not name.startswith("ds_gws") \
        and name != "ds_ordered_count"


def test_table_covers_exactly_llvm_compute_opcodes():
    expected = {}
    for row in filter(_is_compute, _reference_rows()):
        base = row["mnemonic"].removesuffix("_e32").removesuffix("_e64")
        fmt, op = Format(row["format"]), int(row["opcode"])
        if fmt is Format.VOP3 and base in {"v_add_i32", "v_sub_i32", "v_subrev_i32"}:
            # LLVM lists these VOP3b forms separately; the table derives them from VOP2
            assert TABLE.by_mnemonic(base).vop3_opcode == op
            continue
        expected[(fmt, op)] = base
    got = {e.key: e.mnemonic for e in TABLE}
    assert got == expected
    assert len(TABLE) == 712


def test_opcodes_fit_their_fields_and_vop3_space_is_consistent():
    for e in TABLE:
        assert 0 <= e.opcode <= ENCODING_OF[e.format].field("op").mask, e.mnemonic
        if e.vop3_opcode is not None:
            assert 0 <= e.vop3_opcode < 512
            assert TABLE.lookup(Format.VOP3, e.vop3_opcode) is e


def test_every_row_is_classified():
    classes = {e.op_class for e in TABLE}
    assert classes == set(OpClass)
    assert {e.unit for e in TABLE} == set(Unit)
    for e in TABLE:
        if e.format in (Format.DS, Format.MUBUF, Format.MTBUF, Format.SMRD):
            assert e.op_class in (OpClass.MEMORY, OpClass.CONTROL), e.mnemonic
        if e.unit in (Unit.FPU, Unit.FPU64):
            assert e.type in ("f32", "f64"), e.mnemonic


def test_implicit_state_follows_the_manual():
    by = TABLE.by_mnemonic
    assert by("s_add_u32").writes == {"scc"}
    assert by("s_addc_u32").reads == {"scc"}
    assert "scc" not in by("s_mov_b32").writes and "scc" not in by("s_mul_i32").writes
    assert by("s_and_saveexec_b64").writes == {"exec", "scc"}
    assert by("v_cmpx_lt_f32").writes == {"exec", "vcc"}
    assert by("v_addc_u32").reads >= {"vcc"} and "carry_in" in by("v_addc_u32").flags
    assert by("v_div_fmas_f32").reads >= {"vcc"}
    assert "m0" in by("ds_read_b32").reads
    assert "exec" not in by("v_readlane_b32").reads
    assert "exec" not in by("v_writelane_b32").reads     # writes its one lane whatever EXEC


def test_operand_widths_of_irregular_instructions():
    by = TABLE.by_mnemonic
    assert [str(t) for t in (by("v_lshl_b64").dst, by("v_lshl_b64").src0,
                             by("v_lshl_b64").src1)] == ["b64", "b64", "b32"]
    assert by("s_bcnt1_i32_b64").dst.bits == 32 and by("s_bcnt1_i32_b64").src0.bits == 64
    assert by("v_cvt_f64_i32").dst.name == "f64" and by("v_cvt_f64_i32").src0.name == "b32"
    assert by("v_cmp_class_f64").src1.bits == 32
    assert by("buffer_atomic_cmpswap_x2").src1.bits == 128
    assert by("ds_read2_b64").dst.bits == 128
    assert by("s_load_dwordx16").dst.bits == 512 and by("s_buffer_load_dword").src0.bits == 128
