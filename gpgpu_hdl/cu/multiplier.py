"""Integer multipliers of the vector and scalar ALUs.

:class:`Multiplier33` is a 33x33 signed multiplier tiled from four 18x18 signed partial
products, the size of one FPGA DSP multiplier (ECP5 ``MULT18X18D``, the 18x18 mode of the
Xilinx and Altera blocks). Thirty-three bits is what every Southern Islands 32-bit multiply
needs once its operands are zero- or sign-extended by one bit, so one signed array serves
the unsigned and the signed forms.

:class:`MulUnit` puts the operand extension and the result-word selection around it and
implements the SI integer multiplies on 32-bit operands (:class:`MulOp`). Built with
``shifts=True``, it also performs the 32-bit shifts in the same multiplier, as the eGPU
integrated shifter does (Langhammer and Baeckler, "A 950 MHz SIMT Soft Processor", section
4.2; the math is in :mod:`.shifter`): the operands are multiplexed between the multiply and
the shift, so a lane with multiplies and shifts has one multiplier array (four DSP blocks),
not two.
"""

from amaranth.hdl import Cat, Module, Mux, Signal, signed
from amaranth.lib import enum, wiring
from amaranth.lib.wiring import In, Out

from .shifter import ShiftOp, mul_shift_operands, mul_shift_result

__all__ = ["Multiplier33", "MulOp", "MulUnit", "extend_operand"]

#: Operand width of one DSP multiplier (signed).
DSP_WIDTH = 18
#: Bits of the unsigned low piece of each operand: the most that fit a signed 18-bit input.
_LO_BITS = DSP_WIDTH - 1
#: Operand width of :class:`Multiplier33`.
_WIDTH = 33


class Multiplier33(wiring.Component):
    """33x33 signed multiplier from four 18x18 signed partial products.

    Each operand splits into an unsigned low piece ``x_lo = x[0:17]`` (zero-extended to 18
    bits) and a signed high piece ``x_hi = x[17:33]`` (16 bits, sign-extended to 18), so that
    ``x == x_hi * 2**17 + x_lo``. Then::

        a * b == (a_hi * b_hi) * 2**34 + (a_hi * b_lo + a_lo * b_hi) * 2**17 + a_lo * b_lo

    Each of the four products is one signed 18x18 multiplication (36-bit product) and maps to
    one DSP block; the three-term sum is soft logic (or the DSP cascade adders where the
    target has them). Purely combinational (latency 0).

    Members
    -------
    a : In(signed(33))
        Multiplicand.
    b : In(signed(33))
        Multiplier.
    product : Out(signed(66))
        The exact product ``a * b``, valid in the same cycle as the inputs.
    """

    a: In(signed(_WIDTH))
    b: In(signed(_WIDTH))
    product: Out(signed(2 * _WIDTH))

    @property
    def latency(self) -> int:
        """Clock cycles from the inputs to ``product``: 0, the unit is combinational."""
        return 0

    def elaborate(self, platform):
        m = Module()

        pieces = {}
        for name, operand in (("a", self.a), ("b", self.b)):
            lo = Signal(signed(DSP_WIDTH), name=f"{name}_lo")
            hi = Signal(signed(DSP_WIDTH), name=f"{name}_hi")
            m.d.comb += [
                lo.eq(operand[:_LO_BITS]),              # unsigned slice: zero-extends
                hi.eq(operand[_LO_BITS:].as_signed()),  # signed: sign-extends
            ]
            pieces[name] = (lo, hi)

        (a_lo, a_hi), (b_lo, b_hi) = pieces["a"], pieces["b"]
        pp_ll = Signal(signed(2 * DSP_WIDTH))
        pp_lh = Signal(signed(2 * DSP_WIDTH))
        pp_hl = Signal(signed(2 * DSP_WIDTH))
        pp_hh = Signal(signed(2 * DSP_WIDTH))
        m.d.comb += [
            pp_ll.eq(a_lo * b_lo),
            pp_lh.eq(a_lo * b_hi),
            pp_hl.eq(a_hi * b_lo),
            pp_hh.eq(a_hi * b_hi),
        ]

        m.d.comb += self.product.eq((pp_hh << (2 * _LO_BITS))
                                    + ((pp_hl + pp_lh) << _LO_BITS)
                                    + pp_ll)
        return m


class MulOp(enum.Enum, shape=3):
    """Operation selector of :class:`MulUnit`, named after the SI instructions.

    ``_24`` forms use only bits ``[23:0]`` of each operand. ``LO`` forms (and the ``_24`` forms
    without ``HI``) return bits ``[31:0]`` of the product, ``HI`` forms bits ``[63:32]``.

    Members
    -------
    MUL_LO_U32
        ``v_mul_lo_u32``: unsigned 32x32, low word.
    MUL_HI_U32
        ``v_mul_hi_u32``: unsigned 32x32, high word.
    MUL_LO_I32
        ``v_mul_lo_i32``, ``s_mul_i32``: signed 32x32, low word (equal to ``MUL_LO_U32``).
    MUL_HI_I32
        ``v_mul_hi_i32``: signed 32x32, high word.
    MUL_U32_U24
        ``v_mul_u32_u24``, and the product of ``v_mad_u32_u24``: unsigned 24x24, low word.
    MUL_HI_U32_U24
        ``v_mul_hi_u32_u24``: unsigned 24x24, bits ``[47:32]`` zero-extended.
    MUL_I32_I24
        ``v_mul_i32_i24``, and the product of ``v_mad_i32_i24``: signed 24x24, low word.
    MUL_HI_I32_I24
        ``v_mul_hi_i32_i24``: signed 24x24, bits ``[63:32]`` (sign-extended ``[47:32]``).
    """

    MUL_LO_U32 = 0
    MUL_HI_U32 = 1
    MUL_LO_I32 = 2
    MUL_HI_I32 = 3
    MUL_U32_U24 = 4
    MUL_HI_U32_U24 = 5
    MUL_I32_I24 = 6
    MUL_HI_I32_I24 = 7


_SIGNED_OPS = (MulOp.MUL_LO_I32, MulOp.MUL_HI_I32, MulOp.MUL_I32_I24, MulOp.MUL_HI_I32_I24)
_NARROW_OPS = (MulOp.MUL_U32_U24, MulOp.MUL_HI_U32_U24, MulOp.MUL_I32_I24,
               MulOp.MUL_HI_I32_I24)
_HIGH_OPS = (MulOp.MUL_HI_U32, MulOp.MUL_HI_I32, MulOp.MUL_HI_U32_U24, MulOp.MUL_HI_I32_I24)


def extend_operand(operand, is_narrow, is_signed):
    """A 32-bit multiply operand extended to 33 bits as :class:`MulUnit` does it: (its low 32
    bits, with bits 31:24 the sign of bit 23 for the ``_24`` forms; its sign bit, 0 for the
    unsigned forms)."""
    sign = Mux(is_narrow, operand[23], operand[31]) & is_signed
    return Cat(operand[:24], Mux(is_narrow, sign.replicate(8), operand[24:32])), sign


class MulUnit(wiring.Component):
    """The SI integer multiplies on 32-bit operands, through one :class:`Multiplier33`.

    Each operand is extended to 33 bits (zero-extended for unsigned forms, sign-extended for
    signed ones; for the ``_24`` forms from bit 23 instead of bit 31), the 66-bit signed
    product is formed, and the low or the high 32-bit word is returned. The ``v_mad_*_24``
    instructions use ``MUL_U32_U24``/``MUL_I32_I24`` here and add their third operand in the
    adder. Purely combinational (latency 0).

    With ``shifts=True`` the unit is also a 32-bit shifter of the multiplier style (the same
    results as :class:`~gpgpu_hdl.cu.shifter.MultiplierShifter`): while ``shift`` is 1, ``op``
    is ignored, the multiplier's inputs are ``a`` (bit-reversed for the right shifts) and the
    one-hot ``2**amount`` instead of the extended operands, and ``result`` is ``a`` shifted by
    ``amount`` as ``shift_op`` says. Only the low 32 bits of each multiplier input are switched
    (bit 32 is a don't-care for the low product word), and the shift result is merged into the
    result multiplexer, so the cost over the plain unit is about one 2:1 multiplexer per
    multiplier input bit plus the one-hot decoder, the bit reversals and the sign fill.

    Parameters
    ----------
    shifts : bool
        Whether to build the shift mode and its ports ``shift``, ``shift_op`` and ``amount``
        (default ``False``: the multiplies only).

    Members
    -------
    op : In(MulOp)
        Operation (ignored while ``shift`` is 1).
    a : In(32)
        First source operand (raw bits); the value to shift in the shift mode.
    b : In(32)
        Second source operand (raw bits); unused in the shift mode.
    shift : In(1)
        Only with ``shifts=True``: 1 selects the shift mode.
    shift_op : In(ShiftOp)
        Only with ``shifts=True``: the shift to perform in the shift mode.
    amount : In(5)
        Only with ``shifts=True``: the shift distance, 0 to 31.
    result : Out(32)
        Result word, valid in the same cycle as the inputs.
    """

    def __init__(self, *, shifts: bool = False):
        if not isinstance(shifts, bool):
            raise TypeError(f"shifts must be a bool, not {shifts!r}")
        self._shifts = shifts
        ports = {"op": In(MulOp), "a": In(32), "b": In(32)}
        if shifts:
            ports |= {"shift": In(1), "shift_op": In(ShiftOp), "amount": In(5)}
        super().__init__({**ports, "result": Out(32)})

    @property
    def shifts(self) -> bool:
        """Whether the unit has the shift mode (ports ``shift``, ``shift_op``, ``amount``)."""
        return self._shifts

    @property
    def latency(self) -> int:
        """Clock cycles from the inputs to ``result``: 0, the unit is combinational."""
        return 0

    def elaborate(self, platform):
        m = Module()
        m.submodules.mul33 = mul33 = Multiplier33()

        op = self.op.as_value()
        is_signed = Signal()
        is_narrow = Signal()
        is_high = Signal()
        m.d.comb += [
            is_signed.eq(op.matches(*_SIGNED_OPS)),
            is_narrow.eq(op.matches(*_NARROW_OPS)),
            is_high.eq(op.matches(*_HIGH_OPS)),
        ]

        (a_low, a_sign), (b_low, b_sign) = (extend_operand(operand, is_narrow, is_signed)
                                            for operand in (self.a, self.b))

        product = mul33.product
        mul_result = Mux(is_high, product[32:64], product[:32])
        if self._shifts:
            # The shift needs only the low product word, which bit 32 of the inputs cannot
            # change: only bits [31:0] switch between the multiply and the shift.
            operand, factor = mul_shift_operands(m, self.shift_op, self.a, self.amount)
            a_low = Mux(self.shift, operand, a_low)
            b_low = Mux(self.shift, factor, b_low)
            shifted = mul_shift_result(m, self.shift_op, self.a, self.amount, product[:32])
            mul_result = Mux(self.shift, shifted, mul_result)

        m.d.comb += [
            mul33.a.eq(Cat(a_low, a_sign)),
            mul33.b.eq(Cat(b_low, b_sign)),
            self.result.eq(mul_result),
        ]
        return m
