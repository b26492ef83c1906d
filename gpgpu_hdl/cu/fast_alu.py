"""The fast lane of the pipelined vector ALU (issue "The compute unit as a pipeline",
docs/pipeline.md): a building block, not yet used by :class:`~gpgpu_hdl.cu.core.ComputeUnit`.

:data:`FAST_OPS` is the part of the integer VALU that every lane of the pipelined unit carries:
the instructions that make up 99.5 % of the suite's integer vector work (docs/pipeline.md,
"datapath groups"): the add/subtract family, the bitwise ops and ``v_cndmask_b32``, every
integer compare (32 and 64 bits), min/max, the 32- and 24-bit multiplies and
``v_mad_*_24``, the 32-bit shifts and ``v_bfe_*`` (inside the multiplier, the eGPU integrated
shifter) and the 64-bit shifts (``v_lshl_b64`` scales addresses, 6.7 % of VALU work), also in
the multiplier, one result word per operation: a 64-bit shift takes two operations, as its
two result words take two writes anyway. The rest of :data:`~.valu.VALU_INT_OPS` (SADs,
bit counts and scans, ``v_bfrev``, med3/min3/max3, ``v_lerp_u8``, the packing conversions,
``v_alignbit``/``v_alignbyte``, ``v_bfi_b32``/``v_bfm_b32``: 0.5 % of the suite's VALU work,
none in most kernels) is :data:`SLOW_OPS`, for a narrower shared unit.

:class:`FastDecode` turns a :class:`~.valu.ValuOp` into the :data:`FastControl` word once per
instruction (the lanes share it); :class:`FastLaneAlu` is one lane: a pipeline of
:data:`LATENCY` register stages that takes an operation every cycle and never stalls, so its
results come out in order, exactly :data:`LATENCY` cycles after their operands. Each stage is
about three LUT levels or one carry chain deep, the shape that reaches 150 MHz on ECP5::

    stage 0  the inputs, the lane's own copy of the control word; S0 or S1 cleared for the
             bitwise unit (``v_cndmask_b32``'s unselected source by the lane's select bit,
             S1 for ``v_not_b32`` and moves), a register reset, not a LUT
    stage 1  the adder (the add family; S0 - S1 for the compares and min/max), the
             bitwise ops (and, or, xor, xnor: a LUT4 a bit), the equality compare, the
             multiplier operands (extension, or the shift's bit-reversed value word and
             one-hot factor; an arithmetic right shift's value inverted when negative)
             into fabric registers
    stage 2  the multiplier operands into the DSP blocks' input registers
             (:class:`~.dsp.Mul18`, four 18x18 partial products), lower-than from the
             adder's carries, the add or bitwise result
    stage 3  the partial products (the DSP blocks' output registers), min/max (the
             operands it picks from are 0 for the other instructions), the flag; the
             add/logic/minmax result is final
    stage 4  the sum of the two middle partial products; the low partial product's low
             word plus the addend of ``v_mad_*_24``
    stage 5  the product: one carry chain, the middle sum added to the low and high partial
             products side by side; the bit-field's top bit's place (its width - 1)
    stage 6  the product word (low/high; a 64-bit shift's second word adds the first's
             carried-out bits), the shift's bit reversal and inversion back (the sign
             fill: a negative word's arithmetic shift is its complement's logical shift,
             complemented), the sign bit of a bit-field extract (its top bit, a 32:1
             select of two ``Mux4`` levels), the bit-field mask (all ones for a shift); the
             words the instruction does not use reset to 0
    stage 7  the bit-field extract and the result: an OR of the words, 5 inputs a bit

The vector unit exchanges S0 and S1 for the instructions whose control word says ``swap``
(``v_subrev_*``, and the shifts whose value is S1), so the lane has no operand swap.

The instructions with 64-bit operands or results are pairs of operations on 32-bit words,
``half`` 0 then 1: the lane's operand ports, adder and result are 32 bits wide, and the
vector unit reads and writes a word per operation. A 64-bit compare subtracts the low words,
then the high words with the low words' carry. A 64-bit shift ``v << n`` (right shifts are
left shifts of the bit-reversed value) takes the same amount in both operations. With
``k = n % 32``, the first multiplies the low word by ``2**k``: its low product word is the
result's low word (0 when ``n >= 32``), and it keeps for the second the product word that
crosses into the high word (the high product word, or the low one when ``n >= 32``); the
second multiplies the high word by ``2**k`` (by 0 when ``n >= 32``) and adds what the first
kept. No barrel shifter: the 64-bit shifts cost the lane a few LUTs beside the 32-bit ones.

Results are bit-identical with :class:`~.valu.IntLaneAlu` and the golden model
(:mod:`gpgpu_hdl.emu.valu_ops`).
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, signed
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from .copy_register import CopyRegister
from .dsp import Mul18, check_style
from .mux4 import Mux4
from .multiplier import _HIGH_OPS, _NARROW_OPS, _SIGNED_OPS, DSP_WIDTH, extend_operand
from .shifter import ShiftOp
from .valu import (
    _ADD_OPS,
    _BFE_OPS,
    _CMP_CONDS,
    _CMP_OPS,
    _MAD_OPS,
    _MINMAX_OPS,
    _MUL_OPS,
    _SHIFT32_OPS,
    _SHIFT64_OPS,
    VALU_INT_OPS,
    ValuOp,
    _member_name,
)

__all__ = ["FAST_OPS", "SLOW_OPS", "LATENCY", "LOGIC_FUNCTIONS", "MOVE_CONTROL", "FastControl",
           "fast_control", "FastDecode", "FastLaneAlu"]

#: register stages from the operands to the result
LATENCY = 8

_LOGIC_FAST = ("v_not_b32", "v_and_b32", "v_or_b32", "v_xor_b32", "v_cndmask_b32")

#: The instructions :class:`FastLaneAlu` computes, in instruction-table order.
FAST_OPS: tuple[str, ...] = tuple(
    n for n in VALU_INT_OPS
    if n in _ADD_OPS or n in _LOGIC_FAST or n in _CMP_OPS or n in _MINMAX_OPS or n in _MUL_OPS
    or n in _SHIFT32_OPS or n in _BFE_OPS or n in _SHIFT64_OPS)

#: The integer VALU instructions left to a slow shared unit, in instruction-table order.
SLOW_OPS: tuple[str, ...] = tuple(n for n in VALU_INT_OPS if n not in FAST_OPS)


#: The decoded control of one fast-lane instruction, shared by the lanes.
#:
#: * ``swap``: the vector unit exchanges S0 and S1 before the lane (``v_subrev_*``, and the
#:   shifts whose value is S1): the lane's first operand is always the minuend or the value;
#: * ``early_add``, ``early_logic``, ``early_minmax``: the result is final after stage 3 and
#:   comes from the adder, the bitwise unit or min/max (none: the result is 0, as for the
#:   compares);
#: * ``use_mul``, ``use_shift``, ``use_bfe``: the result is the product word, the shifted
#:   word or the bit-field extract (none: the early result);
#: * bitwise unit: ``logic`` (:data:`LOGIC_FUNCTIONS`: and, or, xor, xnor of the operand
#:   bits), ``zero_b`` (S1 cleared first: ``v_not_b32`` is xnor with 0, a move or with 0),
#:   ``cndmask`` (the source the lane's select bit does not pick cleared first, then or);
#: * adder: ``add_invert`` (S0 + ~S1), ``add_cin`` (carry in: 0, 1, ``cin``, ``~cin``),
#:   ``add_borrow`` (the flag is the inverted carry out); the compares and min/max subtract;
#: * ``flag_add``, ``flag_cmp``: the flag is the adder's carry/borrow or the compare;
#: * compare: ``cmp_signed``, ``cmp_wide`` (64-bit), ``cmp_cond`` (index into
#:   ``f lt eq le gt ne ge t``), ``is_max`` (min/max picks the larger);
#: * multiplier: ``mul_signed``, ``mul_narrow`` (24-bit operands), ``mul_high`` (bits 63:32),
#:   ``mad`` (S2 added to the product);
#: * shifts: ``shift_mode`` (the multiplier shifts), ``shift_right``, ``shift_arith``,
#:   ``shift64`` (a 64-bit value: two operations).
FastControl = data.StructLayout({
    "swap": 1, "early_add": 1, "early_logic": 1, "early_minmax": 1, "shift64": 1,
    "use_mul": 1, "use_shift": 1, "use_bfe": 1,
    "add_invert": 1, "add_cin": 2, "add_borrow": 1,
    "flag_add": 1, "flag_cmp": 1,
    "logic": 2, "zero_b": 1, "cndmask": 1,
    "cmp_signed": 1, "cmp_wide": 1, "cmp_cond": 3, "is_max": 1,
    "mul_signed": 1, "mul_narrow": 1, "mul_high": 1, "mad": 1,
    "shift_mode": 1, "shift_right": 1, "shift_arith": 1,
})

_ADD_CIN = {0: 0, 1: 1, "cin": 2, "~cin": 3}
#: the bitwise unit's functions of the operand bits, by the control word's ``logic``
LOGIC_FUNCTIONS = ("and", "or", "xor", "xnor")
#: the bitwise instructions: (function, S1 cleared first)
_LOGIC_OF = {"v_not_b32": ("xnor", 1), "v_and_b32": ("and", 0), "v_or_b32": ("or", 0),
             "v_xor_b32": ("xor", 0)}
#: the subtract of the compares and min/max
_SUBTRACT = {"add_invert": 1, "add_cin": 1}


def fast_control(mnemonic: str) -> dict:
    """The :data:`FastControl` fields of a :data:`FAST_OPS` instruction (the others 0).

    Raises
    ------
    ValueError
        If ``mnemonic`` is not in :data:`FAST_OPS`.
    """
    if mnemonic not in FAST_OPS:
        raise ValueError(f"{mnemonic!r} is not a fast-lane instruction (FAST_OPS)")
    c: dict = {}
    if mnemonic in _ADD_OPS:
        x, _, invert, cin, borrow = _ADD_OPS[mnemonic]
        c |= {"early_add": 1, "swap": int(x == "b"),
              "add_invert": int(invert), "add_cin": _ADD_CIN[cin], "add_borrow": int(borrow),
              "flag_add": 1}
    elif mnemonic in _LOGIC_OF:
        function, zero_b = _LOGIC_OF[mnemonic]
        c |= {"early_logic": 1, "logic": LOGIC_FUNCTIONS.index(function), "zero_b": zero_b}
    elif mnemonic == "v_cndmask_b32":
        c |= {"early_logic": 1, "logic": LOGIC_FUNCTIONS.index("or"), "cndmask": 1}
    elif mnemonic in _CMP_OPS:
        cond, is_signed, wide = _CMP_OPS[mnemonic]
        c |= {"flag_cmp": 1, "cmp_signed": int(is_signed),
              "cmp_wide": int(wide), "cmp_cond": _CMP_CONDS.index(cond), **_SUBTRACT}
    elif mnemonic in _MINMAX_OPS:
        c |= {"early_minmax": 1, "cmp_signed": int(mnemonic.endswith("_i32")),
              "is_max": int("_max_" in mnemonic), **_SUBTRACT}
    elif mnemonic in _MUL_OPS:
        op = _MUL_OPS[mnemonic]
        c |= {"use_mul": 1, "mul_signed": int(op in _SIGNED_OPS),
              "mul_narrow": int(op in _NARROW_OPS), "mul_high": int(op in _HIGH_OPS),
              "mad": int(mnemonic in _MAD_OPS)}
    elif mnemonic in _SHIFT32_OPS:
        op, reverse = _SHIFT32_OPS[mnemonic]
        c |= {"use_shift": 1, "shift_mode": 1, "swap": int(reverse),
              "shift_right": int(op != ShiftOp.SHL), "shift_arith": int(op == ShiftOp.ASHR)}
    elif mnemonic in _BFE_OPS:
        op = _BFE_OPS[mnemonic]
        c |= {"use_bfe": 1, "shift_mode": 1, "shift_right": 1,
              "shift_arith": int(op == ShiftOp.ASHR)}
    else:   # the 64-bit shifts
        op = _SHIFT64_OPS[mnemonic]
        c |= {"use_shift": 1, "shift_mode": 1, "shift64": 1,
              "shift_right": int(op != ShiftOp.SHL), "shift_arith": int(op == ShiftOp.ASHR)}
    return c


#: The :data:`FastControl` fields of ``v_mov_b32`` in the fast lanes: S0 through the bitwise
#: unit (or with S1 cleared).
MOVE_CONTROL = {"early_logic": 1, "logic": LOGIC_FUNCTIONS.index("or"), "zero_b": 1}


class FastDecode(wiring.Component):
    """The :data:`FastControl` word of a :class:`~.valu.ValuOp` (combinational: a ROM).

    Members
    -------
    op : In(ValuOp)
        Operation.
    fast : Out(1)
        1 when ``op`` is one of :data:`FAST_OPS`.
    control : Out(FastControl)
        Its control word (all 0 for an instruction outside :data:`FAST_OPS`).
    """

    op: In(ValuOp)
    fast: Out(1)
    control: Out(FastControl)

    def elaborate(self, platform):
        m = Module()
        with m.Switch(self.op):
            for name in FAST_OPS:
                with m.Case(ValuOp[_member_name(name)]):
                    m.d.comb += [self.fast.eq(1),
                                 self.control.eq(FastControl.const(fast_control(name)))]
        return m


def _thermometer(value, width: int = 32):
    """``width`` bits, bit ``i`` set when ``value > i``: a ROM indexed by ``value`` (LUTs; a
    compare per bit would become a carry chain each)."""
    return Array(Const((1 << min(v, width)) - 1, width)
                 for v in range(1 << len(value)))[value]


def _reverse(value):
    return value[::-1]


def _csa(x, y, z, width: int):
    """Carry-save addition: (sum, carry) with ``x + y + z == sum + carry`` modulo
    ``2**width``, one LUT level (the scalar ALU's multiplier uses it)."""
    return (x ^ y ^ z)[:width], Cat(Const(0, 1), ((x & y) | (x & z) | (y & z))[:width - 1])


class FastLaneAlu(wiring.Component):
    """One lane of the pipelined integer VALU: the :data:`FAST_OPS` instructions.

    A pipeline of :data:`LATENCY` register stages with no enable: the operands and control
    word presented in a cycle give ``result`` and ``flag`` :data:`LATENCY` cycles later, one
    operation a cycle. Operands are 32-bit words of raw register bits, as
    :class:`~.valu.IntLaneAlu` takes them. The lane registers every input first (stage 0),
    the control word in its own copy, so that a control bit shared by many lanes loads one
    register in each. A bubble is a no-op: a control word of 0.

    The operands are S0 and S1 exchanged when the control word says ``swap`` (the vector unit
    does it). **An instruction with 64-bit operands or result** (the 64-bit compares and
    shifts) is a pair of operations, ``half`` 0 and then 1, with bubbles allowed between them
    but no other operation: the first takes the low words (a right shift: the high word of
    its value), the second the other words; a compare's flag comes with the second, a shift's
    result words one with each (word ``shift_right`` first).

    Parameters
    ----------
    dsp : str
        How the multipliers are built: ``"generic"`` (simulation, any target) or ``"ecp5"``
        (``MULT18X18D`` with its own registers), see :mod:`~gpgpu_hdl.cu.dsp`; also the style
        of the stage-0 registers of the inputs every lane shares (the control word and
        ``half``), :class:`~.copy_register.CopyRegister` registers, so
        each lane keeps its own copies through synthesis (Yosys merges identical registers,
        and the lanes' control registers would be one or two copies driving every lane).
    copy : int
        The power-on value of the lane's control registers, which have no reset (what keeps
        the generic style's copies apart, in the bits where lanes' values differ). Results do
        not depend on it.

    Members
    -------
    control : In(FastControl)
        The instruction's control word (from :class:`FastDecode`).
    src0 : In(32)
        First source operand (a word of it, in a pair).
    src1 : In(32)
        Second source operand (a word of it, in a pair; a 64-bit shift's amount in both).
    src2 : In(32)
        Third source operand (``v_bfe_*``, ``v_mad_*_24``).
    cin : In(1)
        This lane's carry/borrow in or ``v_cndmask_b32`` select (1 picks S1).
    half : In(1)
        Which operation of a pair this is (0 for everything else).
    result : Out(32)
        The result word, :data:`LATENCY` cycles after the inputs; 0 for the compares.
    flag : Out(1)
        The compare result, or the carry/borrow out of the add/subtract family; 0 otherwise.
    """

    control: In(FastControl)
    src0: In(32)
    src1: In(32)
    src2: In(32)
    cin: In(1)
    half: In(1)
    result: Out(32)
    flag: Out(1)

    def __init__(self, *, dsp: str = "generic", copy: int = 0):
        self._dsp = check_style(dsp, "dsp")
        self._copy = copy
        super().__init__()

    @property
    def dsp(self) -> str:
        """How the four partial-product multipliers are built (:data:`~.dsp.DSP_STYLES`)."""
        return self._dsp

    @property
    def latency(self) -> int:
        """Clock cycles from the inputs to ``result`` and ``flag``: :data:`LATENCY`."""
        return LATENCY

    def _select32(self, m, word, index):
        """Bit ``index`` (5 bits) of the 32-bit ``word``: two :class:`~.mux4.Mux4` levels
        (8 then 2 bits; one LUT4 level each on ECP5) and a 2:1 select, about 21 LUT4s where
        a one-hot decode of the index and an AND-OR of it took about 58."""
        m.submodules.top_pick0 = first = Mux4(8, style=self._dsp)
        m.submodules.top_pick1 = second = Mux4(2, style=self._dsp)
        m.d.comb += [first.data[k][i].eq(word[4 * i + k]) for k in range(4) for i in range(8)]
        m.d.comb += [second.data[k][i].eq(first.out[4 * i + k]) for k in range(4)
                     for i in range(2)]
        m.d.comb += [first.sel.eq(index[:2]), second.sel.eq(index[2:4])]
        return Mux(index[4], second.out[1], second.out[0])

    def elaborate(self, platform):
        m = Module()

        def control_stage(n: int, value):
            """Stage ``n``'s copy of the control word (see ``copy``)."""
            raw = Signal(FastControl.size, name=f"s{n}_control",
                         init=self._copy % (1 << FastControl.size), reset_less=True)
            m.d.sync += raw.eq(value.as_value())
            return data.View(FastControl, raw)

        def stage(n: int, name: str, value, shape=None):
            """A register of stage ``n`` loaded with ``value`` every cycle (no reset: the
            lane's data mean nothing until an operation reaches them)."""
            reg = Signal(shape if shape is not None else len(value), name=f"s{n}_{name}",
                         reset_less=True)
            m.d.sync += reg.eq(value)
            return reg

        def copy_stage(name: str, value):
            """Stage 0's copy of ``value``, an input every lane shares: a
            :class:`~.copy_register.CopyRegister`, so that it stays the lane's own (the later
            stages' registers load from it, so they differ between lanes too)."""
            m.submodules[f"s0_{name}"] = reg = CopyRegister(len(value), style=self._dsp,
                                                            init=self._copy)
            m.d.comb += reg.d.eq(value)
            return reg.q

        # --- stage 0: the inputs, with the lane's own copy of the control --------------------
        ctl = data.View(FastControl, copy_stage("control", self.control.as_value()))
        # the bitwise unit's operands: v_cndmask_b32's unselected source cleared (then or),
        # v_not_b32's and a move's S1 (then xnor, or). The others' results do not use the
        # operands then (a register's synchronous reset: no LUT on the data)
        clear_a = self.control.cndmask & self.cin
        clear_b = self.control.zero_b | (self.control.cndmask & ~self.cin)
        a = stage(0, "src0", Mux(clear_a, 0, self.src0))
        b = stage(0, "src1", Mux(clear_b, 0, self.src1))
        c = stage(0, "src2", self.src2)
        cin = stage(0, "cin", self.cin)
        half = copy_stage("half", self.half)
        # the first operation of a pair leaves what the second needs in registers that hold
        # through bubbles (which are no-ops: a control word of 0)
        first = (ctl.cmp_wide | ctl.shift64) & ~half
        second = (ctl.cmp_wide | ctl.shift64) & half

        # --- stage 1 -------------------------------------------------------------------------
        s1 = control_stage(1, ctl)
        # the adder: S0 + S1 (or + ~S1) + carry in: the add/subtract family's result; the
        # compares and min/max subtract, and take the lower-than from its carry out and the
        # operands' top bits (stage 2). A 64-bit compare subtracts the high words with the
        # low words' carry.
        y = Mux(ctl.add_invert, ~b, b)
        # the low words' carry out and equality
        p_carry = Signal(name="p_carry", reset_less=True)
        p_eq = Signal(name="p_eq", reset_less=True)
        ci = Mux(second, p_carry, Mux(ctl.add_cin[1], cin ^ ctl.add_cin[0], ctl.add_cin[0]))
        total = Signal(33, name="total")
        m.d.comb += total.eq(a + y + ci)
        s1_sum = stage(1, "sum", total)
        s1_top = stage(1, "top", Cat(a[31], b[31]))
        eq = a == b
        s1_eq = stage(1, "eq", eq & (~second | p_eq))
        with m.If(first):
            m.d.sync += [p_carry.eq(total[32]), p_eq.eq(eq)]

        logic = Signal(32, name="logic")
        with m.Switch(ctl.logic):
            for code, function in enumerate(LOGIC_FUNCTIONS):
                with m.Case(code):
                    m.d.comb += logic.eq({"and": a & b, "or": a | b, "xor": a ^ b,
                                          "xnor": ~(a ^ b)}[function])
        s1_logic = stage(1, "logic", logic)
        # min/max's operands, 0 for the other instructions (a reset, not a LUT), so that its
        # pick in stage 3 needs no enable
        s1_a = stage(1, "a", Mux(ctl.early_minmax, a, 0))
        s1_b = stage(1, "b", Mux(ctl.early_minmax, b, 0))
        # the addend of v_mad_*_24, carried to stage 4
        s1_addend = stage(1, "addend", Mux(ctl.mad, c, 0), 32)

        # multiplier operands: the 33-bit extended multiply operands, or the shift's value
        # (bit-reversed for right shifts) and one-hot factor (bit 32 is a don't-care then). A
        # 64-bit shift shifts the low word of its (reversed) value first, then the high one,
        # by 2**(n % 32); by 0 in the second operation when n >= 32.
        ge32 = b[5]
        shift_amount = b[:5]
        no_factor = second & ge32
        factor = Cat((shift_amount == i) & ~no_factor for i in range(32))
        # an arithmetic right shift of a negative value is a logical one of its inverse,
        # inverted (``inv``: the sign, in the high word, the first operation's value for a
        # 64-bit shift): the lane has no sign-fill masks. A right shift's value bit is then a
        # LUT4 of its two bits, ``rev`` and ``inv`` (below 24, the extended operand's bit is
        # the value's)
        p_sign = Signal(name="p_sign", reset_less=True)
        with m.If(first):
            m.d.sync += p_sign.eq(a[31])
        rev = ctl.shift_mode & ctl.shift_right
        inv = ctl.shift_arith & Mux(second, p_sign, a[31])
        low, sign = extend_operand(a, ctl.mul_narrow, ctl.mul_signed)
        mul_in = [Mux(rev, Cat(_reverse(a) ^ inv.replicate(32), Const(0, 1)),
                      Mux(ctl.shift_mode, Cat(a, Const(0, 1)), Cat(low, sign)))]
        low, sign = extend_operand(b, ctl.mul_narrow, ctl.mul_signed)
        mul_in.append(Mux(ctl.shift_mode, Cat(factor, Const(0, 1)), Cat(low, sign)))
        # registered in the fabric: the DSP blocks' own input registers are the next stage, so
        # the route to the DSP column has a cycle of its own
        lo_bits = DSP_WIDTH - 1
        pieces = []
        for k, v in enumerate(mul_in):
            reg = stage(1, f"mul_in{k}", v)
            pieces.append((reg[:lo_bits], reg[lo_bits:].as_signed()))   # zero-, sign-extended
        # what the shift and bit-field extract need after the multiply: the result's
        # inversion
        s1_inv = stage(1, "inv", inv)
        s1_width = stage(1, "width", c[:5])                 # v_bfe: the field's width
        # a 64-bit shift: this operation's word is 0 (the first one, n >= 32), it keeps the
        # word that crosses into the next (the first one), it adds that word (the second one)
        s1_zero = stage(1, "zero", ctl.shift64 & ~half & ge32)
        s1_keep_word = stage(1, "keep_word", ctl.shift64 & ~half)
        s1_join = stage(1, "join", ctl.shift64 & half)
        s1_ge32 = stage(1, "ge32", ge32)

        # --- stage 2: lower-than; the adder's or the bitwise unit's result ------------------
        s2 = control_stage(2, s1)
        (a_lo, a_hi), (b_lo, b_hi) = pieces
        pp = {}     # the partial products: operands registered in the DSP blocks (stage 2),
        for name, x, yy in (("ll", a_lo, b_lo), ("lh", a_lo, b_hi), ("hl", a_hi, b_lo),
                            ("hh", a_hi, b_hi)):        # product (stage 3)
            m.submodules[f"mul_{name}"] = mul = Mul18(style=self._dsp)
            m.d.comb += [mul.a.eq(x), mul.b.eq(yy)]
            pp[name] = mul.product
        # S0 - S1: with the same top bits, S0 < S1 when it borrows (no carry out); with
        # different ones, the signed compare follows S0's sign, the unsigned S1's
        a_top, b_top = s1_top[0], s1_top[1]
        lt = Mux(a_top ^ b_top, Mux(s1.cmp_signed, a_top, b_top), ~s1_sum[32])
        carried = {name: stage(2, name, value) for name, value in (
            ("early", Mux(s1.early_add, s1_sum[:32], 0) | Mux(s1.early_logic, s1_logic, 0)),
            ("lt", lt), ("eq", s1_eq), ("a", s1_a), ("b", s1_b),
            ("add_flag", s1.flag_add & (s1_sum[32] ^ s1.add_borrow)),
            ("addend", s1_addend), ("inv", s1_inv),
            ("width", s1_width), ("zero", s1_zero), ("keep_word", s1_keep_word),
            ("join", s1_join), ("ge32", s1_ge32))}

        # --- stage 3: min/max, the flag ------------------------------------------------------
        s3 = control_stage(3, s2)
        lt, eq, a2, b2 = (carried.pop(n) for n in ("lt", "eq", "a", "b"))
        conds = Cat(Const(0, 1), lt, eq, lt | eq, ~(lt | eq), ~eq, ~lt, Const(1, 1))
        carried["early"] = carried["early"] | Mux(lt ^ s2.is_max, a2, b2)
        carried["flag"] = ((s2.flag_cmp & conds.bit_select(s2.cmp_cond, 1))
                           | carried.pop("add_flag"))
        carried = {name: stage(3, name, value) for name, value in carried.items()}

        # --- stage 4: the middle partial products' sum; the low one's low word + the addend -
        # The low partial product (two 17-bit unsigned operands) is under 2**34, so it and the
        # high one shifted by 34 are side by side in the product: only the middle sum is added
        # to them. v_mad_*_24's result is the low word of the product + S2, so the addend is
        # added to the low word alone (its carry out is dropped: no instruction with an addend
        # uses the high word).
        s4 = control_stage(4, s3)
        s4_mid = stage(4, "mid", pp["lh"] + pp["hl"], signed(2 * DSP_WIDTH + 1))
        s4_ll = stage(4, "pp_ll", pp["ll"][:32] + carried.pop("addend"), 32)
        s4_ll_hi = stage(4, "pp_ll_hi", pp["ll"][32:2 * lo_bits])
        s4_hh = stage(4, "pp_hh", pp["hh"][:64 - 2 * lo_bits])
        carried = {name: stage(4, name, value) for name, value in carried.items()}

        # --- stage 5: the product (+ the addend), 64 bits: one carry chain from bit 17 ---------
        s5 = control_stage(5, s4)
        w = 64
        t_sides = Signal(w, name="t_sides")         # the low and high partial products
        t_mid = Signal(w - lo_bits, name="t_mid")   # the middle sum from bit 17, sign-extended
        m.d.comb += [t_sides.eq(Cat(s4_ll, s4_ll_hi, s4_hh)), t_mid.eq(s4_mid)]
        s5_product = stage(5, "product",
                           Cat(t_sides[:lo_bits], t_sides[lo_bits:] + t_mid), w)
        # the field's top bit's place (width - 1) and whether there is a field (width 0:
        # none, and no sign), for the select in stage 6
        carried["top_at"] = (carried["width"] - 1)[:5]
        carried["field"] = carried["width"] != 0
        carried = {name: stage(5, name, value) for name, value in carried.items()}

        # --- stage 6: the product word, the shift's reversal and sign fill, bfe's top bit ----
        low = s5_product[:32]
        word = Mux(s5.mul_high, s5_product[32:], low)
        # the shifted word: a 64-bit shift's second operation adds (ORs: the bits are apart)
        # the word its first one carried out
        s6_carry = Signal(32, name="s6_carry", reset_less=True)
        shift_word = (Mux(carried["zero"], 0, low) | Mux(carried["join"], s6_carry, 0))
        with m.If(carried["keep_word"]):
            m.d.sync += s6_carry.eq(Mux(carried["ge32"], low, s5_product[32:]))
        inv = carried["inv"]
        shifted = Mux(s5.shift_right, _reverse(shift_word) ^ inv.replicate(32), shift_word)
        # the words the instruction does not use are 0 (a reset, not a LUT: the early result
        # is 0 already for the others), the bit-field mask all ones unless it is a v_bfe
        s6_mul = stage(6, "mul", Mux(s5.use_mul, word, 0))
        s6_shift = stage(6, "shift", Mux(s5.use_shift | s5.use_bfe, shifted, 0))
        top = self._select32(m, _reverse(low), carried["top_at"])
        s6_fill = stage(6, "fill", (top ^ inv) & carried["field"] & s5.shift_arith
                        & s5.use_bfe)
        s6_early = stage(6, "early", carried["early"])
        s6_flag = stage(6, "flag", carried["flag"])
        s6_keep = stage(6, "keep", Mux(s5.use_bfe, _thermometer(carried["width"]),  # S2[4:0]
                                       Const(-1, 32)))

        # --- stage 7: the bit-field mask and the result: an OR of the words ------------------
        s7_result = stage(7, "result", s6_early | s6_mul | (s6_shift & s6_keep)
                          | (~s6_keep & s6_fill.replicate(32)))
        s7_flag = stage(7, "flag", s6_flag)
        m.d.comb += [self.result.eq(s7_result), self.flag.eq(s7_flag)]
        return m
