"""Where an instruction's operands are: the operand codes of its sources and destinations,
from its words, its format and its decoded control word (:data:`~.decode.DecodedLayout`), and
the scalar values of the codes that are not registers (inline constants, the literal, the
special registers of the wave). Shared by the stages of the pipelined compute unit.
"""

import struct
from types import SimpleNamespace

from amaranth.hdl import Array, Cat, Const, Mux, Signal
from amaranth.lib import data

from ..isa.decoder import INLINE_FLOATS, ScalarCode
from ..isa.formats import ENCODING_OF, VOP3B, Encoding, Format
from ..isa.table import TABLE
from .decode import FORMAT_TAG, Spec, XUnit

__all__ = ["field", "operand_fields", "vop3_modifiers", "vop3_modifier_bits", "SCALAR_SOURCE",
           "scalar_source", "scalar_pick", "OPERANDS", "operand_codes", "INLINE_F32",
           "INLINE_F64_HI", "SETREG_IMM32"]

_VCC_LO, _M0, _EXEC_LO = int(ScalarCode.VCC_LO), int(ScalarCode.M0), int(ScalarCode.EXEC_LO)
_VCCZ, _EXECZ, _SCC, _LITERAL = (int(c) for c in (
    ScalarCode.VCCZ, ScalarCode.EXECZ, ScalarCode.SCC, ScalarCode.LITERAL))
#: Bits of the inline float constants (operand codes 240..247): f32, and the high dword of f64.
INLINE_F32 = [struct.unpack("<I", struct.pack("<f", INLINE_FLOATS[c]))[0] for c in range(240, 248)]
INLINE_F64_HI = [struct.unpack("<Q", struct.pack("<d", INLINE_FLOATS[c]))[0] >> 32
                 for c in range(240, 248)]
SETREG_IMM32 = next(i.opcode for i in TABLE if i.mnemonic == "s_setreg_imm32_b32")


def field(fmt: Format | Encoding, name: str, word):
    """Field ``name`` of format ``fmt`` in ``word``."""
    f = (fmt if isinstance(fmt, Encoding) else ENCODING_OF[fmt]).field(name)
    return word[f.lo:f.hi + 1]


#: The operand codes of :func:`operand_fields` as one value, for a stage to keep.
OPERANDS = data.StructLayout({"src": data.ArrayLayout(9, 3), "vdst": 9, "sdst": 8, "cin": 9,
                              "mask_dst": 8, "setreg_imm": 1})


def operand_codes(fields: SimpleNamespace):
    """:func:`operand_fields`' codes as a value of :data:`OPERANDS` (its fields in order)."""
    return Cat(*fields.src, fields.vdst, fields.sdst, fields.cin, fields.mask_dst,
               fields.setreg_imm)


def operand_fields(m, ir, fmt, ctl, *, name: str = "") -> SimpleNamespace:
    """The operand codes of instruction ``ir`` (64 bits: its two dwords, or one and the
    literal) of format tag ``fmt`` with control word ``ctl``, as combinational signals:

    * ``src``: three 9-bit source codes (256 + n for VGPR n; for VOP2 the third is VCC, the
      literal K or the accumulator);
    * ``vdst`` (8 bits), ``sdst`` (a scalar destination code), ``cin`` (the carry/select
      mask's code: VCC, or src2 of a VOP3 form), ``mask_dst`` (where a lane mask goes: VCC,
      or the VOP3 SDST);
    * ``has_lit``: a literal dword follows; ``setreg_imm``: ``s_setreg_imm32_b32`` (its
      immediate is a literal dword too).
    """
    w0 = ir[:32]
    src = [Signal(9, name=f"{name}src_code{i}") for i in range(3)]
    vdst = Signal(9, name=f"{name}vdst")
    sdst = Signal(8, name=f"{name}sdst")     # scalar destination code
    vop_src0 = ir[0:9]
    e32_vsrc1 = Cat(ir[9:17], Const(1, 1))
    vop3_src0, vop3_src1, vop3_src2 = ir[32:41], ir[41:50], ir[50:59]
    vop3_vdst, vop3_sdst = ir[0:8], ir[8:15]
    e32_vdst = ir[17:25]
    with m.Switch(fmt):
        for f, scode, sdcode in ((Format.SOP2, ("ssrc0", "ssrc1"), "sdst"),
                                 (Format.SOPC, ("ssrc0", "ssrc1"), None),
                                 (Format.SOP1, ("ssrc0",), "sdst"),
                                 (Format.SOPK, ("sdst",), "sdst")):
            with m.Case(FORMAT_TAG[f]):
                for i, fname in enumerate(scode):
                    m.d.comb += src[i].eq(field(f, fname, w0))
                if sdcode:
                    m.d.comb += sdst.eq(field(f, sdcode, w0))
        with m.Case(FORMAT_TAG[Format.SMRD]):
            m.d.comb += sdst.eq(field(Format.SMRD, "sdst", w0))
        with m.Case(FORMAT_TAG[Format.VOP1]):
            m.d.comb += [src[0].eq(vop_src0), vdst.eq(e32_vdst), sdst.eq(ir[17:24])]
        with m.Case(FORMAT_TAG[Format.VOP2]):
            # the third source: VCC (carry, select), the literal K (v_madmk/madak_f32) or the
            # old destination (v_mac_*)
            m.d.comb += [src[0].eq(vop_src0), src[1].eq(e32_vsrc1),
                         src[2].eq(Mux(ctl.lit_k, _LITERAL,
                                       Mux(ctl.acc, Cat(e32_vdst, Const(1, 1)), _VCC_LO))),
                         vdst.eq(e32_vdst), sdst.eq(ir[17:24])]
            with m.If(ctl.spec == Spec.V_READLANE):     # VSRC1 names the lane SGPR
                m.d.comb += src[1].eq(ir[9:17])
        with m.Case(FORMAT_TAG[Format.VOPC]):
            m.d.comb += [src[0].eq(vop_src0), src[1].eq(e32_vsrc1), sdst.eq(_VCC_LO)]
        with m.Case(FORMAT_TAG[Format.VOP3]):
            m.d.comb += [src[0].eq(vop3_src0), src[1].eq(vop3_src1),
                         src[2].eq(Mux(ctl.acc, Cat(vop3_vdst, Const(1, 1)), vop3_src2)),
                         vdst.eq(vop3_vdst),
                         sdst.eq(Mux(ctl.vopc, vop3_vdst, vop3_sdst))]
            # VOP3 of v_readlane/readfirstlane: the scalar destination is VDST
            with m.If(ctl.unit == XUnit.VSPEC):
                m.d.comb += sdst.eq(vop3_vdst)
    with m.If(ctl.rd_dst):
        m.d.comb += src[1].eq(sdst)
    # e32 carry/select: VCC; e64: src2 (the SGPR pair)
    cin = Signal(9, name=f"{name}cin_code")
    m.d.comb += cin.eq(Mux(ctl.e64, src[2], _VCC_LO))
    # vop3b / VOPC lane-mask destination
    mask_dst = Signal(8, name=f"{name}mask_dst")
    m.d.comb += mask_dst.eq(Mux(ctl.e64, Mux(ctl.vopc, vop3_vdst, vop3_sdst), _VCC_LO))

    has_lit = Signal(name=f"{name}has_lit")
    with m.Switch(fmt):
        with m.Case(FORMAT_TAG[Format.SOP2], FORMAT_TAG[Format.SOPC]):
            m.d.comb += has_lit.eq((w0[0:8] == _LITERAL) | (w0[8:16] == _LITERAL))
        with m.Case(FORMAT_TAG[Format.SOP1]):
            m.d.comb += has_lit.eq(w0[0:8] == _LITERAL)
        with m.Case(FORMAT_TAG[Format.VOP1], FORMAT_TAG[Format.VOP2],
                    FORMAT_TAG[Format.VOPC]):
            m.d.comb += has_lit.eq((vop_src0 == _LITERAL) | ctl.lit_k)
    setreg_imm = Signal(name=f"{name}is_setreg_imm")
    m.d.comb += setreg_imm.eq((fmt == FORMAT_TAG[Format.SOPK]) &
                              (field(Format.SOPK, "op", w0) == SETREG_IMM32))
    return SimpleNamespace(src=src, vdst=vdst, sdst=sdst, cin=cin, mask_dst=mask_dst,
                           has_lit=has_lit, setreg_imm=setreg_imm)


def vop3_modifier_bits(ir):
    """Whether the VOP3 fields of ``ir`` set a modifier, read as the VOP3a form (abs, clamp,
    omod, neg) and as the VOP3b form (omod, neg: its abs and clamp bits hold the scalar
    destination); which one counts is the control word's ``vop3b``
    (:func:`vop3_modifiers`)."""
    mods_a = Cat(field(Format.VOP3, n, ir) for n in ("abs", "clamp", "omod", "neg"))
    mods_b = Cat(field(VOP3B, n, ir) for n in ("omod", "neg"))
    return mods_a != 0, mods_b != 0


def vop3_modifiers(m, ir, ctl, *, name: str = ""):
    """1 when the VOP3 fields of ``ir`` set an input or output modifier (abs, clamp, omod,
    neg; the VOP3b form has no abs and no clamp: those bits hold its scalar destination).
    Meaningful for a VOP3 instruction only."""
    mods = Signal(name=f"{name}vop3_mods")
    mods_a, mods_b = vop3_modifier_bits(ir)
    m.d.comb += mods.eq(Mux(ctl.vop3b, mods_b, mods_a))
    return mods


#: Where a scalar operand's value comes from, known before the SGPR file answers
#: (:func:`scalar_source`): the file's answer (``reg``; the pair when ``wide``) or ``const`` (an
#: inline constant, the literal, the wave's EXEC, M0, SCC, EXECZ or VCCZ).
SCALAR_SOURCE = data.StructLayout({"reg": 1, "wide": 1, "const": 64})


def scalar_source(m, code, *, wide, isf, literal, exec_, m0, scc, vccz, name: str = ""):
    """Where the 64-bit value of scalar operand ``code`` (a 9-bit source code below 256)
    comes from (:data:`SCALAR_SOURCE`), from the wave's state (``vccz``: the SGPR file's
    :attr:`~.sgpr_file.SgprFile.vccz` bit of the wave): everything but the SGPR file's
    answer, so that it can be worked out while the file is read. A 32-bit operand is
    zero-extended (negative inline integers are sign-extended only when ``wide``); a float
    inline constant or literal of a 64-bit float operand is the high dword of the double."""
    src = Signal(SCALAR_SOURCE, name=f"{name}ssrc")
    value = src.const
    m.d.comb += src.wide.eq(wide)
    with m.If((code < 104) | (code == _VCC_LO) | (code == _VCC_LO + 1)):
        m.d.comb += src.reg.eq(1)
    with m.Elif(code == _M0):
        m.d.comb += value.eq(m0)
    with m.Elif(code == _EXEC_LO):
        m.d.comb += value.eq(Mux(wide, exec_, exec_[:32]))
    with m.Elif(code == _EXEC_LO + 1):
        m.d.comb += value.eq(exec_[32:])
    with m.Elif((code >= 128) & (code <= 192)):
        m.d.comb += value.eq(code - 128)
    with m.Elif((code >= 193) & (code <= 208)):
        neg = Signal(64, name=f"{name}sval_neg")
        m.d.comb += neg.eq(192 - code)
        m.d.comb += value.eq(Mux(wide, neg, neg[:32]))
    with m.Elif((code >= 240) & (code <= 247)):
        c32 = Array(Const(v, 32) for v in INLINE_F32)[code - 240]
        c64 = Array(Const(v, 32) for v in INLINE_F64_HI)[code - 240]
        m.d.comb += value.eq(Mux(wide, Cat(Const(0, 32), c64), c32))
    with m.Elif(code == _VCCZ):
        m.d.comb += value.eq(vccz)
    with m.Elif(code == _EXECZ):
        m.d.comb += value.eq(exec_ == 0)
    with m.Elif(code == _SCC):
        m.d.comb += value.eq(scc)
    with m.Elif(code == _LITERAL):
        m.d.comb += value.eq(Mux(wide & isf, Cat(Const(0, 32), literal), literal))
    return src


def scalar_pick(source, sgpr):
    """The value of the scalar operand whose :data:`SCALAR_SOURCE` is ``source``, given
    ``sgpr``: what the SGPR file returned for it (an SGPR or VCC, the register pair when
    wide)."""
    return Mux(source.reg, Mux(source.wide, sgpr, sgpr[:32]), source.const)
