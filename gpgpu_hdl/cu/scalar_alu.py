"""The scalar ALU of the pipelined compute unit (issue "The compute unit as a pipeline",
docs/pipeline.md): a building block, not yet used by :class:`~gpgpu_hdl.cu.core.ComputeUnit`.

:class:`PipelinedScalarAlu` executes every :data:`~.salu.SALU_ALU_OPS` operation (the SOP1,
SOP2, SOPC and SOPK data operations, 32 and 64 bits, SCC in and out, the saveexec forms) as a
pipeline of :data:`LATENCY` register stages that takes an operation every cycle and never
stalls. Its results, SCC and EXEC equal :class:`~.salu.ScalarAlu`'s (and so the golden model's,
:data:`gpgpu_hdl.emu.salu.SALU_OPS`) bit for bit, with the operands bound the same way.
:class:`ScalarDecode` turns a :class:`~.salu.SaluOp` into the :data:`ScalarControl` word once
(a ROM, from the same per-operation description :class:`~.salu.ScalarAlu` decodes).

The stages, each about three LUT levels or one carry chain deep::

    stage 0  the inputs, with a copy of the control word for each group of datapaths (a
             control bit shared by every datapath has 200-odd loads: routed from one
             register, 4.85 ns of a 3-stage version's 12.55 ns critical path)
    stage 1  the 32-bit adder (add/sub with carries, compares, min/max) and the reverse
             subtractor (s_abs, s_absdiff); a == b; the bitwise family as a 2-input truth
             table per bit (logic, saveexec, moves, selects, s_not); s_brev, s_bitset,
             s_sext; s_bfm's end; the first half of the left and of the right shifter (by 0
             to 56 in steps of 8); the bit-field keep mask, the field's end and whether its
             top bit is inside the operand; the tested bit of s_bitcmp; per group of 4 bits
             (complemented and reversed for s_ff0/s_flbit): any bit set, the lowest set bit,
             the bit count; the multiplier operands into the DSP blocks' input registers
             (:class:`~.dsp.Mul18`, three 18x18 partial products)
    stage 2  each source's value: the arithmetic result (lower-than from the adder's
             carries picks among sum, reverse difference, a and b), the shifts' second halves
             (by 0 to 7) with the bit-field mask, the field's sign bit, s_bfm's mask (two
             thermometer codes), s_wqm/s_quadmask from the group bits; the new SCC of
             everything but the "result != 0" kinds; the bit count to two 6-bit halves, the
             lowest set bit to four 16-bit quarters; the partial products (the DSP blocks'
             output registers)
    stage 3  the value (the sources ORed, the sign fill, masked to the destination width);
             the product (a carry-save row and one 15-bit carry chain), the bit count or the
             find-first index
    stage 4  the result select; SCC = value != 0

Placed and routed alone, a 3-stage version (no input stage) reached 79.68 MHz and a 4-stage
one 89.77 MHz (the value select of every source, with the bit-field sign, in one stage).

:data:`~.salu.SALU_ALU_OPS` has no operation that writes only part of its work late: the
multiply, the bit counts and the find-first operations, whose results come in stage 4's
select, set no SCC from their value (``s_bcnt*`` sets it to "any bit counted", which stage 2
knows).
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out

from .dsp import Mul18, check_style
from .fast_alu import _csa
from .salu import (
    _CONTROL,
    ALU_PORTS,
    SALU_ALU_OPS,
    SaluOp,
    _Cond,
    _Logic,
    _member_name,
    _Pick,
    _Scc,
    _Src,
)
from .shifter import ShiftOp

__all__ = ["LATENCY", "Arith", "SccSrc", "ScalarControl", "scalar_control", "ScalarDecode",
           "PipelinedScalarAlu"]

#: register stages from the operands to the outputs
LATENCY = 5


class Arith(enum.Enum, shape=3):
    """The arithmetic result of :class:`PipelinedScalarAlu`: what the adders give."""

    ADD = 0         # a + b (+ carry), a - b (- borrow)
    ABS = 1         # |a|
    ABSDIFF = 2     # |a - b|
    MIN = 3
    MAX = 4


class SccSrc(enum.Enum, shape=3):
    """Where the new SCC comes from (``NONE``: SCC is left alone)."""

    NONE = 0
    VALUE = 1       # the stage-2 value != 0 (the new EXEC for the saveexec forms)
    CARRY = 2
    BORROW = 3
    OVERFLOW = 4
    COND = 5        # the compare condition
    BIT = 6         # the tested bit (s_bitcmp0/1)
    ANY = 7         # any bit counted (s_bcnt0/1)


#: The decoded control of one scalar ALU operation.
#:
#: * stage-2 value sources (at most one): ``v_bitwise`` (the truth table ``tt`` of ``a`` and
#:   ``y``, bit ``2 a + y``; ``y`` is EXEC for ``y_exec``, else ``b`` with the SIMM16 of a
#:   SOPK operation; ``tt_scc``: ``y`` alone when SCC is 0, for ``s_cselect``), ``v_arith``
#:   (``arith``), ``v_shl``, ``v_shr`` (``ashr``: arithmetic; ``bfe``: the bit-field extract,
#:   ``signed`` for the ``_i`` forms), ``v_bfm``, ``v_brev``, ``v_bitset`` (``invert``:
#:   clear), ``v_sext`` (``sext16``), ``v_wqm``, ``v_quadmask``;
#: * stage-3 result sources instead of the value: ``r_mul``, ``r_count``, ``r_find`` (the
#:   group bits complemented for ``invert``, and for ``signed`` when negative, bit-reversed
#:   for ``from_top``), ``r_exec`` (the old EXEC, for the saveexec forms, which also set
#:   ``write_exec``);
#: * the adder: ``sub``, ``cin_scc`` (carry or borrow in from SCC), ``signed`` (compares,
#:   min/max, absdiff), ``sopk`` (``b`` is a SIMM16), ``simm_zext``; ``cond``;
#: * ``scc``, ``wide`` (64-bit operation), ``dst64``, ``write_d``, ``cond_d`` (written when
#:   SCC is 1).
ScalarControl = data.StructLayout({
    "v_bitwise": 1, "v_arith": 1, "v_shl": 1, "v_shr": 1, "v_bfm": 1, "v_brev": 1,
    "v_bitset": 1, "v_sext": 1, "v_wqm": 1, "v_quadmask": 1,
    "r_mul": 1, "r_count": 1, "r_find": 1, "r_exec": 1, "write_exec": 1,
    "tt": 4, "tt_scc": 1, "y_exec": 1,
    "arith": Arith,
    "sub": 1, "cin_scc": 1, "signed": 1, "sopk": 1, "simm_zext": 1,
    "cond": _Cond,
    "scc": SccSrc,
    "wide": 1, "dst64": 1, "write_d": 1, "cond_d": 1,
    "ashr": 1, "bfe": 1, "invert": 1, "from_top": 1, "sext16": 1,
})

_TT_A = 0b1100          # bit 2 a + y of the truth table
_TT_Y = 0b1010
_SCC_OF = {_Scc.NONE: SccSrc.NONE, _Scc.NZ: SccSrc.VALUE, _Scc.EXEC_NZ: SccSrc.VALUE,
           _Scc.CARRY: SccSrc.CARRY, _Scc.BORROW: SccSrc.BORROW,
           _Scc.OVERFLOW: SccSrc.OVERFLOW, _Scc.COND: SccSrc.COND, _Scc.BIT: SccSrc.BIT}
_VALUE_OF = {_Src.SHIFT: None, _Src.BFE: "v_shr", _Src.BFM: "v_bfm", _Src.BITSET: "v_bitset",
             _Src.SEXT: "v_sext", _Src.WQM: "v_wqm", _Src.QUADMASK: "v_quadmask",
             _Src.MUL: "r_mul", _Src.COUNT: "r_count", _Src.FIND: "r_find"}


def _truth_table(fn) -> int:
    return sum(int(fn(a, y)) << (2 * a + y) for a in (0, 1) for y in (0, 1))


def _logic_table(c: dict) -> int:
    op = {_Logic.AND: lambda a, y: a & y, _Logic.OR: lambda a, y: a | y,
          _Logic.XOR: lambda a, y: a ^ y}[c.get("logic", _Logic.AND)]
    return _truth_table(lambda a, y: op(a, y ^ c.get("inv_b", 0)) ^ c.get("inv_out", 0))


def scalar_control(mnemonic: str) -> dict:
    """The :data:`ScalarControl` fields of a :data:`~.salu.SALU_ALU_OPS` operation (the others
    0), derived from the description :class:`~.salu.ScalarAlu` decodes.

    Raises
    ------
    ValueError
        If ``mnemonic`` is not in :data:`~.salu.SALU_ALU_OPS`.
    """
    if mnemonic not in SALU_ALU_OPS:
        raise ValueError(f"{mnemonic!r} is not a scalar ALU operation (SALU_ALU_OPS)")
    c = _CONTROL[mnemonic]
    src = c["src"]
    out = {k: c.get(k, 0) for k in ("sub", "cin_scc", "signed", "sopk", "simm_zext", "wide",
                                    "dst64", "write_d", "cond_d")}
    out["cond"] = c.get("cond", _Cond.EQ)
    out["scc"] = _SCC_OF[c["scc"]]
    if src is _Src.EXEC:                                        # saveexec
        out |= {"v_bitwise": 1, "tt": _logic_table(c), "y_exec": 1, "r_exec": 1,
                "write_exec": 1}
    elif src is _Src.LOGIC:
        out |= {"v_bitwise": 1, "tt": _logic_table(c)}
    elif src is _Src.SELECT and c["pick"] is _Pick.COND:     # min/max
        out |= {"v_arith": 1, "arith": Arith.MAX if c["cond"] is _Cond.GT else Arith.MIN}
    elif src is _Src.SELECT:                                    # moves and selects
        pick = c.get("pick", _Pick.A)
        out |= {"v_bitwise": 1, "tt": _TT_Y if pick is _Pick.B else _TT_A,
                "tt_scc": int(pick is _Pick.SCC)}
    elif src is _Src.ADD:
        out |= {"v_arith": 1, "arith": Arith.ADD}
    elif src is _Src.NEG:
        out |= {"v_arith": 1, "arith": Arith.ABSDIFF if c.get("sub") else Arith.ABS}
    elif src is _Src.BITS and not c.get("from_top"):            # s_not
        out |= {"v_bitwise": 1, "tt": _truth_table(lambda a, y: 1 - a)}
    elif src is _Src.BITS:                                      # s_brev
        out |= {"v_brev": 1}
    elif src is _Src.SHIFT:
        shift = c["shift"]
        out |= {"v_shl" if shift is ShiftOp.SHL else "v_shr": 1,
                "ashr": int(shift is ShiftOp.ASHR)}
    elif src is not _Src.NONE:
        out[_VALUE_OF[src]] = 1
    out |= {"bfe": int(src is _Src.BFE), "invert": c.get("invert", 0),
            "from_top": c.get("from_top", 0), "sext16": c.get("sext16", 0)}
    if src is _Src.COUNT:
        out["scc"] = SccSrc.ANY         # the count is not 0 when any bit is counted
    return out


class ScalarDecode(wiring.Component):
    """The :data:`ScalarControl` word of a :class:`~.salu.SaluOp` (combinational: a ROM).

    Members
    -------
    op : In(SaluOp)
        Operation.
    control : Out(ScalarControl)
        Its control word.
    """

    op: In(SaluOp)
    control: Out(ScalarControl)

    def elaborate(self, platform):
        m = Module()
        with m.Switch(self.op):
            for name in SALU_ALU_OPS:
                with m.Case(SaluOp[_member_name(name)]):
                    m.d.comb += self.control.eq(ScalarControl.const(scalar_control(name)))
        return m


def _rom(table, index, width: int):
    """``table[index]`` as a ROM of ``width``-bit constants (LUTs, not carry chains)."""
    return Array(Const(v, width) for v in table)[index]


def _thermometer64(value):
    """64 bits, bit ``i`` set when ``value > i`` (``value`` up to 7 bits), as two levels of
    small lookups: a 128-entry table would become a block RAM, a compare per bit a carry
    chain each."""
    value = Cat(value, Const(0, max(0, 7 - len(value))))
    high = value[3:6]
    above = _rom([(1 << min(v, 8)) - 1 for v in range(8)], high, 8)     # high > j
    at = Cat(high == j for j in range(8))
    low = _rom([(1 << v) - 1 for v in range(8)], value[:3], 8)           # low > k
    return Cat(value[6] | above[i // 8] | (at[i // 8] & low[i % 8]) for i in range(64))


_POPCOUNT4 = [bin(v).count("1") for v in range(16)]
_LOWEST4 = [(v & -v).bit_length() - 1 if v else 0 for v in range(16)]


def _first(pairs):
    """The data of the first (any, data) pair whose ``any`` is set (the last pair's data when
    none is): a priority multiplexer."""
    value = pairs[-1][1]
    for flag, datum in reversed(pairs[:-1]):
        value = Mux(flag, datum, value)
    return value


class PipelinedScalarAlu(wiring.Component):
    """The scalar ALU as a pipeline: every :data:`~.salu.SALU_ALU_OPS` operation.

    A pipeline of :data:`LATENCY` register stages with no enable: the control word and the
    operands presented in a cycle give the outputs :data:`LATENCY` cycles later, one operation
    a cycle. The operands are bound as for :class:`~.salu.ScalarAlu` (``a`` = SSRC0, or the
    SDST register of a SOPK operation; ``b`` = SSRC1, the old destination of ``s_bitset*``,
    or the raw SIMM16 in ``b[0:16]``; ``exec_in`` = EXEC for the saveexec forms; port bits an
    operation does not read are ignored), and the results equal its results bit for bit. The
    inputs should come from registers (the operand stage's): stage 1 starts from them.

    Parameters
    ----------
    dsp : str
        How the three partial-product multipliers of ``s_mul_i32`` are built: ``"generic"``
        (simulation, any target) or ``"ecp5"`` (``MULT18X18D`` with its own registers), see
        :mod:`~gpgpu_hdl.cu.dsp`.

    Members
    -------
    control : In(ScalarControl)
        The operation's control word (from :class:`ScalarDecode`).
    a : In(64)
        First source.
    b : In(64)
        Second source.
    scc_in : In(1)
        SCC.
    exec_in : In(64)
        EXEC (read by the saveexec forms only).
    result : Out(64)
        Destination value, 32-bit results zero-extended; meaningful when ``write_d`` is 1.
    write_d : Out(1)
        The operation writes its destination (0 for compares, and for ``s_cmov*`` when SCC
        was 0).
    scc_out : Out(1)
        New SCC; the ``scc_in`` of the operation when ``write_scc`` is 0.
    write_scc : Out(1)
        The operation sets SCC.
    exec_out : Out(64)
        New EXEC; meaningful when ``write_exec`` is 1.
    write_exec : Out(1)
        The operation writes EXEC (the saveexec forms).
    """

    def __init__(self, *, dsp: str = "generic"):
        self._dsp = check_style(dsp, "dsp")
        super().__init__({"control": In(ScalarControl), **ALU_PORTS})

    @property
    def dsp(self) -> str:
        """How the partial-product multipliers are built (:data:`~.dsp.DSP_STYLES`)."""
        return self._dsp

    @property
    def latency(self) -> int:
        """Clock cycles from the inputs to the outputs: :data:`LATENCY`."""
        return LATENCY

    def elaborate(self, platform):
        m = Module()

        def stage(n: int, name: str, value, width: int | None = None):
            """A register of stage ``n`` loaded with ``value`` every cycle."""
            reg = Signal(width if width is not None else len(value), name=f"s{n}_{name}")
            m.d.sync += reg.eq(value)
            return reg

        def comb(name: str, value, width: int | None = None):
            """A named net for ``value`` (the simulator then evaluates it once, not at every
            use)."""
            sig = Signal(width if width is not None else len(value), name=name)
            m.d.comb += sig.eq(value)
            return sig

        def control_stage(n: int, value, name: str = "control", init: int = 0):
            """A register of stage ``n`` holding a copy of the control word. Copies of one
            stage differ in their power-on value (they have no reset), or Yosys would merge
            them into one register driving every datapath."""
            raw = Signal(ScalarControl.size, name=f"s{n}_{name}", init=init, reset_less=True)
            m.d.sync += raw.eq(value.as_value())
            return data.View(ScalarControl, raw)

        # --- stage 0: the inputs, a copy of the control word for each group of datapaths ----
        ctl = control_stage(0, self.control, "control_arith", 1)    # adders, SIMM16
        c_logic = control_stage(0, self.control, "control_logic", 2)  # bitwise, misc
        c_shift = control_stage(0, self.control, "control_shift", 3)  # shifters, bfe, bfm
        c_bits = control_stage(0, self.control, "control_bits", 4)    # counts, finds
        a = stage(0, "a", self.a)
        b = stage(0, "b", self.b)
        scc_in = stage(0, "scc", self.scc_in)
        exec_in = stage(0, "exec", self.exec_in)

        # --- stage 1 -------------------------------------------------------------------------
        s1 = control_stage(1, ctl)
        wide = c_shift.wide
        upper = c_bits.wide.replicate(32)
        a_w = comb("a_w", Cat(a[:32], a[32:] & upper))     # a within the operation width
        simm = Cat(b[:16], (b[15] & ~ctl.simm_zext).replicate(16))
        b_lo = comb("b_lo", Mux(ctl.sopk, simm, b[:32]))   # SSRC1, or the extended SIMM16

        # the adder (b or ~b, carry or borrow in) and the reverse subtractor (b or 0) - a
        b_add = comb("b_add", b_lo ^ ctl.sub.replicate(32))
        carry_in = Mux(ctl.cin_scc, scc_in ^ ctl.sub, ctl.sub)
        total = Signal(33, name="total")
        m.d.comb += total.eq(a[:32] + b_add + carry_in)
        overflow = comb("overflow", (a[31] == b_add[31]) & (total[31] != a[31]))
        rsub = Signal(32, name="rsub")
        m.d.comb += rsub.eq(Mux(ctl.arith == Arith.ABSDIFF, b_lo, 0) + ~a[:32] + 1)
        s1_sum = stage(1, "sum", total)
        s1_rsub = stage(1, "rsub", rsub)
        s1_a = stage(1, "a", a)
        s1_b = stage(1, "b", b_lo)
        s1_overflow = stage(1, "overflow", overflow)
        s1_equal = stage(1, "equal", a[:32] == b_lo)

        # the bitwise family: a truth table of (a, y) per bit
        y = comb("y", Mux(c_logic.y_exec, exec_in, Cat(b_lo, b[32:])))
        tt = comb("tt", Mux(c_logic.tt_scc & ~scc_in, Const(_TT_Y, 4), c_logic.tt))
        bitwise = comb("bitwise", Cat(tt.bit_select(Cat(y[i], a[i]), 1) for i in range(64)))
        brev = comb("brev", Mux(c_logic.wide, a[::-1], Cat(a[:32][::-1], Const(0, 32))))
        index = comb("bitset_index", Cat(a[:5], a[5] & c_logic.wide))  # s_bitset's bit
        one_hot = comb("bitset_bit", Cat(index == i for i in range(64)))
        bitset = comb("bitset", Mux(c_logic.invert, b & ~one_hot, b | one_hot))
        sext = comb("sext", Mux(c_logic.sext16, Cat(a[:16], a[15].replicate(16)),
                                Cat(a[:8], a[7].replicate(24))))
        s1_bitwise = stage(1, "bitwise", bitwise)    # 0 unless v_bitwise: tt is 0 then
        s1_misc = stage(1, "misc", Mux(c_logic.v_brev, brev, 0)
                        | Mux(c_logic.v_bitset, bitset, 0) | Mux(c_logic.v_sext, sext, 0), 64)

        # s_bfm: the bits from S1 (offset) up to S1 + S0, within the width
        bfm_off = comb("bfm_off", Cat(b[:5], b[5] & wide))
        bfm_end = Signal(7, name="bfm_end")
        m.d.comb += bfm_end.eq(bfm_off + Cat(a[:5], a[5] & wide))
        s1_bfm_end = stage(1, "bfm_end", bfm_end)
        s1_bfm_off = stage(1, "bfm_off", bfm_off)

        # the shifters' first halves: by 8 x amount[5:3]
        amount = comb("amount", Cat(b[:5], b[5] & wide))
        fill = comb("fill", c_shift.ashr & Mux(wide, a[63], a[31]))
        right_in = comb("right_in", Cat(a[:32], Mux(wide, a[32:], fill.replicate(32)),
                                        fill.replicate(56)))
        left_in = Cat(Const(0, 56), a)
        s1_shr = stage(1, "shr", Array(right_in[8 * k:8 * k + 64] for k in range(8))[amount[3:]])
        s1_shl = stage(1, "shl", Array(left_in[56 - 8 * k:120 - 8 * k]
                                       for k in range(8))[amount[3:]])
        s1_fill = stage(1, "fill", fill)
        s1_amount = stage(1, "amount", amount[:3])
        # the bit-field extract: the field (width b[22:16]) kept, the rest the field's top bit
        # a[offset + width - 1] (signed forms, 0 < width < operation width, the bit inside it)
        field_width = b[16:23]
        s1_keep = stage(1, "keep", _thermometer64(field_width))
        field_end = Signal(8, name="bfe_end")     # the field's top bit is a[field_end - 1]
        m.d.comb += field_end.eq(amount + field_width)
        s1_end = stage(1, "end", field_end)
        end_inside = Mux(wide, ~field_end[6:].any() | (field_end == 64),
                         ~field_end[5:].any() | (field_end == 32))
        s1_sign_ok = stage(1, "sign_ok", c_shift.signed & field_width.any()
                           & ~field_width[6] & (wide | ~field_width[5]) & end_inside)

        # s_bitcmp: the tested bit
        # (a 32-bit operation's amount is below 32: a's upper half is never selected)
        s1_bit = stage(1, "bit", a.bit_select(amount, 1) ^ c_shift.invert)

        # per group of 4 bits of a (complemented, reversed for the find-first forms)
        flip = comb("flip", c_bits.invert | (c_bits.signed & Mux(c_bits.wide, a[63], a[31])))
        bits_in = comb("bits_in", a_w ^ (Cat(Const(0xFFFF_FFFF, 32), upper)
                                          & flip.replicate(64)))
        bits = comb("bits", Mux(c_bits.from_top, Mux(c_bits.wide, bits_in[::-1],
                                                  Cat(bits_in[:32][::-1], Const(0, 32))),
                                bits_in))
        groups = [bits[4 * g:4 * g + 4] for g in range(16)]
        s1_any = stage(1, "any", Cat(grp.any() for grp in groups))
        s1_count = [stage(1, f"count{g}", _rom(_POPCOUNT4, grp, 3))
                    for g, grp in enumerate(groups)]
        s1_lowest = [stage(1, f"lowest{g}", _rom(_LOWEST4, grp, 2))
                     for g, grp in enumerate(groups)]

        s1_cin = stage(1, "scc", scc_in)
        s1_write_d = stage(1, "write_d", ctl.write_d | (ctl.cond_d & scc_in))
        s1_exec = stage(1, "exec", exec_in)

        # the multiplier: the low word of a x b from three 17/15-bit partial products
        muls = {}
        for name, x, y_ in (("ll", a[:17], b_lo[:17]), ("lh", a[:17], b_lo[17:32]),
                            ("hl", a[17:32], b_lo[:17])):
            m.submodules[f"mul_{name}"] = mul = Mul18(style=self._dsp)
            m.d.comb += [mul.a.eq(Cat(x, Const(0, 18 - len(x)))),
                         mul.b.eq(Cat(y_, Const(0, 18 - len(y_))))]
            muls[name] = mul.product

        # --- stage 2: each source's value --------------------------------------------------
        s2 = control_stage(2, s1)
        # a < b (of a subtraction), and which of sum, rsub, a, b the arithmetic result is
        less = comb("less", Mux(s1.signed, s1_sum[31] ^ s1_overflow, ~s1_sum[32]))
        pick = Signal(2, name="arith_pick")
        with m.Switch(s1.arith):
            with m.Case(Arith.ABS):
                m.d.comb += pick.eq(Mux(s1_a[31], 1, 2))
            with m.Case(Arith.ABSDIFF):
                m.d.comb += pick.eq(Mux(less, 1, 0))
            with m.Case(Arith.MIN):
                m.d.comb += pick.eq(Mux(less, 2, 3))
            with m.Case(Arith.MAX):
                m.d.comb += pick.eq(Mux(less, 3, 2))
        arith = comb("arith", Array([s1_sum[:32], s1_rsub, s1_a[:32], s1_b])[pick])
        shr = comb("shr", Array(Cat(s1_shr, s1_fill.replicate(7))[k:k + 64]
                                for k in range(8))[s1_amount])
        shl = comb("shl", Array(Cat(Const(0, 7), s1_shl)[7 - k:71 - k]
                                for k in range(8))[s1_amount])
        keep = comb("keep", s1_keep | ~s1.bfe.replicate(64))
        wqm = Cat(s1_any[q].replicate(4) for q in range(16))
        s2_arith = stage(2, "arith", Mux(s1.v_arith, arith, 0))
        s2_shl = stage(2, "shl", Mux(s1.v_shl, shl, 0))
        s2_shr = stage(2, "shr", Mux(s1.v_shr, shr & keep, 0))
        # the bit-field extract's sign fill: the field's top bit, where the field is not kept
        s2_fill = stage(2, "fill", s1.bfe & s1_sign_ok
                        & Cat(Const(0, 1), s1_a).bit_select(s1_end[:7], 1))
        s2_fill_mask = stage(2, "fill_mask", ~keep)
        s2_bfm = stage(2, "bfm", Mux(s1.v_bfm, _thermometer64(s1_bfm_end)
                                     & ~_thermometer64(s1_bfm_off), 0))
        s2_other = stage(2, "other", s1_bitwise | s1_misc | Mux(s1.v_wqm, wqm, 0)
                         | Mux(s1.v_quadmask, s1_any, 0), 64)

        conds = Array([s1_equal, ~s1_equal, ~less & ~s1_equal, ~less, less, less | s1_equal])
        scc = Array([s1_cin, 0, s1_sum[32], ~s1_sum[32], s1_overflow, conds[s1.cond], s1_bit,
                     s1_any.any()])[s1.scc]
        s2_scc = stage(2, "scc", scc)
        s2_write_d = stage(2, "write_d", s1_write_d)
        s2_exec = stage(2, "exec", s1_exec)
        # bit count: two halves of 8 groups each; lowest set bit: four quarters of 4 groups
        halves = []
        for h in range(2):
            c = s1_count[8 * h:8 * h + 8]
            pairs = [c[2 * i] + c[2 * i + 1] for i in range(4)]
            halves.append(stage(2, f"count{h}", (pairs[0] + pairs[1]) + (pairs[2] + pairs[3]),
                                6))
        quarters = []
        for q in range(4):
            pairs = [(s1_any[4 * q + g], Cat(s1_lowest[4 * q + g], Const(g, 2)))
                     for g in range(4)]
            quarters.append((stage(2, f"any{q}", s1_any[4 * q:4 * q + 4].any()),
                             stage(2, f"lowest{q}", _first(pairs))))

        # --- stage 3: the value; the product, the count, the find-first index ---------------
        s3 = control_stage(3, s2)
        value = comb("value", s2_other | s2_arith | s2_shl | s2_shr | s2_bfm
                     | (s2_fill_mask & s2_fill.replicate(64)), 64)
        s3_value = stage(3, "value", Cat(value[:32], value[32:] & s2.dst64.replicate(32)))
        s3_scc = stage(3, "scc", s2_scc)
        s3_write_d = stage(3, "write_d", s2_write_d)
        s3_exec = stage(3, "exec", s2_exec)
        ll, lh, hl = muls["ll"], muls["lh"], muls["hl"]
        top_sum, top_carry = _csa(ll[17:32], lh[:15], hl[:15], 15)
        product = Cat(ll[:17], (top_sum + top_carry)[:15])
        found = Cat(_first([(flag, Cat(low, Const(q, 2))) for q, (flag, low)
                            in enumerate(quarters)]), Const(0, 26))
        found = Mux(Cat(flag for flag, _ in quarters).any(), found, Const(0xFFFF_FFFF, 32))
        s3_late = stage(3, "late", Mux(s2.r_mul, product, 0)
                        | Mux(s2.r_count, halves[0] + halves[1], 0) | Mux(s2.r_find, found, 0),
                        32)

        # --- stage 4: the result select, SCC = value != 0 ----------------------------------
        plain = ~(s3.r_mul | s3.r_count | s3.r_find | s3.r_exec)
        m.d.sync += [
            self.result.eq(Mux(plain, s3_value, 0) | Mux(s3.r_exec, s3_exec, 0) | s3_late),
            self.write_d.eq(s3_write_d),
            self.scc_out.eq(Mux(s3.scc == SccSrc.VALUE, s3_value.any(), s3_scc)),
            self.write_scc.eq(s3.scc != SccSrc.NONE),
            self.exec_out.eq(s3_value),
            self.write_exec.eq(s3.write_exec),
        ]
        return m
