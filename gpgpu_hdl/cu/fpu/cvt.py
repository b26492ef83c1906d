"""The FP32 converter sub-unit: conversions, rounding to integral, ``ldexp``/``frexp``, packing.

:class:`FpCvt` computes the instructions of the table's ``cvt`` sub-unit with the semantics
of the golden model (:mod:`gpgpu_hdl.emu.fp`, :mod:`gpgpu_hdl.emu.valu_ops`), bit for bit.
f32 sources are flushed per ``flush_in`` (``src0``, and ``src1`` of the two-float packs);
f16 sources and results never are; integer sources (``v_cvt_f32_i32``, ``v_ldexp``'s
exponent, byte selectors) are not floats.

Datapath, in four pipeline stages:

Stage 0 (``start`` cycle)
    The f32 sources flushed; the float-to-fixed shift of ``src0`` (below); the shift amounts
    of the f16 and pknorm blocks; the rounding mode decoded. Registered with the sources, the
    op and MODE.
Stage 1
    *Float to fixed point* (``fix``): the magnitude of the flushed ``src0`` shifted right to
    32 integer and 32 fraction bits plus a sticky bit for anything below; one increment picks
    the rounding: truncate (``v_cvt_i32/u32_f32``, ``v_trunc``), floor (``v_cvt_flr``,
    ``v_floor``), ceil, ``floor(x + 0.5)`` (``v_cvt_rpi``), nearest even (``v_rndne``,
    ``v_cvt_pk_u8``). The integer results saturate here; ``v_fract`` takes the fraction
    bits, or ``1 - fraction`` (exact, with a sticky bit) for a negative source.
    *f16 rounding* (``f16``, ``f16_hi``): f32 to f16 nearest even, or toward zero for
    ``v_cvt_pkrtz_f16_f32`` (a second rounder for its ``src1``).
    *Normalized 16-bit packs* (``pknorm``, ``pknorm_hi``): ``rne(x * 32767)`` or
    ``rne(x * 65535)`` by a shift-subtract constant multiply and a right shift.
    Everything else is reduced to a magnitude, a sticky bit, a sign and a power of two:
    ``value = (mag + sticky/2) * 2**k``.
Stages 2 and 3
    *Normalize and round* (``norm``): one 32-bit leading-zero count and left shift (stage 2),
    then :func:`~gpgpu_hdl.cu.fpu.common.round_pack` (stage 3: nearest even, denormals,
    ``flush_out``).
    It serves the integer-to-float conversions, the rounding-to-integral ops (below
    ``2**23``), ``v_fract``, ``v_ldexp`` (any exponent, denormal results), ``v_frexp_mant``
    (exponent forced to -1), ``v_cvt_f32_f16``, and its leading-zero count gives
    ``v_frexp_exp`` of a denormal. Results complete in stage 1 (integers, packs, NaN and
    infinity) pass through.

Only the blocks the built ``ops`` need are elaborated (:attr:`FpCvt.blocks`).

``v_cvt_pkaccum_u8_f32`` reads its old destination: the lane passes it on ``src2`` (the
golden model's third argument), which makes it the same operation as ``v_cvt_pk_u8_f32``.
"""

import types

from amaranth.hdl import Cat, Const, Module, Mux, Signal, signed

from .common import (F32_NAN, FpSubUnit, flush, leading_zeros, pipeline_stage, round_pack,
                     unpack)
from .ops import FP_OPS, SUBUNIT_OF

__all__ = ["FpCvt"]

_CVT_UNIT_OPS = tuple(n for n in FP_OPS if SUBUNIT_OF[n] == "cvt")

# --- instruction groups -------------------------------------------------------------------

#: Float to integer: mnemonic -> (rounding, signed result).
_TO_INT_OPS = {
    "v_cvt_i32_f32": ("trunc", True), "v_cvt_u32_f32": ("trunc", False),
    "v_cvt_rpi_i32_f32": ("rpi", True), "v_cvt_flr_i32_f32": ("floor", True),
}
#: Rounding to an integral float: mnemonic -> rounding.
_ROUND_OPS = {"v_trunc_f32": "trunc", "v_ceil_f32": "ceil", "v_rndne_f32": "rne",
              "v_floor_f32": "floor"}
_PK_U8_OPS = ("v_cvt_pk_u8_f32", "v_cvt_pkaccum_u8_f32")
_INT_TO_F32_OPS = ("v_cvt_f32_i32", "v_cvt_f32_u32", "v_cvt_off_f32_i4",
                   "v_cvt_f32_ubyte0", "v_cvt_f32_ubyte1", "v_cvt_f32_ubyte2", "v_cvt_f32_ubyte3")
_FRACT = "v_fract_f32"
_LDEXP = "v_ldexp_f32"
_FREXP_EXP = "v_frexp_exp_i32_f32"
_FREXP_MANT = "v_frexp_mant_f32"
_F16_TO_F32 = "v_cvt_f32_f16"
_F32_TO_F16_OPS = ("v_cvt_f16_f32", "v_cvt_pkrtz_f16_f32")
_PKNORM_OPS = ("v_cvt_pknorm_i16_f32", "v_cvt_pknorm_u16_f32")

#: Users of the float-to-fixed shifter.
_FIX_OPS = (*_TO_INT_OPS, *_ROUND_OPS, _FRACT, *_PK_U8_OPS)
#: Users of the normalizer and rounder of stage 2.
_NORM_OPS = (*_INT_TO_F32_OPS, *_ROUND_OPS, _FRACT, _LDEXP, _FREXP_EXP, _FREXP_MANT,
             _F16_TO_F32)

_IMPLEMENTED = frozenset([*_FIX_OPS, *_NORM_OPS, *_F32_TO_F16_OPS, *_PKNORM_OPS])
if frozenset(_CVT_UNIT_OPS) != _IMPLEMENTED:     # the table changed under this module
    raise RuntimeError(f"FpCvt is out of step with the instruction table: not implemented "
                       f"{sorted(set(_CVT_UNIT_OPS) - _IMPLEMENTED)}, unknown "
                       f"{sorted(_IMPLEMENTED - set(_CVT_UNIT_OPS))}")

#: The largest float below 1 (``v_fract``'s upper bound) and 1.0.
_ALMOST_ONE = 0x3F7FFFFF
_ONE = 0x3F800000
#: ``v_ldexp``'s exponent is clamped to this range (beyond it every result saturates).
_LDEXP_LIMIT = 400


# --- building blocks ----------------------------------------------------------------------

def _thermometer(value, width: int, offset: int = 0):
    """``width`` bits, bit ``i`` set when ``value > i + offset``."""
    return Cat(value > i + offset for i in range(width))


def _clamp(value, lo: int, hi: int):
    """``value`` (signed) limited to [lo, hi]."""
    return Mux(value < lo, lo, Mux(value > hi, hi, value))


def _float_to_fixed(m, u, name: str = "fix"):
    """The magnitude of an unpacked f32 as fixed point.

    Returns a namespace: ``wide`` (64 bits, 32 integer and 32 fraction bits of ``|x|``),
    ``below`` (bits of ``|x|`` under 2**-32 are nonzero), ``ovf`` (``|x| >= 2**32``, inf and
    NaN included); :func:`_fixed_parts` takes them apart. One 64-bit right shifter by 0 to 64.
    """
    # |x| = pos * 2**(exp - 158): pos is the significand with its leading bit at bit 31
    pos = Cat(Const(0, 8), u.sig)
    amount = Signal(range(65), name=f"{name}_amount")
    m.d.comb += amount.eq(Mux(u.exp >= 158, 0, Mux(u.exp <= 94, 64, 158 - u.exp)))
    wide = Signal(64, name=f"{name}_wide")
    m.d.comb += wide.eq(Cat(Const(0, 32), pos) >> amount)
    below = Signal(name=f"{name}_below")
    m.d.comb += below.eq((pos & _thermometer(amount, 32, offset=32)).any())
    ovf = Signal(name=f"{name}_ovf")
    m.d.comb += ovf.eq(u.exp >= 159)
    return types.SimpleNamespace(wide=wide, below=below, ovf=ovf)


def _fixed_parts(wide, below, ovf):
    """The fixed-point value of :func:`_float_to_fixed` (registered) in parts: ``int`` (32
    bits) and ``frac`` (32 bits, weights 2**-1 ... 2**-32) of ``|x|``, ``below`` (bits of
    ``|x|`` under 2**-32 are nonzero), ``guard`` (the 2**-1 bit), ``sticky`` (anything under
    the guard), ``ovf`` (``|x| >= 2**32``, inf and NaN included)."""
    frac = wide[:32]
    return types.SimpleNamespace(int=wide[32:], frac=frac, below=below, guard=frac[31],
                                 sticky=frac[:31].any() | below, ovf=ovf)


def _f16_shift(m, u, name: str):
    """The right shift of :func:`_round_f16` for an unpacked f32 ``u`` (a stage ahead)."""
    exp = Signal(signed(10), name=f"{name}_exp_in")   # f16 biased exponent of the leading bit
    m.d.comb += exp.eq(u.exp - 112)
    shift = Signal(range(26), name=f"{name}_shift")   # a denormal result: shift right
    m.d.comb += shift.eq(Mux(exp >= 1, 0, Mux(exp < -23, 25, 1 - exp)))
    return shift


def _round_f16(m, u, shift, rtz, name: str):
    """f16 bits (low 16 of the result) of an unpacked f32 ``u``, rounded to nearest even
    or, when ``rtz``, toward zero (a finite value then never becomes an infinity). f16
    denormals are produced, never flushed; a NaN gives ``0x7E00``. ``shift`` is
    :func:`_f16_shift` of ``u``."""
    exp = Signal(signed(10), name=f"{name}_exp")      # f16 biased exponent of the leading bit
    m.d.comb += exp.eq(u.exp - 112)
    wide = Signal(48, name=f"{name}_wide")
    m.d.comb += wide.eq(Cat(Const(0, 24), u.sig) >> shift)
    keep = wide[37:]                                  # hidden bit and 10 mantissa bits
    guard = wide[36]
    sticky = wide[:36].any()
    up = ~rtz & guard & (sticky | keep[0])
    packed = Signal(15, name=f"{name}_packed")
    m.d.comb += packed.eq(Cat(keep[:10], Mux(exp >= 1, exp[:5], 0)) + up)
    out = Signal(16, name=name)
    with m.If(u.nan):
        m.d.comb += out.eq(0x7E00)
    with m.Elif(u.inf | ((exp >= 31) & ~rtz)):
        m.d.comb += out.eq(Cat(Const(0x7C00, 15), u.sign))
    with m.Elif(exp >= 31):
        m.d.comb += out.eq(Cat(Const(0x7BFF, 15), u.sign))
    with m.Else():
        m.d.comb += out.eq(Cat(packed, u.sign))
    return out


def _pknorm_amount(m, u, name: str):
    """The right shift of :func:`_pknorm16` for an unpacked f32 ``u`` (a stage ahead)."""
    amount = Signal(range(19), name=f"{name}_amount")
    m.d.comb += amount.eq(Mux(u.exp <= 109, 18, 127 - u.exp))
    return amount


def _pknorm16(m, u, amount, unsigned_, name: str):
    """``rne(x * 65535)`` saturated to [0, 65535] when ``unsigned_``, else
    ``rne(x * 32767)`` saturated to [-32767, 32767] (16-bit two's complement); NaN gives 0.
    ``amount`` is :func:`_pknorm_amount` of ``u``."""
    # x * C = sig * C * 2**(exp - 150) with C = 2**n - 1; only |x| < 1 (exp <= 126) does not
    # saturate, and then the right shift 150 - exp is at least 24
    product = Signal(40, name=f"{name}_product")
    m.d.comb += product.eq(Mux(unsigned_, u.sig << 16, u.sig << 15) - u.sig)
    high = product[23:]                               # 17 bits; the 23 below cannot matter
    wide = Signal(34, name=f"{name}_wide")
    m.d.comb += wide.eq(Cat(Const(0, 17), high) >> amount)
    whole = wide[17:]
    guard = wide[16]
    # Nearest even needs no sticky bit: x * C (C = 2**n - 1, odd) is a tie only when
    # sig * C = odd * 2**(s - 1), i.e. sig = 2**23 and s = 24: x = +-0.5, whose tie
    # (C - 1)/2 + 0.5 has an odd integer part and rounds up, as the guard bit alone does.
    rounded = Signal(17, name=f"{name}_rounded")
    m.d.comb += rounded.eq(whole + guard)
    out = Signal(16, name=name)
    with m.If(u.nan | (unsigned_ & u.sign)):
        m.d.comb += out.eq(0)
    with m.Elif(u.exp >= 127):                         # |x| >= 1, infinities
        m.d.comb += out.eq(Mux(unsigned_, 0xFFFF, Mux(u.sign, 0x8001, 0x7FFF)))
    with m.Else():
        m.d.comb += out.eq(Mux(u.sign, -rounded, rounded))
    return out


# --- the unit -----------------------------------------------------------------------------

class FpCvt(FpSubUnit):
    """FP32 converter sub-unit: every instruction of the table's ``cvt`` sub-unit.

    Four pipeline stages (:attr:`latency` 4): stage 0 registers at the end of the ``start``
    cycle, stages 1, 2 and 3 (the result) one cycle after another; ``done`` is high from the
    fourth cycle after ``start`` until the cycle after the next ``start``. Stage 0 loads every
    cycle, the later stage registers only when their stage holds a new operation; each carries
    what the next stage needs, so the unit can take a ``start`` every cycle.

    Parameters
    ----------
    ops : iterable of str or None
        Mnemonics to build (default: all of :attr:`OPS`, the table's ``cvt`` sub-unit); see
        :class:`~gpgpu_hdl.cu.fpu.common.FpSubUnit`. Ops that are not built give 0.

    Members
    -------
    start, op, src0, flush_in, flush_out, done
        As in :class:`~gpgpu_hdl.cu.fpu.common.FpSubUnit`; ``cin`` and ``ieee`` are not used.
    src1 : In(32)
        ``v_ldexp_f32``: the exponent (signed integer); ``v_cvt_pk_u8_f32`` and
        ``v_cvt_pkaccum_u8_f32``: the byte selector (bits [1:0]); the two-source packs
        (``v_cvt_pkrtz_f16_f32``, ``v_cvt_pknorm_*``): the f32 for the high half.
    src2 : In(32)
        The word ``v_cvt_pk_u8_f32`` writes its byte into; for ``v_cvt_pkaccum_u8_f32`` the
        lane passes the old destination here.
    result : Out(32)
        Destination bits (f16 results in the low half, the high half 0).
    flag : Out(1)
        Always 0.
    """

    OPS = _CVT_UNIT_OPS

    @property
    def latency(self) -> int:
        """Cycles from ``start`` to ``done``: 4."""
        return 4

    @property
    def blocks(self) -> frozenset[str]:
        """The datapath blocks built (see the module description): a subset of ``"fix"``,
        ``"norm"``, ``"f16"``, ``"f16_hi"``, ``"pknorm"``, ``"pknorm_hi"``."""
        blocks = set()
        if self._any(_FIX_OPS):
            blocks.add("fix")
        if self._any(_NORM_OPS):
            blocks.add("norm")
        if self._any(_F32_TO_F16_OPS):
            blocks.add("f16")
        if self._any(["v_cvt_pkrtz_f16_f32"]):
            blocks.add("f16_hi")
        if self._any(_PKNORM_OPS):
            blocks |= {"pknorm", "pknorm_hi"}
        return frozenset(blocks)

    def elaborate(self, platform):
        m = Module()
        blocks = self.blocks
        # --- stage 0 (``start`` cycle): the f32 sources flushed, the float-to-fixed shift ---
        x_in = Signal(32, name="x_in")
        m.d.comb += x_in.eq(flush(self.src0, self.flush_in))
        stage = {"valid": self.start, "op": self.op.as_value(), "x": x_in, "src0": self.src0,
                 "src1": self.src1, "src2": self.src2, "flush_out": self.flush_out}
        if blocks & {"f16_hi", "pknorm_hi"}:      # the second f32 of the two-source packs
            y_in = Signal(32, name="y_in")
            m.d.comb += y_in.eq(flush(self.src1, self.flush_in))
            stage["y"] = y_in
        # the shift amounts of the f16 and pknorm blocks
        if "f16" in blocks:
            stage["f16_shift"] = _f16_shift(m, unpack(x_in), "f16")
        if "f16_hi" in blocks:
            stage["f16_hi_shift"] = _f16_shift(m, unpack(y_in), "f16_hi")
        if "pknorm" in blocks:
            stage["pknorm_amount"] = _pknorm_amount(m, unpack(x_in), "pknorm")
            stage["pknorm_hi_amount"] = _pknorm_amount(m, unpack(y_in), "pknorm_hi")
        if "fix" in blocks:             # the rounding modes decoded a stage ahead too
            stage |= {name: self._decode(m, names, name) for name, names in (
                ("rnd_floor", ["v_cvt_flr_i32_f32", "v_floor_f32"]), ("rnd_ceil", ["v_ceil_f32"]),
                ("rnd_rne", ["v_rndne_f32", *_PK_U8_OPS]), ("rnd_rpi", ["v_cvt_rpi_i32_f32"]))}
            fx_in = _float_to_fixed(m, unpack(x_in))
            stage |= {"fix_wide": fx_in.wide, "fix_below": fx_in.below, "fix_ovf": fx_in.ovf}
        s0 = pipeline_stage(m, "s0", **stage)
        op = s0.op
        x = s0.x
        u = unpack(x)
        if blocks & {"f16_hi", "pknorm_hi"}:
            v = unpack(s0.y)

        # --- stage 1: what it hands to stage 2 ----------------------------------------------
        direct = Signal(32, name="direct")        # a finished result ...
        use_direct = Signal(name="use_direct")    # ... to pass through
        n_sign = Signal(name="n_sign")            # (mag + sticky/2) * 2**k with this sign
        n_mag = Signal(32, name="n_mag")
        n_sticky = Signal(name="n_sticky")
        n_k = Signal(signed(12), name="n_k")
        n_mant = Signal(name="n_mant")            # v_frexp_mant: exponent forced to -1
        n_exp = Signal(name="n_exp")              # v_frexp_exp: the result is k - lz
        n_fract = Signal(name="n_fract")          # v_fract: 1.0 becomes the float below 1

        def finished(value):
            return [direct.eq(value), use_direct.eq(1)]

        def normalize(sign, mag, k, sticky=0):
            return [n_sign.eq(sign), n_mag.eq(mag), n_k.eq(k), n_sticky.eq(sticky)]

        choices = []      # (mnemonics, body): body() returns the statements of their case
                          # or, with m.If inside, adds them itself

        def case(names):
            def register(body):
                choices.append((names, body))
                return body
            return register

        # float to fixed point: integer conversions, rounding to integral, fract, pk_u8
        if "fix" in blocks:
            fx = _fixed_parts(s0.fix_wide, s0.fix_below, s0.fix_ovf)
            inexact = fx.guard | fx.sticky
            is_floor, is_ceil, is_rne, is_rpi = (s0.rnd_floor, s0.rnd_ceil, s0.rnd_rne,
                                                 s0.rnd_rpi)
            inc = Signal(name="fix_inc")
            m.d.comb += inc.eq((is_floor & u.sign & inexact) | (is_ceil & ~u.sign & inexact)
                               | (is_rne & fx.guard & (fx.sticky | fx.int[0]))
                               | (is_rpi & fx.guard & (~u.sign | fx.sticky)))
            mag = Signal(32, name="fix_mag")      # the rounded magnitude (< 2**32 unless ovf)
            m.d.comb += mag.eq(fx.int + inc)

            sat_i32 = fx.ovf | mag[31]
            to_i32 = Signal(32, name="to_i32")
            m.d.comb += to_i32.eq(Mux(u.nan, 0, Mux(
                u.sign, Mux(sat_i32, 0x8000_0000, -mag), Mux(sat_i32, 0x7FFF_FFFF, mag))))
            case([n for n, (_, sgn) in _TO_INT_OPS.items() if sgn])(lambda: finished(to_i32))
            to_u32 = Signal(32, name="to_u32")
            m.d.comb += to_u32.eq(Mux(u.nan | u.sign, 0, Mux(fx.ovf, 0xFFFF_FFFF, mag)))
            case(["v_cvt_u32_f32"])(lambda: finished(to_u32))

            byte = Signal(8, name="pk_byte")
            m.d.comb += byte.eq(Mux(u.nan | u.sign, 0,
                                    Mux(fx.ovf | (mag > 255), 255, mag[:8])))
            place = Cat(Const(0, 3), s0.src1[:2])
            pk_u8 = Signal(32, name="pk_u8")
            m.d.comb += pk_u8.eq((s0.src2 & ~(Const(0xFF, 32) << place))
                                 | (byte.as_unsigned() << place))
            case(_PK_U8_OPS)(lambda: finished(pk_u8))

            @case(_ROUND_OPS)
            def _round():
                with m.If(u.nan):
                    m.d.comb += finished(F32_NAN)
                with m.Elif(u.exp >= 150):         # integral already (inf included)
                    m.d.comb += finished(x)
                with m.Else():
                    m.d.comb += normalize(u.sign, mag, 0)

            @case([_FRACT])
            def _fract():
                m.d.comb += n_fract.eq(1)
                with m.If(u.nan | u.inf):
                    m.d.comb += finished(F32_NAN)
                with m.Elif(~u.sign & (u.exp < 127)):          # 0 <= x < 1: x itself
                    m.d.comb += normalize(0, u.sig, u.exp - 150)
                with m.Elif(~u.sign):                           # the fraction bits, exact
                    m.d.comb += normalize(0, fx.frac, -32)
                with m.Elif(inexact):                           # 1 - fraction, sticky below
                    m.d.comb += normalize(0, ~fx.frac + ~fx.below, -32, fx.below)
                with m.Else():                                  # integral: +0
                    m.d.comb += normalize(0, 0, 0)

        # integer to float
        a = s0.src0
        case(["v_cvt_f32_i32"])(lambda: normalize(a[31], Mux(a[31], -a, a), 0))
        case(["v_cvt_f32_u32"])(lambda: normalize(0, a, 0))
        for k in range(4):
            case([f"v_cvt_f32_ubyte{k}"])(lambda k=k: normalize(0, a.word_select(k, 8), 0))
        i4_mag = Mux(a[3], -a[:4], a[:4])[:4]
        case(["v_cvt_off_f32_i4"])(lambda: normalize(a[3], i4_mag, -4))

        # ldexp, frexp
        if self._any([_LDEXP]):
            n = s0.src1.as_signed()
            scale = Signal(signed(10), name="ldexp_n")
            m.d.comb += scale.eq(_clamp(n, -_LDEXP_LIMIT, _LDEXP_LIMIT))

            @case([_LDEXP])
            def _ldexp():
                with m.If(u.nan):
                    m.d.comb += finished(F32_NAN)
                with m.Elif(u.inf):
                    m.d.comb += finished(x)
                with m.Else():
                    m.d.comb += normalize(u.sign, u.sig, u.exp - 150 + scale)

        @case([_FREXP_MANT])
        def _frexp_mant():
            with m.If(u.nan | u.inf):
                m.d.comb += finished(F32_NAN)
            with m.Else():
                m.d.comb += [*normalize(u.sign, u.sig, 0), n_mant.eq(1)]

        @case([_FREXP_EXP])
        def _frexp_exp():
            with m.If(u.nan | u.inf):
                m.d.comb += finished(0xFFFF_FFFF)
            with m.Elif(u.zero):
                m.d.comb += finished(0)
            with m.Else():      # exp - 126 for a normal; the leading-zero count does the rest
                m.d.comb += [*normalize(0, u.sig, u.exp - 118), n_exp.eq(1)]

        # f16 -> f32 (exact, through the normalizer; f16 denormals are normal f32)
        h_sign, h_exp, h_mant = a[15], a[10:15], a[:10]

        @case([_F16_TO_F32])
        def _f16_to_f32():
            with m.If(h_exp.all()):
                m.d.comb += finished(Mux(h_mant.any(), F32_NAN, Cat(Const(0x7F80_0000, 31),
                                                                    h_sign)))
            with m.Else():
                m.d.comb += normalize(h_sign, Cat(h_mant, h_exp.any()),
                                      Mux(h_exp.any(), h_exp, 1) - 25)

        # f32 -> f16
        if "f16" in blocks:
            is_rtz = self._decode(m, ["v_cvt_pkrtz_f16_f32"], "f16_rtz", op)
            f16 = _round_f16(m, u, s0.f16_shift, is_rtz, "f16")
            case(["v_cvt_f16_f32"])(lambda: finished(f16))
        if "f16_hi" in blocks:
            f16_hi = _round_f16(m, v, s0.f16_hi_shift, Const(1), "f16_hi")
            case(["v_cvt_pkrtz_f16_f32"])(lambda: finished(Cat(f16, f16_hi)))

        # two 16-bit normalized integers
        if "pknorm" in blocks:
            is_u16 = self._decode(m, ["v_cvt_pknorm_u16_f32"], "pknorm_u16", op)
            lo = _pknorm16(m, u, s0.pknorm_amount, is_u16, "pknorm")
            hi = _pknorm16(m, v, s0.pknorm_hi_amount, is_u16, "pknorm_hi")
            case(_PKNORM_OPS)(lambda: finished(Cat(lo, hi)))

        with m.Switch(op):
            for names, body in choices:
                members = self._members(names)
                if members:
                    with m.Case(*members):
                        stmts = body()
                        if stmts:
                            m.d.comb += stmts

        # --- the stage-1 register -----------------------------------------------------------
        valid = Signal(name="valid1")
        r_direct = Signal(32, name="r_direct")
        r_use_direct = Signal(name="r_use_direct")
        r_sign = Signal(name="r_sign")
        r_mag = Signal(32, name="r_mag")
        r_sticky = Signal(name="r_sticky")
        r_k = Signal(signed(12), name="r_k")
        r_mant = Signal(name="r_mant")
        r_exp = Signal(name="r_exp")
        r_fract = Signal(name="r_fract")
        r_flush_out = Signal(name="r_flush_out")
        m.d.sync += valid.eq(s0.valid)
        with m.If(s0.valid):
            m.d.sync += [r_direct.eq(direct), r_use_direct.eq(use_direct)]
            if "norm" in blocks:
                m.d.sync += [r_sign.eq(n_sign), r_mag.eq(n_mag), r_sticky.eq(n_sticky),
                             r_k.eq(n_k), r_mant.eq(n_mant), r_exp.eq(n_exp),
                             r_fract.eq(n_fract), r_flush_out.eq(s0.flush_out)]

        # --- stage 2: normalize -------------------------------------------------------------
        valid2 = Signal(name="valid2")
        m.d.sync += valid2.eq(valid)
        final = Signal(32, name="final")
        if "norm" in blocks:
            lz, _ = leading_zeros(r_mag)
            normalized = Signal(32, name="norm_sig")
            m.d.comb += normalized.eq(r_mag << lz)
            rp_exp = Signal(signed(14), name="norm_exp")
            m.d.comb += rp_exp.eq(Mux(r_mant, 126, 158 - lz + r_k))
            frexp_exp = Signal(signed(32), name="frexp_exp")
            m.d.comb += frexp_exp.eq(r_k - lz)
            s2 = {name: Signal.like(value, name=f"s2_{name}") for name, value in (
                ("direct", r_direct), ("use_direct", r_use_direct), ("sign", r_sign),
                ("sticky", r_sticky), ("exp", r_exp), ("fract", r_fract),
                ("flush_out", r_flush_out), ("sig", normalized), ("rp_exp", rp_exp),
                ("frexp_exp", frexp_exp))}
            with m.If(valid):
                m.d.sync += [s2["direct"].eq(r_direct), s2["use_direct"].eq(r_use_direct),
                             s2["sign"].eq(r_sign), s2["sticky"].eq(r_sticky),
                             s2["exp"].eq(r_exp), s2["fract"].eq(r_fract),
                             s2["flush_out"].eq(r_flush_out), s2["sig"].eq(normalized),
                             s2["rp_exp"].eq(rp_exp), s2["frexp_exp"].eq(frexp_exp)]

            # --- stage 3: round ---------------------------------------------------------------
            rounded = round_pack(m, s2["sign"], s2["rp_exp"], Cat(s2["sticky"], s2["sig"]),
                                 s2["flush_out"], name="norm_rp")
            m.d.comb += final.eq(Mux(s2["use_direct"], s2["direct"], Mux(
                s2["exp"], s2["frexp_exp"],
                Mux(s2["fract"] & (rounded == _ONE), _ALMOST_ONE, rounded))))
        else:
            s2_direct = Signal(32, name="s2_direct")
            with m.If(valid):
                m.d.sync += s2_direct.eq(r_direct)
            m.d.comb += final.eq(s2_direct)

        with m.If(valid2):
            m.d.sync += [self.result.eq(final), self.done.eq(1)]
        with m.Elif(self.start):
            m.d.sync += self.done.eq(0)
        return m
