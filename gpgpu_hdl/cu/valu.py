"""Integer vector ALU of the compute unit: one lane.

:data:`VALU_INT_OPS` lists, in instruction-table order, every vector integer instruction (table
unit ``valu``) that the ALU computes: all of them except the moves and the cross-lane
operations the core sequencer performs itself (``v_nop``, ``v_clrexcp``, ``v_mov_b32``,
``v_readlane_b32``, ``v_readfirstlane_b32``, ``v_movrels_b32``, ``v_movreld_b32``,
``v_movrelsd_b32``) and ``v_writelane_b32``, which the compute unit does not implement (it
decodes as illegal and traps). :class:`ValuOp` is generated from it, and
:class:`IntLaneAlu` implements one lane of it with the semantics of the golden model,
:mod:`gpgpu_hdl.emu.valu_ops`, bit for bit.

The ALU is built only from what its ``ops`` need. The functional units are submodules:

* ``mul``: :class:`~gpgpu_hdl.cu.multiplier.MulUnit` (table subunit ``mul``: the 32x32 and
  24x24 multiplies; ``v_mad_*_24`` add their third operand in the shared adder);
* ``shift32``: a 32-bit shifter of the configured style (:func:`~.shifter.make_shifter`) for
  the 32-bit shifts and ``v_bfe_*``, unless the multiplier does them (below);
* ``shift64``: a 64-bit shifter of the configured style for ``v_lshl_b64``, ``v_lshr_b64``,
  ``v_ashr_i64``;
* ``align``: a :class:`FunnelShifter` for ``v_alignbit_b32`` and ``v_alignbyte_b32``.

With the ``"multiplier"`` shifter style and both a multiply and a 32-bit shift (or
``v_bfe_*``) built, there is no ``shift32``: the 32-bit shifts run through the multiplier of
``mul`` (a :class:`~gpgpu_hdl.cu.multiplier.MulUnit` built with ``shifts=True``), the eGPU
integrated shifter (Langhammer and Baeckler, "A 950 MHz SIMT Soft Processor", section 4.2).
The lane then has one multiplier array, whose inputs are multiplexed between the multiply
operands and the shift operands by ``op``, and the shifter costs only those multiplexers, the
one-hot decoder and the sign fill (:attr:`IntLaneAlu.shift32_in_mul`). Without a multiply the
``"multiplier"`` style builds a standalone
:class:`~gpgpu_hdl.cu.shifter.MultiplierShifter` with its own multiplier. The 64-bit shifts
always have their own shifter of the configured style: one 33x33 multiplier cannot form a
64-bit shift in one pass.

The rest is soft logic shared between the instructions that can share it: one 65-bit
comparator for the compares, the ``min``/``max`` family and ``v_sad_u32``; one 33-bit adder for
the add/subtract family and every "plus the last operand" instruction (``v_bcnt``,
``v_mbcnt_*``, ``v_sad_*``, ``v_msad_u8``, ``v_mad_*_24``); one population count; one
leading-zero counter for ``v_ffbh_*``/``v_ffbl_b32``; one set of byte absolute differences
for the byte SADs.
"""

import types

from amaranth.hdl import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import enum, wiring
from amaranth.lib.wiring import In, Out

from ..isa.table import TABLE, Unit
from .multiplier import MulOp, MulUnit
from .shifter import SHIFTER_STYLES, ShiftOp, make_shifter

__all__ = ["VALU_INT_OPS", "ValuOp", "FunnelShifter", "IntLaneAlu"]

#: Vector ALU instructions the core sequencer executes itself (moves, lane access, no-ops).
_CORE_OPS = frozenset({
    "v_nop", "v_clrexcp", "v_mov_b32", "v_readlane_b32", "v_readfirstlane_b32",
    "v_movrels_b32", "v_movreld_b32", "v_movrelsd_b32",
})

#: Mnemonics of the instructions :class:`IntLaneAlu` computes, in instruction-table order.
VALU_INT_OPS: tuple[str, ...] = tuple(
    e.mnemonic for e in TABLE
    if e.unit is Unit.VALU and e.subunit != "lane" and e.mnemonic not in _CORE_OPS)


def _member_name(mnemonic: str) -> str:
    return mnemonic.removeprefix("v_").upper()


def _make_valu_op() -> type:
    def body(namespace):
        namespace["__module__"] = __name__
        namespace["__qualname__"] = "ValuOp"
        namespace["__doc__"] = _VALU_OP_DOC
        for index, mnemonic in enumerate(VALU_INT_OPS):
            namespace[_member_name(mnemonic)] = index
        namespace["mnemonic"] = property(lambda self: "v_" + self.name.lower(),
                                         doc="The instruction's mnemonic, e.g. ``v_add_i32``.")

    shape = unsigned(max(1, (len(VALU_INT_OPS) - 1).bit_length()))
    return types.new_class("ValuOp", (enum.Enum,), {"shape": shape}, body)


_VALU_OP_DOC = """Operation selector of :class:`IntLaneAlu`: one member per :data:`VALU_INT_OPS`.

    Generated from the instruction table: the member name is the mnemonic without its ``v_``
    prefix, upper-cased (``v_add_i32`` is ``ValuOp.ADD_I32``), and the value its index in
    :data:`VALU_INT_OPS` (table order). ``ValuOp.ADD_I32.mnemonic`` gives the mnemonic back.

    Members
    -------
    NOT_B32, BFREV_B32, ..., CMPX_T_U64
        One per :data:`VALU_INT_OPS` entry, in that order.
    """

ValuOp = _make_valu_op()


# --- instruction groups -------------------------------------------------------------------

_MUL_OPS = {
    "v_mul_lo_u32": MulOp.MUL_LO_U32, "v_mul_hi_u32": MulOp.MUL_HI_U32,
    "v_mul_lo_i32": MulOp.MUL_LO_I32, "v_mul_hi_i32": MulOp.MUL_HI_I32,
    "v_mul_u32_u24": MulOp.MUL_U32_U24, "v_mul_hi_u32_u24": MulOp.MUL_HI_U32_U24,
    "v_mul_i32_i24": MulOp.MUL_I32_I24, "v_mul_hi_i32_i24": MulOp.MUL_HI_I32_I24,
    "v_mad_u32_u24": MulOp.MUL_U32_U24, "v_mad_i32_i24": MulOp.MUL_I32_I24,
}
_MAD_OPS = ("v_mad_u32_u24", "v_mad_i32_i24")

#: 32-bit shifts: shifter operation and whether the operands are swapped (``*rev`` forms).
_SHIFT32_OPS = {
    "v_lshl_b32": (ShiftOp.SHL, False), "v_lshlrev_b32": (ShiftOp.SHL, True),
    "v_lshr_b32": (ShiftOp.LSHR, False), "v_lshrrev_b32": (ShiftOp.LSHR, True),
    "v_ashr_i32": (ShiftOp.ASHR, False), "v_ashrrev_i32": (ShiftOp.ASHR, True),
}
#: Bit-field extracts: a right shift in the 32-bit shifter, then a mask.
_BFE_OPS = {"v_bfe_u32": ShiftOp.LSHR, "v_bfe_i32": ShiftOp.ASHR}
_SHIFT64_OPS = {"v_lshl_b64": ShiftOp.SHL, "v_lshr_b64": ShiftOp.LSHR,
                "v_ashr_i64": ShiftOp.ASHR}
_ALIGN_OPS = ("v_alignbit_b32", "v_alignbyte_b32")

#: Add/subtract with carry or borrow out: (x, y, invert y, carry in, flag is the borrow) where
#: the adder computes ``x + (~y if invert else y) + carry_in`` with x and y "a" (src0) or "b"
#: (src1) and carry in 0, 1, "cin" or "~cin" (a borrow in is an inverted carry in).
_ADD_OPS = {
    "v_add_i32": ("a", "b", False, 0, False),
    "v_sub_i32": ("a", "b", True, 1, True),
    "v_subrev_i32": ("b", "a", True, 1, True),
    "v_addc_u32": ("a", "b", False, "cin", False),
    "v_subb_u32": ("a", "b", True, "~cin", True),
    "v_subbrev_u32": ("b", "a", True, "~cin", True),
}
_POPCOUNT_OPS = ("v_bcnt_u32_b32", "v_mbcnt_lo_u32_b32", "v_mbcnt_hi_u32_b32")
_LZC_OPS = ("v_ffbh_u32", "v_ffbh_i32", "v_ffbl_b32")
_BYTE_SAD_OPS = ("v_sad_u8", "v_sad_hi_u8", "v_msad_u8", "v_mqsad_pk_u16_u8")
_SAD_OPS = ("v_sad_u8", "v_sad_hi_u8", "v_sad_u16", "v_sad_u32", "v_msad_u8")
_MINMAX_OPS = ("v_min_i32", "v_max_i32", "v_min_u32", "v_max_u32")
_MINMAX3_OPS = ("v_min3_i32", "v_max3_i32", "v_min3_u32", "v_max3_u32",
                "v_med3_i32", "v_med3_u32")
_LOGIC_OPS = ("v_not_b32", "v_and_b32", "v_or_b32", "v_xor_b32", "v_bfi_b32", "v_bfm_b32",
              "v_bfrev_b32", "v_cndmask_b32", "v_lerp_u8", "v_cvt_pk_u16_u32",
              "v_cvt_pk_i16_i32")

#: Integer compares (VOPC): mnemonic -> (condition, signed, 64-bit).
_CMP_OPS = {}
for _info in TABLE:
    if _info.mnemonic in VALU_INT_OPS and _info.mnemonic.startswith(("v_cmp_", "v_cmpx_")):
        _, _, _cond, _type = _info.mnemonic.split("_")
        _CMP_OPS[_info.mnemonic] = (_cond, _type[0] == "i", _type[1:] == "64")
_CMP_CONDS = ("f", "lt", "eq", "le", "gt", "ne", "ge", "t")

#: Comparator users besides the compares: signed forms of min/max, and v_sad_u32.
_SIGNED_OPS = frozenset(
    [name for name, (_, is_signed, _) in _CMP_OPS.items() if is_signed]
    + [name for name in _MINMAX_OPS + _MINMAX3_OPS if name.endswith("_i32")])
_WIDE_CMP_OPS = frozenset(name for name, (_, _, wide) in _CMP_OPS.items() if wide)

_IMPLEMENTED = frozenset(
    [*_MUL_OPS, *_SHIFT32_OPS, *_BFE_OPS, *_SHIFT64_OPS, *_ALIGN_OPS, *_ADD_OPS,
     *_POPCOUNT_OPS, *_LZC_OPS, *_BYTE_SAD_OPS, *_SAD_OPS, *_MINMAX_OPS, *_MINMAX3_OPS,
     *_LOGIC_OPS, *_CMP_OPS])
if frozenset(VALU_INT_OPS) != _IMPLEMENTED:   # the table changed under this module
    raise RuntimeError(f"IntLaneAlu is out of step with the instruction table: not implemented "
                       f"{sorted(set(VALU_INT_OPS) - _IMPLEMENTED)}, unknown "
                       f"{sorted(_IMPLEMENTED - set(VALU_INT_OPS))}")


# --- building blocks ----------------------------------------------------------------------

class FunnelShifter(wiring.Component):
    """32-bit funnel shifter: the low word of a 64-bit value shifted right by 0 to 31.

    Computes ``(({hi, lo}) >> amount)[31:0]``, which is ``v_alignbit_b32`` (and, with the
    amount a multiple of 8, ``v_alignbyte_b32``). A multiplexer network of five stages whose
    width shrinks from 63 to 32 bits as the remaining distance shrinks (about 190 two-input
    multiplexers), in soft logic whatever the shifter style. Purely combinational (latency 0).

    Members
    -------
    hi : In(32)
        Upper word of the value.
    lo : In(32)
        Lower word of the value.
    amount : In(5)
        Shift distance, 0 to 31.
    result : Out(32)
        Bits ``[amount + 31 : amount]`` of ``{hi, lo}``, valid in the same cycle as the inputs.
    """

    hi: In(32)
    lo: In(32)
    amount: In(5)
    result: Out(32)

    @property
    def latency(self) -> int:
        """Clock cycles from the inputs to ``result``: 0, the unit is combinational."""
        return 0

    def elaborate(self, platform):
        m = Module()
        value = Cat(self.lo, self.hi[:31])     # bit 63 never reaches the result
        for i in reversed(range(len(self.amount))):
            dist = 1 << i
            keep = 32 + dist - 1                # what the remaining stages can still select
            stage = Signal(keep, name=f"stage{i}")
            m.d.comb += stage.eq(Mux(self.amount[i], value[dist:dist + keep], value[:keep]))
            value = stage
        m.d.comb += self.result.eq(value)
        return m


def _thermometer(value, width: int, offset: int = 0):
    """``width`` bits, bit ``i`` set when ``value > i + offset`` (the unary code of value)."""
    return Cat(value > i + offset for i in range(width))


def _sum_tree(terms):
    """Sum of values (or of the bits of one value: its population count) as a balanced adder
    tree."""
    terms = list(terms)
    while len(terms) > 1:
        pairs = [terms[i] + terms[i + 1] for i in range(0, len(terms) - 1, 2)]
        terms = pairs + terms[len(pairs) * 2:]
    return terms[0]


def _leading_zeros(value):
    """(count, zero) of a power-of-two-wide value: its leading zeros, ``len(value)`` when it is
    zero, built as a tree of halves."""
    if len(value) == 1:
        return ~value[0], ~value[0]
    half = len(value) // 2
    count_hi, zero_hi = _leading_zeros(value[half:])
    count_lo, zero_lo = _leading_zeros(value[:half])
    return Mux(zero_hi, half + count_lo, count_hi), zero_hi & zero_lo


def _absdiff(m, x, y, name: str):
    """``|x - y|`` of unsigned values, as a named signal."""
    diff = Signal(max(len(x), len(y)), name=name)
    m.d.comb += diff.eq(Mux(x > y, x - y, y - x))
    return diff


# --- the ALU ------------------------------------------------------------------------------

class IntLaneAlu(wiring.Component):
    """One lane of the integer vector ALU: every :data:`VALU_INT_OPS` instruction.

    The result equals the golden model's (:data:`gpgpu_hdl.emu.valu_ops.VALU_OPS`) for the lane.
    Operands are raw register bits: a 32-bit operand slot reads the low 32 bits of its port
    and ignores the rest; a 64-bit slot (``v_cmp*_i64``/``u64`` sources, the first source of the
    64-bit shifts, the first and third sources of ``v_mqsad_pk_u16_u8``) reads all 64. Purely
    combinational (latency 0).

    How the irregular instructions are built:

    * ``v_bfe_u32``/``v_bfe_i32``: the 32-bit shifter shifts S0 right (logically or
      arithmetically) by ``S1[4:0]``, then the low ``S2[4:0]`` bits are kept and, for the
      signed form, the bits above filled with the top kept bit. The arithmetic shift makes a
      field reaching past bit 31 come out as ``(int)S0 >> offset``, as the golden model has it.
    * ``v_bfm_b32``: ``therm(S0[4:0] + S1[4:0]) & ~therm(S1[4:0])``, with ``therm(n)`` the
      32-bit unary code of ``n`` (constant compares, no shifter).
    * ``v_alignbit_b32``/``v_alignbyte_b32``: the :class:`FunnelShifter` ``align``.
    * ``v_sad_*``/``v_msad_u8``/``v_mqsad_pk_u16_u8``: per-byte (per-half) absolute
      differences, summed by an adder tree and added to S2 in the shared adder (the four
      16-bit fields of ``v_mqsad_pk_u16_u8`` have their own adders); ``v_sad_u32`` uses the
      comparator's ``S0 < S1`` to pick ``S1 - S0`` or ``S0 - S1``.
    * ``v_ffbh_*``/``v_ffbl_b32``: one leading-zero counter, fed with S0, S0 xor its sign, or
      S0 bit-reversed.
    * ``v_mbcnt_lo/hi_u32_b32``: the population count of S0 masked with the unary code of
      ``lane`` (respectively ``lane - 32``), plus S1.

    Parameters
    ----------
    ops : iterable of str
        Mnemonics of the instructions to build (default: all of :data:`VALU_INT_OPS`). Only the
        hardware these need is elaborated; any other ``op`` gives ``result`` and ``flag`` 0.
    shifter : str
        Style of the 32- and 64-bit shifters: ``"barrel"`` or ``"multiplier"`` (see
        :func:`~gpgpu_hdl.cu.shifter.make_shifter`). With ``"multiplier"``, the 32-bit shifts
        share the multiplier of the multiplies when there are any (:attr:`shift32_in_mul`).

    Raises
    ------
    ValueError
        If ``ops`` names an instruction not in :data:`VALU_INT_OPS` or is a string, or
        ``shifter`` is not a shifter style.

    Members
    -------
    op : In(ValuOp)
        Operation.
    src0 : In(64)
        First source operand (raw bits).
    src1 : In(64)
        Second source operand (raw bits).
    src2 : In(64)
        Third source operand (raw bits).
    cin : In(1)
        This lane's bit of the SGPR-pair operand: carry in of ``v_addc_u32``, borrow in of
        ``v_subb_u32``/``v_subbrev_u32``, select of ``v_cndmask_b32`` (1 selects src1).
    lane : In(6)
        Lane number within the wave, 0 to 63 (for ``v_mbcnt_*``).
    result : Out(64)
        Destination value; 32-bit results are zero-extended; 0 for the compares.
    flag : Out(1)
        The compare result (VOPC and ``v_cmpx_*``; the core writes it to VCC, an SGPR pair or
        EXEC), the carry out of ``v_add_i32``/``v_addc_u32``, the borrow out of
        ``v_sub_i32``/``v_subrev_i32``/``v_subb_u32``/``v_subbrev_u32``; 0 otherwise.
    """

    op: In(ValuOp)
    src0: In(64)
    src1: In(64)
    src2: In(64)
    cin: In(1)
    lane: In(6)
    result: Out(64)
    flag: Out(1)

    def __init__(self, *, ops=None, shifter: str = "barrel"):
        if ops is None:
            ops = VALU_INT_OPS
        if isinstance(ops, str):
            raise ValueError(f"ops must be an iterable of mnemonics, not the string {ops!r}")
        ops = frozenset(ops)
        unknown = sorted(map(repr, ops - frozenset(VALU_INT_OPS)))
        if unknown:
            raise ValueError(f"ops must be integer vector ALU mnemonics (VALU_INT_OPS); "
                             f"unknown: {', '.join(unknown)}")
        if shifter not in SHIFTER_STYLES:
            raise ValueError(f"shifter must be one of {', '.join(map(repr, SHIFTER_STYLES))}, "
                             f"not {shifter!r}")
        self._ops = ops
        self._shifter = shifter
        super().__init__()

    @property
    def ops(self) -> frozenset[str]:
        """Mnemonics of the instructions built."""
        return self._ops

    @property
    def shifter(self) -> str:
        """Shifter style: ``"barrel"`` or ``"multiplier"``."""
        return self._shifter

    @property
    def latency(self) -> int:
        """Clock cycles from the inputs to ``result`` and ``flag``: 0, the ALU is
        combinational."""
        return 0

    @property
    def shift32_in_mul(self) -> bool:
        """Whether the 32-bit shifts and ``v_bfe_*`` run through the multiplier of ``"mul"``.

        True exactly when the shifter style is ``"multiplier"`` and the ALU builds both a
        multiply (``v_mul_*``, ``v_mad_*_24``) and a 32-bit shift or ``v_bfe_*``. Then
        :attr:`units` has ``"mul"`` (a :class:`~gpgpu_hdl.cu.multiplier.MulUnit` built with
        ``shifts=True``) and no ``"shift32"``: the 32-bit shifter is the multiplier's input and
        output multiplexers, not a unit of its own. For a cost model: while a multiply stays,
        the multiplier-style 32-bit shifter is almost free; once the last multiply goes, it
        becomes a standalone :class:`~gpgpu_hdl.cu.shifter.MultiplierShifter` (``"shift32"``,
        with a multiplier of its own), and a barrel shifter may then be the cheaper one."""
        return (self._shifter == "multiplier" and self._any(_MUL_OPS)
                and self._any([*_SHIFT32_OPS, *_BFE_OPS]))

    @property
    def units(self) -> frozenset[str]:
        """Names of the functional-unit submodules built: a subset of ``"mul"``
        (:class:`~gpgpu_hdl.cu.multiplier.MulUnit`), ``"shift32"``, ``"shift64"`` (shifters of
        the configured style) and ``"align"`` (:class:`FunnelShifter`). When
        :attr:`shift32_in_mul` is true, the 32-bit shifts are part of ``"mul"`` and there is no
        ``"shift32"``."""
        units = set()
        if self._any(_MUL_OPS):
            units.add("mul")
        if self._any([*_SHIFT32_OPS, *_BFE_OPS]) and not self.shift32_in_mul:
            units.add("shift32")
        if self._any(_SHIFT64_OPS):
            units.add("shift64")
        if self._any(_ALIGN_OPS):
            units.add("align")
        return frozenset(units)

    def _any(self, names) -> bool:
        return not self._ops.isdisjoint(names)

    def _members(self, names) -> list:
        """The ValuOp members of those of ``names`` that are built, in table order."""
        return [ValuOp[_member_name(n)] for n in VALU_INT_OPS if n in names and n in self._ops]

    def elaborate(self, platform):
        m = Module()
        op = self.op.as_value()
        a, b, c = self.src0[:32], self.src1[:32], self.src2[:32]
        units = self.units
        routes = []     # (mnemonics, result, flag): what drives the outputs for which ops

        def decode(names, name):
            """A signal that is 1 when ``op`` is one of the built ops among ``names``."""
            sig = Signal(name=name)
            members = self._members(names)
            if members:
                m.d.comb += sig.eq(op.matches(*members))
            return sig

        def route(names, result, flag=0):
            routes.append((names, result, flag))

        def per_op(choices):
            """Drive signals by instruction. ``choices`` holds (mnemonics, assign) pairs; for the
            built ones among the mnemonics, the statements ``assign()`` returns apply."""
            with m.Switch(op):
                for names, assign in choices:
                    members = self._members(names)
                    if members:
                        with m.Case(*members):
                            m.d.comb += assign()

        # --- bitwise, select, pack ----------------------------------------------------------
        bfm_off, bfm_width = b[:5], a[:5]
        bfm = _thermometer(bfm_off + bfm_width, 32) & ~_thermometer(bfm_off, 32)
        route(["v_not_b32"], ~a)
        route(["v_and_b32"], a & b)
        route(["v_or_b32"], a | b)
        route(["v_xor_b32"], a ^ b)
        route(["v_bfi_b32"], (a & b) | (~a & c))
        route(["v_bfm_b32"], bfm)
        route(["v_bfrev_b32"], a[::-1])
        route(["v_cndmask_b32"], Mux(self.cin, b, a))
        route(["v_lerp_u8"], Cat((a[i:i + 8] + b[i:i + 8] + c[i])[1:9] for i in range(0, 32, 8)))

        def sat_u16(x):
            return Mux(x[16:32].any(), 0xFFFF, x[:16])

        def sat_i16(x):
            fits = x[15:32].all() | ~x[15:32].any()
            return Mux(fits, x[:16], Mux(x[31], 0x8000, 0x7FFF))

        route(["v_cvt_pk_u16_u32"], Cat(sat_u16(a), sat_u16(b)))
        route(["v_cvt_pk_i16_i32"], Cat(sat_i16(a), sat_i16(b)))

        # --- comparator: compares, min/max/med3, |S0 - S1| -------------------------------------
        cmp_users = [*_CMP_OPS, *_MINMAX_OPS, *_MINMAX3_OPS, "v_sad_u32"]
        cmp_lt = Signal()           # S0 < S1 (also read by v_sad_u32)
        if self._any(cmp_users):
            cmp_signed = decode(_SIGNED_OPS, "cmp_signed")
            cmp_wide = decode(_WIDE_CMP_OPS, "cmp_wide")

            def extend(x):
                """65-bit signed form of a 32- or 64-bit operand."""
                top = Mux(cmp_wide, x[63], x[31]) & cmp_signed
                return Cat(x[:32], Mux(cmp_wide, x[32:64], top.replicate(32)), top).as_signed()

            equal = Signal(name="cmp_eq")
            m.d.comb += [
                cmp_lt.eq(extend(self.src0) < extend(self.src1)),
                equal.eq((a == b) & (~cmp_wide | (self.src0[32:64] == self.src1[32:64]))),
            ]
            conditions = {
                "f": Const(0), "lt": cmp_lt, "eq": equal, "le": cmp_lt | equal,
                "gt": ~(cmp_lt | equal), "ne": ~equal, "ge": ~cmp_lt, "t": Const(1),
            }
            for cond in _CMP_CONDS:
                route([n for n, (cnd, _, _) in _CMP_OPS.items() if cnd == cond], 0,
                      conditions[cond])

            lo, hi = Signal(32, name="mm_lo"), Signal(32, name="mm_hi")
            m.d.comb += [lo.eq(Mux(cmp_lt, a, b)), hi.eq(Mux(cmp_lt, b, a))]
            route(["v_min_i32", "v_min_u32"], lo)
            route(["v_max_i32", "v_max_u32"], hi)

            if self._any(_MINMAX3_OPS):
                def extend33(x):
                    return Cat(x, x[31] & cmp_signed).as_signed()

                # min3 = min(lo, S2); max3 = max(hi, S2); med3 = max(lo, min(hi, S2))
                is_min3 = decode(["v_min3_i32", "v_min3_u32"], "is_min3")
                pick = Signal(32, name="mm3_pick")
                lt2 = Signal(name="mm3_lt")
                lower = Signal(32, name="mm3_lower")
                lt3 = Signal(name="med3_lt")
                m.d.comb += [
                    pick.eq(Mux(is_min3, lo, hi)),
                    lt2.eq(extend33(pick) < extend33(c)),
                    lower.eq(Mux(lt2, pick, c)),
                    lt3.eq(extend33(lo) < extend33(lower)),
                ]
                route(["v_min3_i32", "v_min3_u32"], lower)
                route(["v_max3_i32", "v_max3_u32"], Mux(lt2, c, pick))
                route(["v_med3_i32", "v_med3_u32"], Mux(lt3, lower, lo))

        # --- multiplier -----------------------------------------------------------------------
        mul_result = Const(0, 32)
        if "mul" in units:
            m.submodules.mul = mul = MulUnit(shifts=self.shift32_in_mul)
            m.d.comb += [mul.a.eq(a), mul.b.eq(b)]
            per_op(([n for n, o in _MUL_OPS.items() if o is mul_op],
                    lambda mul_op=mul_op: mul.op.eq(mul_op)) for mul_op in MulOp)
            mul_result = mul.result
            route([n for n in _MUL_OPS if n not in _MAD_OPS], mul.result)

        # --- population count -----------------------------------------------------------------
        popcount = Signal(6)
        if self._any(_POPCOUNT_OPS):
            pc_mask = Signal(32)
            per_op([
                (["v_bcnt_u32_b32"], lambda: pc_mask.eq(0xFFFF_FFFF)),
                (["v_mbcnt_lo_u32_b32"], lambda: pc_mask.eq(_thermometer(self.lane, 32))),
                (["v_mbcnt_hi_u32_b32"],
                 lambda: pc_mask.eq(_thermometer(self.lane, 32, offset=32))),
            ])
            m.d.comb += popcount.eq(_sum_tree(a & pc_mask))

        # --- leading-zero counter -------------------------------------------------------------
        if self._any(_LZC_OPS):
            lzc_in = Signal(32)
            per_op([
                (["v_ffbh_u32"], lambda: lzc_in.eq(a)),
                (["v_ffbh_i32"], lambda: lzc_in.eq(a ^ a[31].replicate(32))),
                (["v_ffbl_b32"], lambda: lzc_in.eq(a[::-1])),    # trailing zeros
            ])
            lzc_count, lzc_zero = _leading_zeros(lzc_in)
            route(_LZC_OPS, Mux(lzc_zero, 0xFFFF_FFFF, lzc_count))

        # --- absolute differences for the SADs ------------------------------------------------
        a_bytes = [self.src0[i:i + 8] for i in range(0, 64, 8)]
        b_bytes = [b[i:i + 8] for i in range(0, 32, 8)]
        byte_diff = {}       # (j, k): |S0 byte j + k - S1 byte k|
        if self._any(_BYTE_SAD_OPS):
            windows = 4 if "v_mqsad_pk_u16_u8" in self._ops else 1
            for j in range(windows):
                for k in range(4):
                    byte_diff[j, k] = _absdiff(m, a_bytes[j + k], b_bytes[k], f"sad_diff{j}{k}")

        def masked_sad(j):
            """Sum of the window-``j`` byte differences whose S1 byte is not 0."""
            return _sum_tree(Mux(b_bytes[k].any(), byte_diff[j, k], 0) for k in range(4))

        sad_sum = Signal(32)
        if self._any(_SAD_OPS):
            per_op([
                (["v_sad_u8"], lambda: sad_sum.eq(_sum_tree(byte_diff[0, k] for k in range(4)))),
                (["v_sad_hi_u8"],
                 lambda: sad_sum.eq(_sum_tree(byte_diff[0, k] for k in range(4)) << 16)),
                (["v_msad_u8"], lambda: sad_sum.eq(masked_sad(0))),
                (["v_sad_u16"], lambda: sad_sum.eq(_absdiff(m, a[:16], b[:16], "sad_diff_lo")
                                                   + _absdiff(m, a[16:], b[16:], "sad_diff_hi"))),
                (["v_sad_u32"], lambda: sad_sum.eq(Mux(cmp_lt, b - a, a - b))),
            ])

        if "v_mqsad_pk_u16_u8" in self._ops:
            fields = []
            for j in range(4):
                field = Signal(16, name=f"mqsad_field{j}")
                m.d.comb += field.eq(masked_sad(j) + self.src2[16 * j:16 * (j + 1)])
                fields.append(field)
            route(["v_mqsad_pk_u16_u8"], Cat(fields))

        # --- the shared adder -----------------------------------------------------------------
        if self._any([*_ADD_OPS, *_POPCOUNT_OPS, *_SAD_OPS, *_MAD_OPS]):
            add_x, add_y, add_ci = Signal(32), Signal(32), Signal()
            add_sum = Signal(33)
            operand = {"a": a, "b": b}
            carry_in = {0: 0, 1: 1, "cin": self.cin, "~cin": ~self.cin}
            choices = [([name], lambda x=x, y=y, invert=invert, ci=ci: [
                add_x.eq(operand[x]),
                add_y.eq(~operand[y] if invert else operand[y]),
                add_ci.eq(carry_in[ci]),
            ]) for name, (x, y, invert, ci, _) in _ADD_OPS.items()]
            choices += [
                (_POPCOUNT_OPS, lambda: [add_x.eq(popcount), add_y.eq(b)]),
                (_SAD_OPS, lambda: [add_x.eq(sad_sum), add_y.eq(c)]),
                (_MAD_OPS, lambda: [add_x.eq(mul_result), add_y.eq(c)]),
            ]
            per_op(choices)
            m.d.comb += add_sum.eq(add_x + add_y + add_ci)
            carry = add_sum[32]
            for name, (_, _, _, _, borrow) in _ADD_OPS.items():
                route([name], add_sum[:32], ~carry if borrow else carry)
            route([*_POPCOUNT_OPS, *_SAD_OPS, *_MAD_OPS], add_sum[:32])

        # --- shifters -------------------------------------------------------------------------
        if self._any([*_SHIFT32_OPS, *_BFE_OPS]):
            if self.shift32_in_mul:     # the multiplier's shift mode (a and b default to S0, S1)
                shift32 = types.SimpleNamespace(op=mul.shift_op, a=mul.a, amount=mul.amount,
                                                result=mul.result)
                shift_mode = [mul.shift.eq(1)]
            else:
                m.submodules.shift32 = shift32 = make_shifter(self._shifter, 32)
                shift_mode = []

            def drive_shift32(shift_op, value, amount):
                return [shift32.op.eq(shift_op), shift32.a.eq(value), shift32.amount.eq(amount),
                        *shift_mode]

            per_op([([name], lambda shift_op=shift_op, reverse=reverse:
                      drive_shift32(shift_op, *((b, a[:5]) if reverse else (a, b[:5]))))
                     for name, (shift_op, reverse) in _SHIFT32_OPS.items()]
                   + [([name], lambda shift_op=shift_op: drive_shift32(shift_op, a, b[:5]))
                      for name, shift_op in _BFE_OPS.items()])
            route(_SHIFT32_OPS, shift32.result)

            if self._any(_BFE_OPS):
                keep = Signal(32, name="bfe_keep")       # the low S2[4:0] bits
                top = Signal(name="bfe_top")             # the highest kept bit (0 if none)
                m.d.comb += [
                    keep.eq(_thermometer(c[:5], 32)),
                    top.eq((shift32.result & keep & ~(keep >> 1)).any()),
                ]
                route(["v_bfe_u32"], shift32.result & keep)
                route(["v_bfe_i32"], (shift32.result & keep) | (~keep & top.replicate(32)))

        if "shift64" in units:
            m.submodules.shift64 = shift64 = make_shifter(self._shifter, 64)
            m.d.comb += [shift64.a.eq(self.src0), shift64.amount.eq(b[:6])]
            per_op(([name], lambda shift_op=shift_op: shift64.op.eq(shift_op))
                   for name, shift_op in _SHIFT64_OPS.items())
            route(_SHIFT64_OPS, shift64.result)

        if "align" in units:
            m.submodules.align = align = FunnelShifter()
            m.d.comb += [align.hi.eq(a), align.lo.eq(b)]
            per_op([
                (["v_alignbit_b32"], lambda: align.amount.eq(c[:5])),
                (["v_alignbyte_b32"], lambda: align.amount.eq(Cat(Const(0, 3), c[:2]))),
            ])
            route(_ALIGN_OPS, align.result)

        # --- output selection -----------------------------------------------------------------
        # Instructions routing the very same result and flag share a case (the multiplies and
        # the shifts do when the shifts run through the multiplier).
        merged = {}
        for names, result, flag in routes:
            key = (id(result), id(flag))
            merged.setdefault(key, ([], result, flag))[0].extend(names)
        per_op((names, lambda result=result, flag=flag: [self.result.eq(result),
                                                          self.flag.eq(flag)])
               for names, result, flag in merged.values())
        return m

