"""Integer shifters of the vector and scalar ALUs.

Two interchangeable styles with the same ports, chosen by the configuration's shifter style
(see :func:`make_shifter`):

* ``"barrel"``: :class:`BarrelShifter`, a logarithmic multiplexer network in soft logic.
* ``"multiplier"``: :class:`MultiplierShifter`, the eGPU integrated shifter (Langhammer and
  Baeckler, "A 950 MHz SIMT Soft Processor", section 4.2), which moves the shift into a DSP
  multiplier: a left shift multiplies by a one-hot ``2**amount``; a logical right
  shift bit-reverses the operand and the product around that multiply; an arithmetic right
  shift additionally ORs in a reversed unary mask of the sign bit.

Both compute, for ``width`` 32 or 64 (any power of two of at least 2 elaborates)::

    SHL:  (a << amount) mod 2**width
    LSHR: a >> amount                      (a unsigned)
    ASHR: a >> amount                      (a signed, result taken mod 2**width)

The amount port is ``log2(width)`` bits wide, which is exactly the masking of the shift amount
to ``[4:0]`` (32-bit forms) or ``[5:0]`` (64-bit forms) that Southern Islands specifies
(``v_lshl_b32``, ``v_ashr_i64``, ``s_lshr_b64``, ...); the caller passes the low bits of the
amount operand. The ``*rev`` forms swap the operands before the shifter.

The multiplier style only pays off when the shift runs through a multiplier that is there
anyway. :func:`mul_shift_operands` and :func:`mul_shift_result` are the logic around the
multiply, shared by :class:`MultiplierShifter` (which infers its own multiplier: the standalone
form, for an ALU without multiplies) and by
:class:`~gpgpu_hdl.cu.multiplier.MulUnit` built with ``shifts=True``, which runs the 32-bit
shifts through the multiplier of the integer multiplies. The vector ALU lane
(:class:`~gpgpu_hdl.cu.valu.IntLaneAlu`) uses the latter whenever it has both a multiply and a
32-bit shift; its 64-bit shifts always keep a shifter of their own.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import enum, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..config import SHIFTER_STYLES

__all__ = [
    "SHIFTER_STYLES",
    "ShiftOp",
    "BarrelShifter",
    "MultiplierShifter",
    "make_shifter",
    "mul_shift_operands",
    "mul_shift_result",
]

class ShiftOp(enum.Enum, shape=2):
    """Operation selector of a shifter.

    Members
    -------
    SHL
        Logical left shift; zeroes enter at the bottom.
    LSHR
        Logical right shift; zeroes enter at the top.
    ASHR
        Arithmetic right shift; copies of the operand's sign bit enter at the top.
    """

    SHL = 0
    LSHR = 1
    ASHR = 2


def _check_width(width: object) -> int:
    if (not isinstance(width, int) or isinstance(width, bool) or width < 2
            or width & (width - 1)):
        raise ValueError(f"width must be a power of two of at least 2 (32 or 64 for SI), "
                         f"not {width!r}")
    return width


class _Shifter(wiring.Component):
    """Ports, parameters and documentation shared by both shifter styles."""

    def __init__(self, *, width: int = 32):
        self._width = _check_width(width)
        super().__init__({
            "op": In(ShiftOp),
            "a": In(width),
            "amount": In(exact_log2(width)),
            "result": Out(width),
        })

    @property
    def width(self) -> int:
        """Operand and result width in bits."""
        return self._width

    @property
    def latency(self) -> int:
        """Clock cycles from the inputs to ``result``: 0, the unit is combinational."""
        return 0


class BarrelShifter(_Shifter):
    """Shifter built from multiplexers (no DSP blocks).

    A single right-shifting network of ``log2(width)`` stages; left shifts bit-reverse the
    operand going in and the result coming out. Purely combinational (latency 0).

    Parameters
    ----------
    width : int
        Operand width in bits: 32 or 64 (any power of two of at least 2 elaborates).

    Members
    -------
    op : In(ShiftOp)
        Operation.
    a : In(width)
        Value to shift.
    amount : In(log2(width))
        Shift distance, 0 to ``width - 1``.
    result : Out(width)
        Shifted value, valid in the same cycle as the inputs.
    """

    def elaborate(self, platform):
        m = Module()

        left = self.op == ShiftOp.SHL
        fill = (self.op == ShiftOp.ASHR) & self.a[-1]

        value = Signal(self.width, name="stage_in")
        m.d.comb += value.eq(Mux(left, self.a[::-1], self.a))
        for i in range(len(self.amount)):
            dist = 1 << i
            stage = Signal(self.width, name=f"stage{i}")
            m.d.comb += stage.eq(Mux(self.amount[i], Cat(value[dist:], fill.replicate(dist)),
                                     value))
            value = stage

        m.d.comb += self.result.eq(Mux(left, value[::-1], value))
        return m


class MultiplierShifter(_Shifter):
    """Shifter that performs the shift in a multiplier (the eGPU integrated shifter).

    The amount is decoded to a one-hot ``2**amount`` and multiplied with the operand (a real
    multiplication, so synthesis maps it to DSP blocks); the low ``width`` bits of the product
    are the left-shifted operand. Right shifts bit-reverse the operand before and the product
    after the multiply (bit reversal is wiring). For an arithmetic right shift of a negative
    operand, the unary (thermometer) code of the amount, bit-reversed so its ones sit at the
    top, is ORed into the result. Purely combinational (latency 0).

    At ``width`` 64 the multiply is a 64x64 one of which only the low half is used.

    Parameters
    ----------
    width : int
        Operand width in bits: 32 or 64 (any power of two of at least 2 elaborates).

    Members
    -------
    op : In(ShiftOp)
        Operation.
    a : In(width)
        Value to shift.
    amount : In(log2(width))
        Shift distance, 0 to ``width - 1``.
    result : Out(width)
        Shifted value, valid in the same cycle as the inputs.
    """

    def elaborate(self, platform):
        m = Module()
        operand, factor = mul_shift_operands(m, self.op, self.a, self.amount)
        product = Signal(self.width)
        m.d.comb += [
            product.eq(operand * factor),
            self.result.eq(mul_shift_result(m, self.op, self.a, self.amount, product)),
        ]
        return m


def mul_shift_operands(m: Module, op, a, amount) -> tuple[Signal, Signal]:
    """The two multiplier inputs of the eGPU shift of ``a`` by ``amount``.

    Adds the logic to ``m`` and returns ``(operand, factor)``, both ``len(a)`` bits wide:
    ``operand`` is ``a``, bit-reversed for the right shifts, and ``factor`` the one-hot
    ``2**amount``. The low ``len(a)`` bits of ``operand * factor`` go to
    :func:`mul_shift_result`; the multiplier may be wider, with anything above these bits in its
    inputs (the low bits of a product depend only on the low bits of its factors).

    Parameters
    ----------
    m : Module
        Module to add the logic to.
    op : Value of shape ShiftOp
        Operation.
    a : Value
        Value to shift; its width is the shift width (a power of two).
    amount : Value
        Shift distance, ``log2(len(a))`` bits.
    """
    width = len(a)
    operand = Signal(width, name="shift_operand")
    factor = Signal(width, name="shift_onehot")
    m.d.comb += [
        operand.eq(Mux(op != ShiftOp.SHL, a[::-1], a)),
        factor.eq(Cat(amount == i for i in range(width))),
    ]
    return operand, factor


def mul_shift_result(m: Module, op, a, amount, product) -> Signal:
    """The shifted value, from the low bits of the product of :func:`mul_shift_operands`.

    A left shift is ``product`` itself; a right shift bit-reverses it and, for an arithmetic
    shift of a negative ``a``, ORs in the reversed unary code of ``amount`` (the copies of the
    sign bit). Adds the logic to ``m`` and returns a ``len(a)``-bit signal.

    Parameters
    ----------
    m : Module
        Module to add the logic to.
    op, a, amount : Value
        The inputs given to :func:`mul_shift_operands`.
    product : Value
        At least the low ``len(a)`` bits of ``operand * factor``; higher bits are ignored.
    """
    width = len(a)
    right = op != ShiftOp.SHL
    fill = (op == ShiftOp.ASHR) & a[-1]
    low = product[:width]
    sign_mask = Signal(width, name="shift_sign_mask")
    result = Signal(width, name="shift_result")
    m.d.comb += [
        sign_mask.eq(Cat(amount > i for i in range(width))[::-1] & fill.replicate(width)),
        result.eq(Mux(right, low[::-1] | sign_mask, low)),
    ]
    return result


def make_shifter(style: str, width: int = 32) -> BarrelShifter | MultiplierShifter:
    """Build the shifter of the given style.

    Parameters
    ----------
    style : str
        ``"barrel"`` for :class:`BarrelShifter`, ``"multiplier"`` for
        :class:`MultiplierShifter`.
    width : int
        Operand width in bits: 32 or 64.

    Raises
    ------
    ValueError
        If ``style`` is not one of :data:`SHIFTER_STYLES`, or ``width`` is not a power of two.
    """
    if style not in SHIFTER_STYLES:
        raise ValueError(f"shifter style must be one of "
                         f"{', '.join(map(repr, SHIFTER_STYLES))}, not {style!r}")
    _check_width(width)
    if style == "barrel":
        return BarrelShifter(width=width)
    return MultiplierShifter(width=width)
