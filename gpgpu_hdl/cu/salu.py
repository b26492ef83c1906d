"""The scalar ALU of the compute unit: every SOP1, SOP2, SOPC and SOPK data operation.

:data:`SALU_ALU_OPS` lists the scalar instructions this unit executes: the instruction table's
``salu`` entries that the golden model implements as pure data operations
(:data:`gpgpu_hdl.emu.salu.SALU_OPS` and :data:`gpgpu_hdl.emu.salu.SAVEEXEC_OPS`). The other
``salu`` entries read or write the PC, M0-relative registers or hardware registers
(``s_getpc_b64``, ``s_setpc_b64``, ``s_swappc_b64``, ``s_rfe_b64``, ``s_movrels_*``,
``s_movreld_*``, ``s_getreg_b32``, ``s_setreg_b32``, ``s_setreg_imm32_b32``) or are
control-flow forks (``s_cbranch_join``, ``s_cbranch_g_fork``, ``s_cbranch_i_fork``,
``s_setvskip``); the core's sequencer executes those itself.

:class:`ScalarAlu` computes one operation per cycle, combinationally. Its results equal
:data:`~gpgpu_hdl.emu.salu.SALU_OPS` / :data:`~gpgpu_hdl.emu.salu.SAVEEXEC_OPS` bit for bit,
with the operands bound the way the golden model's program compiler
(:mod:`gpgpu_hdl.emu.program`) binds them; see :class:`ScalarAlu` for that convention.
Only the datapaths of the operations it is asked to build are elaborated, so that an
application-trimmed core carries no multiplier or shifter it does not use.
"""

import types

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..emu.salu import SALU_OPS, SAVEEXEC_OPS
from ..isa.formats import Format
from ..isa.table import TABLE, InstrInfo, Unit
from .multiplier import MulOp, MulUnit
from .shifter import SHIFTER_STYLES, ShiftOp, make_shifter

__all__ = ["SALU_ALU_OPS", "SALU_CORE_OPS", "CONDITIONAL_WRITES", "SaluOp", "ALU_PORTS",
           "ScalarAlu"]

_SALU_FORMATS = (Format.SOP1, Format.SOP2, Format.SOPC, Format.SOPK)

#: Mnemonics of the operations :class:`ScalarAlu` implements, in instruction-table order.
SALU_ALU_OPS: tuple[str, ...] = tuple(
    info.mnemonic for info in TABLE
    if info.unit is Unit.SALU and info.format in _SALU_FORMATS
    and (info.mnemonic in SALU_OPS or info.mnemonic in SAVEEXEC_OPS))

#: Mnemonics of the scalar-unit instructions the core's sequencer executes instead (control
#: flow, PC, M0-relative moves, hardware registers), in instruction-table order.
SALU_CORE_OPS: tuple[str, ...] = tuple(
    info.mnemonic for info in TABLE
    if info.unit is Unit.SALU and info.mnemonic not in SALU_ALU_OPS)


def _member_name(mnemonic: str) -> str:
    return mnemonic.removeprefix("s_").upper()


def _salu_op_doc() -> str:
    lines = [
        "Operation selector of :class:`ScalarAlu`: one member per :data:`SALU_ALU_OPS` entry.",
        "",
        "Each member is the mnemonic upper-cased without its ``s_`` prefix; its value is the",
        "mnemonic's index in :data:`SALU_ALU_OPS` (instruction-table order), not an opcode.",
        "",
        "Members",
        "-------",
    ]
    for mnemonic in SALU_ALU_OPS:
        lines += [_member_name(mnemonic), f"    ``{mnemonic}``."]
    return "\n".join(lines)


def _make_salu_op() -> type:
    # The functional API (``enum.Enum("SaluOp", names)``) cannot pass ``shape=`` in Amaranth
    # 0.5.10, and without a shape it silently returns a plain Python enum (no EnumView, no
    # declared shape). Creating the class through its metaclass keeps both.
    members = [(_member_name(m), index) for index, m in enumerate(SALU_ALU_OPS)]
    shape = max(1, (len(members) - 1).bit_length())

    def body(namespace):
        namespace["__module__"] = __name__
        namespace["__qualname__"] = "SaluOp"
        namespace["__doc__"] = _salu_op_doc()
        for name, value in members:
            namespace[name] = value

    return types.new_class("SaluOp", (enum.Enum,), {"shape": shape}, body)


#: Operation selector of :class:`ScalarAlu` (an :class:`amaranth.lib.enum.Enum`).
SaluOp = _make_salu_op()


# --- decoded control ---------------------------------------------------------------------------

class _Src(enum.Enum, shape=5):
    """Datapath whose output is the destination value."""

    NONE = 0        # compares: no destination
    ADD = 1         # 32-bit adder/subtractor
    NEG = 2         # negator: s_abs_i32, s_absdiff_i32
    MUL = 3         # MulUnit
    SHIFT = 4       # shifter
    BFE = 5         # shifter + field mask / sign fill
    LOGIC = 6       # bitwise two-operand logic
    SELECT = 7      # 2:1 multiplexer of a and b (moves, selects, min/max)
    BITS = 8        # a, optionally complemented, optionally bit-reversed (s_not, s_brev)
    COUNT = 9       # population count (s_bcnt0/1)
    FIND = 10       # trailing-zero count of BITS, -1 when none (s_ff0/1, s_flbit)
    WQM = 11
    QUADMASK = 12
    BFM = 13
    BITSET = 14
    SEXT = 15
    EXEC = 16       # the old EXEC (saveexec)


class _Scc(enum.Enum, shape=3):
    """Source of the new SCC (``NONE``: SCC is left alone)."""

    NONE = 0
    NZ = 1          # result != 0
    EXEC_NZ = 2     # new EXEC != 0
    CARRY = 3
    BORROW = 4
    OVERFLOW = 5
    COND = 6        # compare condition
    BIT = 7         # tested bit (s_bitcmp0/1)


class _Cond(enum.Enum, shape=3):
    EQ = 0
    LG = 1
    GT = 2
    GE = 3
    LT = 4
    LE = 5


class _Pick(enum.Enum, shape=2):
    """When the SELECT multiplexer takes ``a`` (else ``b``)."""

    A = 0
    B = 1
    SCC = 2
    COND = 3


class _Logic(enum.Enum, shape=2):
    AND = 0
    OR = 1
    XOR = 2


#: Control word decoded from :class:`SaluOp`. Fields an operation does not use are 0.
_control_layout = data.StructLayout({
    "src": _Src,
    "scc": _Scc,
    "wide": 1,          # the operation is 64 bits wide (max of destination and SSRC0 width)
    "dst64": 1,         # the destination is 64 bits (else the result is zero-extended)
    "write_d": 1,       # writes its destination
    "cond_d": 1,        # writes its destination when SCC is 1 (s_cmov, s_cmovk)
    "sopk": 1,          # b carries a SIMM16
    "simm_zext": 1,     # the SIMM16 is zero-extended (else sign-extended)
    "sub": 1,           # the adder subtracts b (s_absdiff_i32 when src is NEG)
    "cin_scc": 1,       # the adder's carry-in (borrow-in) is SCC
    "signed": 1,        # signed compare, signed bit-field extract, s_flbit_i32*
    "cond": _Cond,
    "pick": _Pick,
    "logic": _Logic,
    "inv_b": 1,         # logic: complement b (andn2, orn2)
    "inv_out": 1,       # logic: complement the result (nand, nor, xnor)
    "saveexec": 1,      # logic: b is EXEC; the logic result is the new EXEC
    "invert": 1,        # complement: ff0/bcnt0/not count or return zeros, bitcmp0, bitset0
    "from_top": 1,      # BITS/FIND: bit-reverse (s_brev, s_flbit)
    "shift": ShiftOp,
    "sext16": 1,        # s_sext_i32_i16 (else i8)
})

_LOGIC = {
    "and": (_Logic.AND, 0, 0), "or": (_Logic.OR, 0, 0), "xor": (_Logic.XOR, 0, 0),
    "andn2": (_Logic.AND, 1, 0), "orn2": (_Logic.OR, 1, 0), "nand": (_Logic.AND, 0, 1),
    "nor": (_Logic.OR, 0, 1), "xnor": (_Logic.XOR, 0, 1),
}
_SHIFTS = {"lshl": ShiftOp.SHL, "lshr": ShiftOp.LSHR, "ashr": ShiftOp.ASHR}
_ADDS = {"add_u32": _Scc.CARRY, "addc_u32": _Scc.CARRY, "sub_u32": _Scc.BORROW,
         "subb_u32": _Scc.BORROW, "add_i32": _Scc.OVERFLOW, "sub_i32": _Scc.OVERFLOW,
         "addk_i32": _Scc.OVERFLOW}


def _control(info: InstrInfo) -> dict:
    """The control word of one operation, from its mnemonic and its table row."""
    name = info.mnemonic.removeprefix("s_")
    kind, *rest = name.split("_")
    bits = max(t.bits for t in (info.dst, info.src0) if t is not None)
    c = {"wide": int(bits == 64), "dst64": int(info.dst is not None and info.dst.bits == 64),
         "write_d": int(info.dst is not None), "sopk": int(info.format is Format.SOPK),
         "scc": _Scc.NZ if "scc" in info.writes else _Scc.NONE}
    if info.mnemonic in SAVEEXEC_OPS:
        logic, inv_b, inv_out = _LOGIC[kind]
        c.update(src=_Src.EXEC, scc=_Scc.EXEC_NZ, saveexec=1, logic=logic, inv_b=inv_b,
                 inv_out=inv_out)
    elif kind in _LOGIC:
        logic, inv_b, inv_out = _LOGIC[kind]
        c.update(src=_Src.LOGIC, logic=logic, inv_b=inv_b, inv_out=inv_out)
    elif name in _ADDS:
        c.update(src=_Src.ADD, scc=_ADDS[name], sub=int(kind in ("sub", "subb")),
                 cin_scc=int(kind in ("addc", "subb")))
    elif kind in ("cmp", "cmpk"):
        c.update(src=_Src.NONE, scc=_Scc.COND, sub=1, cond=_Cond[rest[0].upper()],
                 signed=int(rest[1] == "i32"), simm_zext=int(rest[1] == "u32"))
    elif kind in ("min", "max"):
        c.update(src=_Src.SELECT, scc=_Scc.COND, sub=1, pick=_Pick.COND,
                 cond=_Cond.LT if kind == "min" else _Cond.GT, signed=int(rest[0] == "i32"))
    elif kind == "absdiff":
        c.update(src=_Src.NEG, sub=1, signed=1)
    elif kind == "abs":
        c.update(src=_Src.NEG)
    elif kind in ("mul", "mulk"):
        c.update(src=_Src.MUL)
    elif kind in _SHIFTS:
        c.update(src=_Src.SHIFT, shift=_SHIFTS[kind])
    elif kind == "bfe":
        c.update(src=_Src.BFE, shift=ShiftOp.LSHR, signed=int(rest[0].startswith("i")))
    elif kind == "bfm":
        c.update(src=_Src.BFM)
    elif kind in ("mov", "movk"):
        c.update(src=_Src.SELECT, pick=_Pick.B if kind == "movk" else _Pick.A)
    elif kind in ("cmov", "cmovk"):
        c.update(src=_Src.SELECT, pick=_Pick.B if kind == "cmovk" else _Pick.A, write_d=0,
                 cond_d=1)
    elif kind == "cselect":
        c.update(src=_Src.SELECT, pick=_Pick.SCC)
    elif kind in ("not", "brev"):
        c.update(src=_Src.BITS, invert=int(kind == "not"), from_top=int(kind == "brev"))
    elif kind in ("wqm", "quadmask"):
        c.update(src=_Src[kind.upper()])
    elif kind in ("bcnt0", "bcnt1"):
        c.update(src=_Src.COUNT, invert=int(kind == "bcnt0"))
    elif kind in ("ff0", "ff1"):
        c.update(src=_Src.FIND, invert=int(kind == "ff0"))
    elif kind == "flbit":
        c.update(src=_Src.FIND, from_top=1, signed=int(name in ("flbit_i32", "flbit_i32_i64")))
    elif kind == "sext":
        c.update(src=_Src.SEXT, sext16=int(name.endswith("i16")))
    elif kind in ("bitset0", "bitset1"):
        c.update(src=_Src.BITSET, invert=int(kind == "bitset0"))
    elif kind in ("bitcmp0", "bitcmp1"):
        c.update(src=_Src.NONE, scc=_Scc.BIT, invert=int(kind == "bitcmp0"))
    else:  # pragma: no cover - a new SALU_OPS entry needs a datapath here
        raise NotImplementedError(f"ScalarAlu has no datapath for {info.mnemonic}")
    return c


_CONTROL: dict[str, dict] = {m: _control(TABLE.by_mnemonic(m)) for m in SALU_ALU_OPS}


#: Mnemonics whose destination is written only when SCC is 1 (``s_cmov*``): a commit trace
#: of the hardware leaves their destination out when SCC is 0.
CONDITIONAL_WRITES: frozenset[str] = frozenset(
    info.mnemonic for info in TABLE if info.mnemonic in SALU_ALU_OPS
    and _control(info).get("cond_d"))


def _check_ops(ops: object) -> tuple[str, ...]:
    if ops is None:
        return SALU_ALU_OPS
    if isinstance(ops, str):
        raise ValueError(f"ops must be an iterable of mnemonics, not the string {ops!r}")
    try:
        wanted = set(ops)
    except TypeError:
        raise ValueError(f"ops must be an iterable of mnemonics, not {ops!r}") from None
    for name in sorted(wanted, key=repr):
        if name in SALU_ALU_OPS:
            continue
        if name in SALU_CORE_OPS:
            raise ValueError(f"ops: {name} is not a scalar ALU operation (the core's sequencer "
                             f"executes it)")
        raise ValueError(f"ops: {name!r} is not a scalar ALU operation; it must be one of "
                         f"SALU_ALU_OPS (s_add_u32, ..., s_cmovk_i32)")
    return tuple(m for m in SALU_ALU_OPS if m in wanted)


def _popcount(value):
    """Population count of ``value`` as a balanced tree of adders."""
    level = [value[i] for i in range(len(value))]
    while len(level) > 1:
        level = [level[i] + level[i + 1] if i + 1 < len(level) else level[i]
                 for i in range(0, len(level), 2)]
    return level[0]


#: The operand and result ports of a scalar ALU (this one and the pipelined
#: :class:`~.scalar_alu.PipelinedScalarAlu`), beside its operation input.
ALU_PORTS = {
    "a": In(64), "b": In(64), "scc_in": In(1), "exec_in": In(64),
    "result": Out(64), "write_d": Out(1), "scc_out": Out(1), "write_scc": Out(1),
    "exec_out": Out(64), "write_exec": Out(1),
}


class ScalarAlu(wiring.Component):
    """The scalar ALU: the SOP1, SOP2, SOPC and SOPK data operations of :data:`SALU_ALU_OPS`.

    Purely combinational (latency 0): every output is valid in the cycle of its inputs.
    Results, SCC and EXEC equal :data:`gpgpu_hdl.emu.salu.SALU_OPS` and
    :data:`gpgpu_hdl.emu.salu.SAVEEXEC_OPS` bit for bit when the operands are bound as follows
    (the binding of :mod:`gpgpu_hdl.emu.program`):

    * SOP2, SOPC: ``a`` = SSRC0, ``b`` = SSRC1.
    * SOP1: ``a`` = SSRC0; ``b`` is ignored, except by ``s_bitset0_*``/``s_bitset1_*``,
      which read-modify-write their destination: ``b`` = the old destination value (``a`` the
      bit index).
    * SOPK: ``a`` = the register named by the SDST field (the old destination of
      ``s_addk_i32``/``s_mulk_i32``, the first operand of ``s_cmpk_*``; ignored by
      ``s_movk_i32``/``s_cmovk_i32``); ``b[0:16]`` = the raw SIMM16. The ALU extends it to 32
      bits itself: zero-extended for ``s_cmpk_*_u32``, sign-extended otherwise; ``b[16:64]``
      is ignored.
    * ``s_*_saveexec_b64``: ``a`` = SSRC0, ``exec_in`` = EXEC. ``result`` is the old EXEC
      (for the destination), ``exec_out`` the new EXEC, and SCC is set to ``exec_out != 0``.

    Operands are raw register bits. A 32-bit operand uses only bits ``[0:32]`` of its port
    (likewise ``b`` of the 64-bit shifts, bit-field extracts and ``s_bitcmp*_b64``, and ``a``
    of ``s_bitset*_b64``); the upper bits are ignored. Shift amounts, bit indices and the
    width and offset of ``s_bfm_*`` are the low 5 (32-bit forms) or 6 (64-bit forms) bits of
    their operand.

    An operation the ALU was not built for (see ``ops``) behaves as a no-op: it writes neither
    the destination nor SCC nor EXEC.

    Parameters
    ----------
    ops : iterable of str, optional
        Mnemonics of the operations to build; the default is all of :data:`SALU_ALU_OPS`.
        The multiplier is built only for ``s_mul_i32``/``s_mulk_i32``, the shifter only for
        a shift or a bit-field extract (64 bits wide only for a 64-bit one), and the bit-field
        mask is 64 bits wide only for ``s_bfm_b64``.
    shifter : str
        Shifter style: ``"barrel"`` or ``"multiplier"`` (see
        :func:`gpgpu_hdl.cu.shifter.make_shifter`).

    Raises
    ------
    ValueError
        If ``ops`` is not an iterable of :data:`SALU_ALU_OPS` mnemonics, or ``shifter`` is not
        a shifter style.

    Members
    -------
    op : In(SaluOp)
        Operation.
    a : In(64)
        First source (SSRC0; for SOPK the register named by SDST).
    b : In(64)
        Second source (SSRC1; the old destination for ``s_bitset*``; the SIMM16 in ``[0:16]``
        for SOPK).
    scc_in : In(1)
        Current SCC (carry-in of ``s_addc_u32``/``s_subb_u32``, condition of ``s_cselect_*``,
        ``s_cmov_*``, ``s_cmovk_i32``).
    exec_in : In(64)
        Current EXEC (read by the ``s_*_saveexec_b64`` operations).
    result : Out(64)
        Destination value; 32-bit results are zero-extended. Meaningful only when
        ``write_d`` is 1.
    write_d : Out(1)
        The operation writes its destination. 0 for compares, and for ``s_cmov_*`` and
        ``s_cmovk_i32`` when ``scc_in`` is 0.
    scc_out : Out(1)
        New SCC; equal to ``scc_in`` when ``write_scc`` is 0.
    write_scc : Out(1)
        The operation sets SCC.
    exec_out : Out(64)
        New EXEC; equal to ``exec_in`` when ``write_exec`` is 0.
    write_exec : Out(1)
        The operation writes EXEC (the ``s_*_saveexec_b64`` operations).
    """

    def __init__(self, *, ops=None, shifter: str = "barrel"):
        self._ops = _check_ops(ops)
        if shifter not in SHIFTER_STYLES:
            raise ValueError(f"shifter style must be one of "
                             f"{', '.join(map(repr, SHIFTER_STYLES))}, not {shifter!r}")
        self._shifter = shifter
        super().__init__({"op": In(SaluOp), **ALU_PORTS})

    @property
    def ops(self) -> tuple[str, ...]:
        """Mnemonics of the operations built, in :data:`SALU_ALU_OPS` order."""
        return self._ops

    @property
    def shifter(self) -> str:
        """Shifter style."""
        return self._shifter

    @property
    def latency(self) -> int:
        """Clock cycles from the inputs to the outputs: 0, the unit is combinational."""
        return 0

    def elaborate(self, platform):
        m = Module()
        controls = [_CONTROL[name] for name in self._ops]
        srcs = {c["src"] for c in controls}

        # -- decode ---------------------------------------------------------------------------
        ctl = Signal(_control_layout)
        with m.Switch(self.op):
            for name, c in zip(self._ops, controls, strict=True):
                with m.Case(SaluOp[_member_name(name)]):
                    m.d.comb += ctl.eq(_control_layout.const(c))

        a, b = self.a, self.b
        # a with the upper half cleared for 32-bit operations; the mask of the operation width
        a_w = Signal(64)
        width_mask = Signal(64)
        m.d.comb += [
            a_w.eq(Cat(a[:32], a[32:] & ctl.wide.replicate(32))),
            width_mask.eq(Cat(Const(0xFFFF_FFFF, 32), ctl.wide.replicate(32))),
        ]

        # second 32-bit operand: SSRC1, or the extended SIMM16 of a SOPK operation
        b_lo = Signal(32)
        if any(c["sopk"] for c in controls):
            simm = Signal(32)
            m.d.comb += [
                simm.eq(Cat(b[:16], (b[15] & ~ctl.simm_zext).replicate(16))),
                b_lo.eq(Mux(ctl.sopk, simm, b[:32])),
            ]
        else:
            m.d.comb += b_lo.eq(b[:32])

        sources = {}            # _Src -> value
        sccs = {}               # _Scc -> 1-bit value

        # -- 32-bit adder, compare conditions ----------------------------------------------
        if any(c.get("sub") or c["src"] is _Src.ADD for c in controls):
            carry_in = Signal()
            b_add = Signal(32)
            total = Signal(33)
            overflow = Signal()
            equal = Signal()
            less = Signal()         # a < b, signed or unsigned by ctl.signed (when subtracting)
            m.d.comb += [
                carry_in.eq(Mux(ctl.cin_scc, self.scc_in ^ ctl.sub, ctl.sub)),
                b_add.eq(b_lo ^ ctl.sub.replicate(32)),
                total.eq(a[:32] + b_add + carry_in),
                overflow.eq((a[31] == b_add[31]) & (total[31] != a[31])),
                equal.eq(a[:32] == b_lo),
                less.eq(Mux(ctl.signed, total[31] ^ overflow, ~total[32])),
            ]
            cond = Signal()
            with m.Switch(ctl.cond):
                with m.Case(_Cond.EQ):
                    m.d.comb += cond.eq(equal)
                with m.Case(_Cond.LG):
                    m.d.comb += cond.eq(~equal)
                with m.Case(_Cond.GT):
                    m.d.comb += cond.eq(~less & ~equal)
                with m.Case(_Cond.GE):
                    m.d.comb += cond.eq(~less)
                with m.Case(_Cond.LT):
                    m.d.comb += cond.eq(less)
                with m.Case(_Cond.LE):
                    m.d.comb += cond.eq(less | equal)
            sources[_Src.ADD] = total[:32]
            sccs.update({_Scc.CARRY: total[32], _Scc.BORROW: ~total[32],
                         _Scc.OVERFLOW: overflow, _Scc.COND: cond})

        # -- negator: s_abs_i32 (of a), s_absdiff_i32 (of the difference) ---------------------
        if _Src.NEG in srcs:
            neg_in = Signal(32)
            negated = Signal(32)
            if "s_absdiff_i32" in self._ops:
                m.d.comb += neg_in.eq(Mux(ctl.sub, total[:32], a[:32]))
                negate = Mux(ctl.sub, less, a[31])
            else:
                m.d.comb += neg_in.eq(a[:32])
                negate = a[31]
            m.d.comb += negated.eq(-neg_in)
            sources[_Src.NEG] = Mux(negate, negated, neg_in)

        # -- multiplier -----------------------------------------------------------------------
        if _Src.MUL in srcs:
            m.submodules.mul = mul = MulUnit()
            m.d.comb += [
                mul.op.eq(MulOp.MUL_LO_I32),
                mul.a.eq(a[:32]),
                mul.b.eq(b_lo),
            ]
            sources[_Src.MUL] = mul.result

        # -- shifter and bit-field extract ------------------------------------------------------
        shift_ops = [c for c in controls if c["src"] in (_Src.SHIFT, _Src.BFE)]
        if shift_ops:
            width = 64 if any(c["wide"] for c in shift_ops) else 32
            m.submodules.shifter = shifter = make_shifter(self._shifter, width)
            m.d.comb += shifter.op.eq(ctl.shift)
            if width == 64:
                # 32-bit shifts in the 64-bit shifter: the upper half is zero, or copies of
                # bit 31 for s_ashr_i32
                upper = Mux(ctl.wide, a[32:],
                            (a[31] & (ctl.shift == ShiftOp.ASHR)).replicate(32))
                m.d.comb += [
                    shifter.a.eq(Cat(a[:32], upper)),
                    shifter.amount.eq(Cat(b[:5], b[5] & ctl.wide)),
                ]
            else:
                m.d.comb += [
                    shifter.a.eq(a[:32]),
                    shifter.amount.eq(b[:5]),
                ]
            shifted = shifter.result
            sources[_Src.SHIFT] = shifted

            if _Src.BFE in srcs:
                field_width = b[16:23]
                keep = Signal(width)
                fill = Signal()
                m.d.comb += [
                    keep.eq(Cat(field_width > i for i in range(width))),
                    # sign-extend from the field's top bit when 0 < field width < op width
                    fill.eq(ctl.signed & (field_width != 0)
                            & Mux(ctl.wide, field_width < 64, field_width < 32)
                            & shifted.bit_select((field_width - 1)[:exact_log2(width)], 1)),
                ]
                sources[_Src.BFE] = (shifted & keep) | (~keep & fill.replicate(width))

        # -- bitwise logic and saveexec ---------------------------------------------------------
        if srcs & {_Src.LOGIC, _Src.EXEC}:
            b_logic = Signal(64)
            logic = Signal(64)
            logic_out = Signal(64)
            if _Src.EXEC in srcs:
                m.d.comb += b_logic.eq(Mux(ctl.saveexec, self.exec_in, b) ^
                                       ctl.inv_b.replicate(64))
            else:
                m.d.comb += b_logic.eq(b ^ ctl.inv_b.replicate(64))
            with m.Switch(ctl.logic):
                with m.Case(_Logic.AND):
                    m.d.comb += logic.eq(a & b_logic)
                with m.Case(_Logic.OR):
                    m.d.comb += logic.eq(a | b_logic)
                with m.Case(_Logic.XOR):
                    m.d.comb += logic.eq(a ^ b_logic)
            m.d.comb += logic_out.eq(logic ^ ctl.inv_out.replicate(64))
            sources[_Src.LOGIC] = logic_out
            if _Src.EXEC in srcs:
                sources[_Src.EXEC] = self.exec_in
                sccs[_Scc.EXEC_NZ] = logic_out != 0
                m.d.comb += self.exec_out.eq(Mux(ctl.saveexec, logic_out, self.exec_in))
            else:
                m.d.comb += self.exec_out.eq(self.exec_in)
        else:
            m.d.comb += self.exec_out.eq(self.exec_in)
        m.d.comb += self.write_exec.eq(ctl.saveexec)

        # -- moves, selects, min/max ----------------------------------------------------------
        if _Src.SELECT in srcs:
            take_a = Signal()
            picks = {c["pick"] for c in controls if c["src"] is _Src.SELECT}
            with m.Switch(ctl.pick):
                if _Pick.A in picks:
                    with m.Case(_Pick.A):
                        m.d.comb += take_a.eq(1)
                if _Pick.SCC in picks:
                    with m.Case(_Pick.SCC):
                        m.d.comb += take_a.eq(self.scc_in)
                if _Pick.COND in picks:
                    with m.Case(_Pick.COND):
                        m.d.comb += take_a.eq(sccs[_Scc.COND])   # min/max build the adder
            sources[_Src.SELECT] = Mux(take_a, a, Cat(b_lo, b[32:]))

        # -- not, brev, bit counts, find first/last bit -----------------------------------------
        if srcs & {_Src.BITS, _Src.COUNT, _Src.FIND}:
            # a within the operation width, complemented for not/ff0/bcnt0 and for s_flbit_i32*
            # of a negative value; bit-reversed within the width for brev/flbit
            flip = Signal()
            bits_in = Signal(64)
            bits = Signal(64)
            m.d.comb += [
                flip.eq(ctl.invert | (ctl.signed & Mux(ctl.wide, a[63], a[31]))),
                bits_in.eq(a_w ^ (width_mask & flip.replicate(64))),
                bits.eq(Mux(ctl.from_top,
                            Mux(ctl.wide, bits_in[::-1], Cat(bits_in[:32][::-1], Const(0, 32))),
                            bits_in)),
            ]
            sources[_Src.BITS] = bits
            if _Src.COUNT in srcs:
                count = Signal(7)
                m.d.comb += count.eq(_popcount(bits_in))
                sources[_Src.COUNT] = count
            if _Src.FIND in srcs:
                lowest = Signal(64)
                index = Signal(6)
                m.d.comb += [
                    lowest.eq(bits & (~bits + 1)[:64]),
                    index.eq(Cat((lowest & sum(1 << i for i in range(64) if i >> k & 1)).any()
                                 for k in range(6))),
                ]
                sources[_Src.FIND] = Mux(bits == 0, Const(0xFFFF_FFFF, 32), index)

        # -- whole-quad mode, quad mask -----------------------------------------------------------
        if srcs & {_Src.WQM, _Src.QUADMASK}:
            quads = Signal(16)
            m.d.comb += quads.eq(Cat(a_w[4 * q:4 * q + 4].any() for q in range(16)))
            sources[_Src.WQM] = Cat(quads[q].replicate(4) for q in range(16))
            sources[_Src.QUADMASK] = quads

        # -- bit-field mask, single-bit set/clear/test, sign extension -----------------------------
        if _Src.BFM in srcs:
            # 64 bits wide only when s_bfm_b64 is built; bit 5 of S0/S1 counts only for it
            if any(c["wide"] for c in controls if c["src"] is _Src.BFM):
                offset, length = Cat(b[:5], b[5] & ctl.wide), Cat(a[:5], a[5] & ctl.wide)
            else:
                offset, length = b[:5], a[:5]
            end = Signal(len(offset) + 1)
            m.d.comb += end.eq(offset + length)
            sources[_Src.BFM] = Cat((offset <= i) & (end > i) for i in range(2 ** len(offset)))
        if _Src.BITSET in srcs:
            bit = Signal(64)
            m.d.comb += bit.eq(Const(1, 64) << Cat(a[:5], a[5] & ctl.wide))
            sources[_Src.BITSET] = Mux(ctl.invert, b & ~bit, b | bit)
        if any(c["scc"] is _Scc.BIT for c in controls):
            tested = a_w.bit_select(Cat(b[:5], b[5] & ctl.wide), 1)
            sccs[_Scc.BIT] = tested ^ ctl.invert
        if _Src.SEXT in srcs:
            sources[_Src.SEXT] = Mux(ctl.sext16, Cat(a[:16], a[15].replicate(16)),
                                     Cat(a[:8], a[7].replicate(24)))

        # -- result, SCC ---------------------------------------------------------------------------
        value = Signal(64)
        with m.Switch(ctl.src):
            for src in sorted(srcs - {_Src.NONE}, key=lambda s: s.value):
                with m.Case(src):
                    m.d.comb += value.eq(sources[src])
        m.d.comb += [
            self.result.eq(Cat(value[:32], value[32:] & ctl.dst64.replicate(32))),
            self.write_d.eq(ctl.write_d | (ctl.cond_d & self.scc_in)),
        ]

        sccs[_Scc.NZ] = self.result != 0
        scc = Signal()
        with m.Switch(ctl.scc):
            for kind in sorted({c["scc"] for c in controls} - {_Scc.NONE},
                               key=lambda s: s.value):
                with m.Case(kind):
                    m.d.comb += scc.eq(sccs[kind])
        m.d.comb += [
            self.write_scc.eq(ctl.scc != _Scc.NONE),
            self.scc_out.eq(Mux(self.write_scc, scc, self.scc_in)),
        ]
        return m
