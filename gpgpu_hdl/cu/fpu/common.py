"""What every FP32 sub-unit shares: the port set, operand classification and rounding.

The contract is :mod:`gpgpu_hdl.emu.fp` (the golden model): round to nearest even only,
denormal flushing on inputs and outputs as MODE says, every NaN result the canonical
``0x7FC00000``. The helpers here build combinational logic inside the caller's module.

:class:`FpSubUnit` is the base of the sub-units: one port set for all of them, so the lane's
FP unit (:class:`~gpgpu_hdl.cu.fpu.unit.FpLaneUnit`) drives them alike, and the ``ops``
parameter that builds only the instructions asked for.
"""

import types

from amaranth.hdl import Cat, Const, Mux, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..valu import _leading_zeros
from .ops import FP_OPS, FpOp, fp_member

__all__ = ["F32_NAN", "FpSubUnit", "fields", "is_nan", "is_snan", "is_inf", "is_zero",
           "is_denorm", "flush", "unpack", "leading_zeros", "round_pack", "register",
           "pipeline_stage"]

#: The canonical quiet NaN every float operation returns.
F32_NAN = 0x7FC00000


class FpSubUnit(wiring.Component):
    """Base of the FP32 sub-units: the common ports and the ``ops`` selection.

    A subclass sets ``OPS`` (the mnemonics it can build, a subset of
    :data:`~gpgpu_hdl.cu.fpu.ops.FP_OPS`) and implements ``elaborate``; it may add ports of
    its own by annotating them like these.

    Timing: the lane asserts ``start`` for one cycle with the inputs valid and holds every
    input stable until ``done``. ``done`` rises when ``result`` and ``flag`` are valid and
    stays high, with the outputs stable, until the next ``start``. A pipelined unit raises it
    :attr:`latency` cycles after ``start``; an iterative one when it finishes (at most
    :attr:`latency` cycles).

    Parameters
    ----------
    ops : iterable of str or None
        Mnemonics to build (default: all of ``OPS``); any other ``op`` gives an unspecified
        result. A string or an unknown mnemonic is a ``ValueError``.

    Members
    -------
    start : In(1)
        One-cycle pulse: the inputs are valid.
    op : In(FpOp)
        Operation.
    src0, src1, src2 : In(32)
        Source operands as raw bits, VOP3 ``abs``/``neg`` already applied (by the lane).
    cin : In(1)
        The lane's bit of VCC (``v_div_fmas_f32``).
    flush_in, flush_out : In(1)
        MODE's f32 denormal flags: flush denormal float sources, flush denormal results.
    ieee : In(1)
        MODE.IEEE (signalling-NaN rule of min/max).
    result : Out(32)
        Destination bits.
    flag : Out(1)
        Compare result (VOPC), VCC bit of ``v_div_scale_f32``; 0 otherwise.
    done : Out(1)
        ``result`` and ``flag`` are valid.
    """

    OPS: tuple[str, ...] = ()

    start: In(1)
    op: In(FpOp)
    src0: In(32)
    src1: In(32)
    src2: In(32)
    cin: In(1)
    flush_in: In(1)
    flush_out: In(1)
    ieee: In(1)
    result: Out(32)
    flag: Out(1)
    done: Out(1)

    def __init__(self, *, ops=None):
        if ops is None:
            ops = self.OPS
        if isinstance(ops, str):
            raise ValueError(f"ops must be an iterable of mnemonics, not the string {ops!r}")
        ops = frozenset(ops)
        unknown = sorted(map(repr, ops - frozenset(self.OPS)))
        if unknown:
            raise ValueError(f"{type(self).__name__} does not implement {', '.join(unknown)}")
        self._ops = ops
        super().__init__()

    @property
    def ops(self) -> frozenset[str]:
        """Mnemonics of the instructions built."""
        return self._ops

    @property
    def latency(self) -> int:
        """Cycles from ``start`` to ``done`` (the most, for an iterative unit)."""
        raise NotImplementedError

    def _any(self, names) -> bool:
        return not self._ops.isdisjoint(names)

    def _members(self, names) -> list:
        """The :class:`FpOp` members of those of ``names`` that are built, in table order."""
        return [fp_member(n) for n in FP_OPS if n in names and n in self._ops]

    def _decode(self, m, names, name: str, op=None) -> Signal:
        """A signal that is 1 when ``op`` (default: the ``op`` port; a later stage passes its
        registered copy) is one of the built ops among ``names``."""
        sig = Signal(name=name)
        members = self._members(names)
        if op is None:
            op = self.op
        if members:
            m.d.comb += sig.eq(Value.cast(op).matches(*members))
        return sig


# --- classification -----------------------------------------------------------------------

def fields(x):
    """(sign, biased exponent [8 bits], mantissa [23 bits]) of f32 bits ``x``."""
    return x[31], x[23:31], x[:23]


def is_nan(x):
    return x[23:31].all() & x[:23].any()


def is_snan(x):
    """Signalling NaN: a NaN with the quiet bit (mantissa bit 22) clear."""
    return is_nan(x) & ~x[22]


def is_inf(x):
    return x[23:31].all() & ~x[:23].any()


def is_zero(x):
    """+0 or -0."""
    return ~x[:31].any()


def is_denorm(x):
    return ~x[23:31].any() & x[:23].any()


def flush(x, enable):
    """``x`` with a denormal replaced by the zero of its sign when ``enable``."""
    return Mux(enable & is_denorm(x), Cat(Const(0, 31), x[31]), x)


def unpack(x):
    """The parts of f32 bits ``x`` (flush it first if it must be flushed).

    Returns a namespace with ``sign``; ``exp``, the biased exponent of the value's scale
    (denormals get 1, so that ``value = sig * 2**(exp - 150)`` for every finite ``x``);
    ``sig``, the 24-bit significand with its hidden bit (0 for zeros and denormals); and the
    flags ``zero``, ``denorm``, ``inf``, ``nan``, ``snan``.
    """
    sign, exp, mant = fields(x)
    normal = exp.any()
    return types.SimpleNamespace(
        sign=sign, exp=Mux(normal, exp, 1), sig=Cat(mant, normal),
        zero=is_zero(x), denorm=is_denorm(x), inf=is_inf(x), nan=is_nan(x), snan=is_snan(x))


def leading_zeros(value):
    """(count, is_zero) of ``value``: its leading zeros, ``len(value)`` when it is 0.

    Any width; narrower than a power of two is padded with ones below (which do not change a
    nonzero count)."""
    width = 1 << max(0, (len(value) - 1).bit_length())
    if width != len(value):
        count, _ = _leading_zeros(Cat(Const(-1, width - len(value)), value))
        return Mux(value.any(), count, len(value)), ~value.any()
    return _leading_zeros(value)


def round_pack(m, sign, exp, sig, flush_out, *, name: str = "rp"):
    """Round an exact value to f32 bits (nearest even), with denormals, overflow and flush.

    Parameters
    ----------
    m : Module
        Where the logic goes.
    sign : Value
        Sign of the result (also of a zero result).
    exp : Value (signed)
        Biased exponent of the leading bit of ``sig``: the value is
        ``sig / 2**(len(sig) - 1) * 2**(exp - 127)``. Any range; at most 0 gives a denormal
        (or zero), at least 255 an infinity.
    sig : Value (unsigned)
        Significand, normalized (top bit set) unless it is 0, at least 26 bits: 24 kept, a
        guard bit and below it the sticky bits. A caller that drops nonzero bits below
        ``sig`` must OR them into its lowest bit.
    flush_out : Value
        Flush a denormal result (judged after rounding) to the zero of its sign.

    Returns
    -------
    Signal(32)
        The result bits; never a NaN.
    """
    width = len(sig)
    if width < 26:
        raise ValueError(f"round_pack needs at least 26 significand bits, got {width}")
    exp = exp.as_signed()
    # a denormal result: shift right by 1 - exp (everything beyond the width is sticky). No
    # adder before the shifter: 1 - exp is 1 for exp = 0, else 2 + ~exp, so the shifter takes
    # the bits of ~exp and the cases are chosen after it (their compares run beside it).
    wide0 = Cat(Const(0, width), sig)
    bits = (width - 3).bit_length()
    nexp = Signal(bits, name=f"{name}_nexp")
    m.d.comb += nexp.eq((~exp)[:bits])
    wide = Signal(2 * width, name=f"{name}_wide")
    with m.If(exp >= 1):
        m.d.comb += wide.eq(wide0)
    with m.Elif(exp == 0):
        m.d.comb += wide.eq(wide0 >> 1)
    with m.Elif(exp > 1 - width):                 # 2 <= 1 - exp < width: ~exp <= width - 3
        m.d.comb += wide.eq((wide0 >> 2) >> nexp)
    with m.Else():                                # 1 - exp >= width: all of sig is sticky
        m.d.comb += wide.eq(sig)
    keep = wide[2 * width - 24:]                 # 24 bits, hidden bit on top for a normal
    guard = wide[2 * width - 25]
    sticky = wide[:2 * width - 25].any()
    up = guard & (sticky | keep[0])
    field = Signal(8, name=f"{name}_field")
    m.d.comb += field.eq(Mux(exp >= 1, exp[:8], 0))
    packed = Signal(31, name=f"{name}_packed")
    # a carry out of the mantissa steps the exponent (and a denormal to the smallest normal)
    m.d.comb += packed.eq(Cat(keep[:23], field) + up)
    out = Signal(32, name=name)
    with m.If(~sig.any()):
        m.d.comb += out.eq(Cat(Const(0, 31), sign))
    with m.Elif(exp >= 255):
        m.d.comb += out.eq(Cat(Const(0x7F800000, 31), sign))
    with m.Elif(flush_out & ~packed[23:31].any()):
        m.d.comb += out.eq(Cat(Const(0, 31), sign))
    with m.Else():
        m.d.comb += out.eq(Cat(packed, sign))
    return out


def register(m, value, name: str, *, load=None):
    """A register of ``value``'s shape named ``name``: loaded every cycle, or only when
    ``load`` is given and high (it holds otherwise)."""
    value = Value.cast(value)
    reg = Signal(value.shape(), name=name)
    if load is None:
        m.d.sync += reg.eq(value)
    else:
        with m.If(load):
            m.d.sync += reg.eq(value)
    return reg


def pipeline_stage(m, prefix: str, **values):
    """One pipeline register per value, loaded every cycle.

    Returns a namespace with the registers under the keywords' names (signals
    ``{prefix}_{name}``, of the values' shapes).
    """
    return types.SimpleNamespace(**{key: register(m, value, f"{prefix}_{key}")
                                    for key, value in values.items()})
