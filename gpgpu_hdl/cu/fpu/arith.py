"""The FP32 arithmetic sub-units: adder, multiplier, fused multiply-add, and their chaining.

* :class:`FpAdd` (table subunit ``add``): ``v_add/sub/subrev_f32``.
* :class:`FpMul` (subunit ``mul``): ``v_mul_f32``, ``v_mul_legacy_f32``, ``v_mullit_f32`` and
  the cube-map ops.
* :class:`FpFma` (subunit ``fma``): ``v_fma_f32`` and ``v_div_fmas_f32``, one rounding.
* :class:`FpMulAdd`: what a lane builds for the subunits ``add``, ``mul`` and ``mad``: one
  :class:`FpMul` (submodule ``mul``) and one :class:`FpAdd` (submodule ``add``), each only
  when an op needs it, shared by the plain adds and multiplies and the unfused multiply-adds
  (``v_mad/mac/madmk/madak_f32``, ``v_mad/mac_legacy_f32``), which run the multiplier and
  then the adder.

All of them follow the contract of :mod:`gpgpu_hdl.emu.fp` bit for bit (round to nearest
even, MODE's denormal flushing, canonical NaN) and the timing of
:class:`~.common.FpSubUnit`. They are pipelines with a register after every stage. The
stages are small: about a carry chain or a shifter plus a multiplexer each; the deepest are
the normalizations (a leading-zero count feeding its shift, widest step first) and
:func:`~.common.round_pack` (a shift and an increment). A new operation can enter every
cycle: every stage register is loaded every cycle and the decoded op and MODE bits travel
with the data, so ``op``, ``flush_in``/``flush_out`` and the sources are only read in the
first stage (the unfused multiply-add of :class:`FpMulAdd` is the exception: its adder reads
the addend when the product is ready, so it needs the inputs held, as the lane does
anyway). ``result`` is a register loaded ``latency`` cycles after ``start``, when ``done``
rises; it then holds until the next result. ``flag`` is always 0.

Rounding is :func:`~.common.round_pack`; the datapaths hand it the exact result or a
significand with a sticky bit. Alignment shifts "jam" the bits they shift out into the lowest
bit of the window; the other operand has zeros there, so the difference is odd whenever it is
inexact and rounds like the exact value.

Shared helpers written here (not in :mod:`.common`): :func:`align_right` (right shift with a
jammed sticky bit),
:func:`normalize_left` (the left shift by a leading-zero count, widest step first) and
:func:`prenormalize` (a denormal significand shifted up to a normal one).
"""

import types

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value, signed
from amaranth.lib.wiring import In

from .common import (F32_NAN, FpSubUnit, flush, is_nan, is_zero, leading_zeros,
                     pipeline_stage, round_pack, unpack)
from .ops import FpOp

__all__ = ["ADD_OPS", "MUL_OPS", "FMA_OPS", "MAD_OPS", "FpAdd", "FpMul", "FpFma", "FpMulAdd",
           "align_right", "normalize_left", "prenormalize"]

#: Instructions of the adder (table subunit ``add``).
ADD_OPS = ("v_add_f32", "v_sub_f32", "v_subrev_f32")
#: Instructions of the multiplier (table subunit ``mul``).
MUL_OPS = ("v_mul_f32", "v_mul_legacy_f32", "v_mullit_f32",
           "v_cubeid_f32", "v_cubesc_f32", "v_cubetc_f32", "v_cubema_f32")
#: Fused multiply-adds (table subunit ``fma``).
FMA_OPS = ("v_fma_f32", "v_div_fmas_f32")
#: Unfused multiply-adds (table subunit ``mad``): the multiplier, then the adder.
MAD_OPS = ("v_mad_f32", "v_mac_f32", "v_madmk_f32", "v_madak_f32",
           "v_mad_legacy_f32", "v_mac_legacy_f32")

_LEGACY_MAD_OPS = ("v_mad_legacy_f32", "v_mac_legacy_f32")
_CUBE_OPS = ("v_cubeid_f32", "v_cubesc_f32", "v_cubetc_f32", "v_cubema_f32")

_INF = 0x7F800000
_NEG_FLT_MAX = 0xFF7FFFFF
#: ``v_cubeid_f32`` face numbers 0.0 to 5.0 as f32 bits.
_FACES = (0x00000000, 0x3F800000, 0x40000000, 0x40400000, 0x40800000, 0x40A00000)
#: ``v_div_fmas_f32`` scale: 2^64 (quotient >= 2) or 2^-64.
_FMAS_SCALE = 64
#: f32 bits of 2.0: ``|S2| >= 2`` compares the magnitude bits with it.
_TWO = 0x40000000


# --- shared helpers -----------------------------------------------------------------------

def align_right(m, sig, offset: int, amount, name: str):
    """``(sig << offset) >> amount`` in ``offset + len(sig)`` bits, the lost bits jammed.

    ``amount`` (unsigned) is clamped to the window width, where all of ``sig`` has gone;
    every bit shifted out of the window is ORed into bit 0 of the result.
    """
    low = len(sig)
    width = offset + low
    amt = Signal(range(width + 1), name=f"{name}_amount")
    m.d.comb += amt.eq(Mux(amount > width, width, amount))
    ext = Signal(width + low, name=f"{name}_ext")
    m.d.comb += ext.eq(Cat(Const(0, low + offset), sig) >> amt)
    out = Signal(width, name=name)
    m.d.comb += out.eq(ext[low:] | ext[:low].any())
    return out


def normalize_left(m, value, count, name: str):
    """``value << count`` in ``len(value)`` bits, a step per bit of ``count``, widest first.

    Built for a leading-zero count (its high bits settle first). Steps at least as wide as
    ``value`` are left out: a count that large only comes with a zero ``value``.
    """
    width = len(value)
    x = value
    for i in reversed(range(len(count))):
        step = 1 << i
        if step < width:
            x = Mux(count[i], Cat(Const(0, step), x[:width - step]), x)
    out = Signal(width, name=name)
    m.d.comb += out.eq(x)
    return out


def prenormalize(m, part, name: str):
    """A significand with its hidden bit on top, and the exponent that keeps its value.

    ``part`` is a namespace of :func:`~.common.unpack`. Returns ``(sig, exp)``: ``sig`` is
    ``part.sig`` shifted left by its leading zeros (0 stays 0), ``exp`` is
    ``part.exp`` minus that shift, signed (down to -22 for the smallest denormal).
    """
    count, _ = leading_zeros(part.sig)
    lz = Signal(range(len(part.sig) + 1), name=f"{name}_lz")
    m.d.comb += lz.eq(count)
    sig = normalize_left(m, part.sig, lz, f"{name}_sig")
    exp = Signal(signed(10), name=f"{name}_exp")
    m.d.comb += exp.eq(part.exp - lz)
    return sig, exp


def _named(m, value, name: str, shape=None):
    sig = Signal(shape if shape is not None else Value.cast(value).shape(), name=name)
    m.d.comb += sig.eq(value)
    return sig


def _signed_zero(sign):
    return Cat(Const(0, 31), sign)


def _special(nan, sign):
    """The bits of a NaN (when ``nan``) or a signed-infinity result."""
    return Mux(nan, F32_NAN, Cat(Const(_INF, 31), sign))


def _negative(x):
    """``x < 0`` for f32 bits (a NaN or a zero is not)."""
    return x[31] & ~is_zero(x) & ~is_nan(x)


def _finish(x, flush_out):
    """The output stage of a result that needs no rounding: canonical NaN, flushed denormal."""
    denorm = ~x[23:31].any() & x[:23].any()
    return Mux(is_nan(x), F32_NAN, Mux(flush_out & denorm, _signed_zero(x[31]), x))


def _double(x):
    """``2 * x`` for f32 bits, exact or overflowing to infinity (a NaN stays a NaN)."""
    exp = x[23:31]
    mag = Mux(exp == 0, Cat(Const(0, 1), x[:30]),         # a denormal: shift (may turn normal)
              Mux(exp == 254, _INF,
                  Mux(exp == 255, x[:31], Cat(x[:23], exp + 1))))
    return Cat(mag[:31], x[31])


class _Pipelined(FpSubUnit):
    """An :class:`FpSubUnit` that is a ``LATENCY``-stage pipeline (see the module docstring)."""

    LATENCY = 1

    @property
    def latency(self) -> int:
        """Cycles from ``start`` to ``done``."""
        return self.LATENCY

    def _output(self, m, final):
        """Load ``result`` from ``final`` (the last stage) ``LATENCY`` cycles after ``start``."""
        valid = self.start
        for stage in range(1, self.LATENCY):
            nxt = Signal(name=f"valid{stage}")
            m.d.sync += nxt.eq(valid)
            valid = nxt
        with m.If(valid):
            m.d.sync += [self.result.eq(final), self.done.eq(1)]
        with m.Elif(self.start):
            m.d.sync += self.done.eq(0)


# --- adder ----------------------------------------------------------------------------------

class FpAdd(_Pipelined):
    """FP32 adder: ``v_add_f32``, ``v_sub_f32``, ``v_subrev_f32``; four stages.

    1. Operand selection (``subrev`` swaps, ``sub``/``subrev`` negate the subtrahend), input
       flush, special cases, and the operands ordered by magnitude: ``big``, ``small``, and
       their exponent difference.
    2. ``small`` aligned to ``big`` (3 extra bits, the rest jammed) and added or subtracted.
    3. Leading-zero count and normalizing shift.
    4. :func:`~.common.round_pack` and the special results.

    An exact zero sum is +0 unless both operands are -0 (after negation). With
    ``force_flush`` the adder is the second half of an unfused multiply-add: inputs and result
    are flushed whatever ``flush_in``/``flush_out`` say.

    Members
    -------
    force_flush : In(1)
        Flush denormal inputs and results regardless of MODE (the mad family).
    (the rest)
        As :class:`~.common.FpSubUnit`.
    """

    OPS = ADD_OPS
    LATENCY = 4

    force_flush: In(1)

    def elaborate(self, platform):
        m = Module()
        sub = self._decode(m, ("v_sub_f32",), "is_sub")
        rev = self._decode(m, ("v_subrev_f32",), "is_subrev")
        flush_in = self.flush_in | self.force_flush
        flush_out = _named(m, self.flush_out | self.force_flush, "flush_out_eff")

        # stage 1: operands, classification, order by magnitude
        neg = Cat(Const(0, 31), sub | rev)
        x = _named(m, flush(Mux(rev, self.src1, self.src0), flush_in), "x")
        y = _named(m, flush(Mux(rev, self.src0, self.src1) ^ neg, flush_in), "y")
        ux, uy = unpack(x), unpack(y)
        swap = _named(m, y[:31] > x[:31], "swap")
        big = types.SimpleNamespace(**{k: Mux(swap, getattr(uy, k), getattr(ux, k))
                                       for k in ("sign", "exp", "sig")})
        small_exp = Mux(swap, ux.exp, uy.exp)
        s1 = pipeline_stage(
            m, "s1",
            big_sig=big.sig, small_sig=Mux(swap, ux.sig, uy.sig),
            diff=(big.exp - small_exp)[:8], exp=big.exp, sign=big.sign,
            sub=ux.sign ^ uy.sign, zero_sign=ux.sign & uy.sign,
            nan=ux.nan | uy.nan | (ux.inf & uy.inf & (ux.sign ^ uy.sign)),
            inf=ux.inf | uy.inf, inf_sign=Mux(ux.inf, ux.sign, uy.sign),
            flush_out=flush_out)

        # stage 2: align and add (|big| >= |small|, so the difference is not negative)
        small = align_right(m, s1.small_sig, 3, s1.diff, "aligned")
        big27 = Cat(Const(0, 3), s1.big_sig)
        total = _named(m, Mux(s1.sub, big27 - small, big27 + small), "sum", 28)
        s2 = pipeline_stage(m, "s2", sum=total, exp=s1.exp, sign=s1.sign,
                            zero_sign=s1.zero_sign, nan=s1.nan, inf=s1.inf,
                            inf_sign=s1.inf_sign, flush_out=s1.flush_out)

        # stage 3: normalize; the leading bit of sum[27] has the weight of big's exponent + 1
        count, zero = leading_zeros(s2.sum)
        lz = _named(m, count, "lz", range(29))
        norm = normalize_left(m, s2.sum, lz, "norm")
        s3 = pipeline_stage(m, "s3", sig=norm, exp=_named(m, s2.exp + 1 - lz, "exp", signed(10)),
                            sign=Mux(zero, s2.zero_sign, s2.sign), nan=s2.nan, inf=s2.inf,
                            inf_sign=s2.inf_sign, flush_out=s2.flush_out)

        # stage 4: round
        rounded = round_pack(m, s3.sign, s3.exp, s3.sig, s3.flush_out)
        self._output(m, Mux(s3.nan | s3.inf, _special(s3.nan, s3.inf_sign), rounded))
        return m


# --- multiplier -----------------------------------------------------------------------------

class FpMul(_Pipelined):
    """FP32 multiplier: ``v_mul_f32``, ``v_mul_legacy_f32``, ``v_mullit_f32``, cube ops;
    four stages.

    0. Input flush.
    1. Special cases, both significands pre-normalized (a denormal's leading
       zeros shifted out into its exponent, so the product always has its leading one in bit
       46 or 47), exponent sum. The cube ops are decided here (compares and multiplexers on
       the flushed sources; ``v_cubema``'s doubling is an exponent increment) and travel as a
       finished special result.
    2. The 24x24 significand product (a plain ``*``; DSP blocks).
    3. One-bit normalization, sticky compression to 27 bits, :func:`~.common.round_pack`.

    Legacy products (``v_mul_legacy``, ``v_mullit``, and the product of
    ``v_mad/mac_legacy``) are +0 when a (flushed) factor is zero, even times inf or NaN;
    ``v_mullit`` gives -FLT_MAX unless S2 > 0. With ``mad`` the multiplier is the first half
    of an unfused multiply-add: inputs and the rounded product are flushed whatever MODE says
    (``op`` is then ``MUL_F32`` or ``MUL_LEGACY_F32``).

    Members
    -------
    mad : In(1)
        Flush inputs and result regardless of MODE (the product of a mad).
    (the rest)
        As :class:`~.common.FpSubUnit`.
    """

    OPS = MUL_OPS
    LATENCY = 4

    mad: In(1)

    def _cube(self, m, op, x, y, z, flush_out):
        """(is a cube op, its result) from the flushed sources (LLVM's constant folding)."""
        is_cube = self._decode(m, _CUBE_OPS, "is_cube", op)
        if not self._any(_CUBE_OPS):
            return is_cube, Const(0, 32)
        ax, ay, az = x[:31], y[:31], z[:31]
        nx, ny, nz = is_nan(x), is_nan(y), is_nan(z)
        z_major = _named(m, ~(nx | ny | nz) & (az >= ax) & (az >= ay), "z_major")
        y_major = _named(m, ~z_major & ~(nx | ny) & (ay >= ax), "y_major")
        xneg, yneg, zneg = _negative(x), _negative(y), _negative(z)
        sign_bit = Const(1 << 31, 32)
        face = Mux(z_major, Mux(zneg, _FACES[5], _FACES[4]),
                   Mux(y_major, Mux(yneg, _FACES[3], _FACES[2]),
                       Mux(xneg, _FACES[1], _FACES[0])))
        sc = Mux(z_major, Mux(zneg, x ^ sign_bit, x),
                 Mux(y_major, x, Mux(xneg, z, z ^ sign_bit)))
        tc = Mux(z_major, y ^ sign_bit,
                 Mux(y_major, Mux(yneg, z ^ sign_bit, z), y ^ sign_bit))
        ma = _double(Mux(z_major, z, Mux(y_major, y, x)))
        value = Signal(32, name="cube")
        results = {"v_cubeid_f32": face, "v_cubesc_f32": _finish(sc, flush_out),
                   "v_cubetc_f32": _finish(tc, flush_out), "v_cubema_f32": _finish(ma, flush_out)}
        with m.Switch(op):
            for name, result in results.items():
                if name in self.ops:
                    with m.Case(*self._members((name,))):
                        m.d.comb += value.eq(result)
        return is_cube, value

    def elaborate(self, platform):
        m = Module()
        flush_in = _named(m, self.flush_in | self.mad, "flush_in_eff")

        # stage 0: the sources flushed
        s0 = pipeline_stage(
            m, "s0", op=self.op.as_value(), x=flush(self.src0, flush_in),
            y=flush(self.src1, flush_in), z=flush(self.src2, flush_in),
            flush_out=self.flush_out | self.mad)
        legacy = self._decode(m, ("v_mul_legacy_f32", "v_mullit_f32"), "is_legacy", s0.op)
        mullit = self._decode(m, ("v_mullit_f32",), "is_mullit", s0.op)
        flush_out = s0.flush_out

        # stage 1: classification, special results, pre-normalization, exponent sum
        x, y, z = s0.x, s0.y, s0.z
        ux, uy = unpack(x), unpack(y)
        sig_x, exp_x = prenormalize(m, ux, "pre_x")
        sig_y, exp_y = prenormalize(m, uy, "pre_y")
        sign = ux.sign ^ uy.sign
        nan = ux.nan | uy.nan | (ux.inf & uy.zero) | (ux.zero & uy.inf)
        is_cube, cube = self._cube(m, s0.op, x, y, z, flush_out)
        special = Signal(32, name="special")
        has_special = Signal(name="has_special")
        m.d.comb += has_special.eq(1)
        with m.If(mullit & ~(~z[31] & ~is_zero(z) & ~is_nan(z))):      # not S2 > 0
            m.d.comb += special.eq(_NEG_FLT_MAX)
        with m.Elif(is_cube):
            m.d.comb += special.eq(cube)
        with m.Elif(legacy & (ux.zero | uy.zero)):
            m.d.comb += special.eq(0)
        with m.Elif(nan | ux.inf | uy.inf):
            m.d.comb += special.eq(_special(nan, sign))
        with m.Else():
            m.d.comb += has_special.eq(0)
        s1 = pipeline_stage(
            m, "s1", sig_x=sig_x, sig_y=sig_y,
            exp=_named(m, exp_x + exp_y, "exp_sum", signed(11)), sign=sign,
            special=special, has_special=has_special, flush_out=flush_out)

        # stage 2: the significand product, in [2^46, 2^48) unless a factor is zero
        product = _named(m, s1.sig_x * s1.sig_y, "product", 48)
        s2 = pipeline_stage(m, "s2", product=product, exp=s1.exp, sign=s1.sign,
                            special=s1.special, has_special=s1.has_special,
                            flush_out=s1.flush_out)

        # stage 3: normalize by one bit, compress, round. value = product * 2^(exp - 300), so
        # a leading one in bit 47 has the biased exponent exp - 126.
        top = s2.product[47]
        norm = Mux(top, s2.product, Cat(Const(0, 1), s2.product[:47]))
        sig = Cat(norm[:22].any(), norm[22:48])
        exp = _named(m, s2.exp - 127 + top, "exp", signed(11))
        rounded = round_pack(m, s2.sign, exp, sig, s2.flush_out)
        self._output(m, Mux(s2.has_special, s2.special, rounded))
        return m


# --- fused multiply-add ---------------------------------------------------------------------

#: FMA window: the product (48 bits) sits 3 bits above the window's bottom; the addend's
#: lowest bit at most _FMA_TOP: above that the product is below a quarter of its ulp and the
#: addend is clamped there (the rounding is the same). Window bits: addend on top + carry.
_FMA_PRODUCT_AT = 3
_FMA_TOP = _FMA_PRODUCT_AT + 48 + 2
_FMA_WIDTH = _FMA_TOP + 24 + 1


class FpFma(_Pipelined):
    """FP32 fused multiply-add ``S0 * S1 + S2`` with one rounding: ``v_fma_f32`` and
    ``v_div_fmas_f32``; five stages.

    The exact sum is formed in a 78-bit window whose bit ``i`` weighs ``2^(E + i)``: the
    pre-normalized 48-bit product at bits ``[3, 51)``, the 24-bit addend wherever its exponent
    puts it (``E`` is the product's scale minus 3), shifted right out of the window with a
    jammed sticky bit when it is far below, or, when its lowest bit would be above bit 53,
    clamped to bits ``[53, 77)`` with ``E`` taken from the addend instead: the product is then
    less than a quarter of the addend's ulp, so the clamped sum rounds to the same value (the
    addend). A zero product always clamps (the addend is then exact), a zero addend never.

    1. Input flush, special cases, pre-normalized factor significands, the addend's distance
       from the product, ``v_div_fmas``'s scale.
    2. The 24x24 product, in parallel with the addend's alignment.
    3. ``P + C``, ``P - C`` and ``C - P`` in parallel; the non-negative one and its sign.
    4. Leading-zero count, normalization, sticky compression to 27 bits, the exponent
       (``v_div_fmas``: plus or minus 64).
    5. :func:`~.common.round_pack` and the special results.

    ``v_div_fmas_f32`` (emulator: :func:`gpgpu_hdl.emu.fp.fma_f32` with a scale) rounds
    ``(S0 * S1 + S2) * 2^k`` once: ``k = 0`` without ``cin`` (the lane's VCC bit),
    ``k = 64`` with it when ``|S2| >= 2`` (flushed S2) and ``k = -64`` otherwise.

    Members
    -------
    (all)
        As :class:`~.common.FpSubUnit`; ``cin`` is read by ``v_div_fmas_f32``.
    """

    OPS = FMA_OPS
    LATENCY = 5

    def elaborate(self, platform):
        m = Module()
        fmas = self._decode(m, ("v_div_fmas_f32",), "is_div_fmas")

        # stage 1
        a = _named(m, flush(self.src0, self.flush_in), "a")
        b = _named(m, flush(self.src1, self.flush_in), "b")
        c = _named(m, flush(self.src2, self.flush_in), "c")
        ua, ub, uc = unpack(a), unpack(b), unpack(c)
        sig_a, exp_a = prenormalize(m, ua, "pre_a")
        sig_b, exp_b = prenormalize(m, ub, "pre_b")
        exp_p = _named(m, exp_a + exp_b, "exp_p", signed(11))   # product = P * 2^(exp_p - 300)
        sign_p = ua.sign ^ ub.sign
        inf_p = ua.inf | ub.inf
        nan = (ua.nan | ub.nan | uc.nan | (ua.inf & ub.zero) | (ua.zero & ub.inf)
               | (inf_p & uc.inf & (sign_p ^ uc.sign)))
        scale = Signal(signed(8), name="scale")
        with m.If(fmas & self.cin):
            m.d.comb += scale.eq(Mux(c[:31] >= _TWO, _FMAS_SCALE, -_FMAS_SCALE))
        s1 = pipeline_stage(
            m, "s1", sig_a=sig_a, sig_b=sig_b, sig_c=uc.sig, exp_p=exp_p, exp_c=uc.exp,
            # lowest addend bit relative to the lowest product bit
            delta=_named(m, uc.exp - exp_p + 150, "delta", signed(12)),
            sign_p=sign_p, sign_c=uc.sign, p_zero=ua.zero | ub.zero, c_zero=uc.zero,
            nan=nan, inf=nan | inf_p | uc.inf, inf_sign=Mux(inf_p, sign_p, uc.sign),
            scale=scale, flush_out=self.flush_out)

        # stage 2: product; addend alignment
        top = _FMA_TOP - _FMA_PRODUCT_AT
        product = _named(m, s1.sig_a * s1.sig_b, "product", 48)
        clamp = _named(m, ((s1.delta > top) & ~s1.c_zero) | s1.p_zero, "clamp")
        shift = Signal(range(_FMA_TOP + 25), name="c_shift")
        with m.If(clamp | (s1.delta >= top)):
            m.d.comb += shift.eq(0)
        with m.Elif(s1.delta <= top - _FMA_TOP - 24):
            m.d.comb += shift.eq(_FMA_TOP + 24)
        with m.Else():
            m.d.comb += shift.eq(top - s1.delta)
        addend = align_right(m, s1.sig_c, _FMA_TOP, shift, "addend")
        # weight of window bit 0: 2^(exp_p - 300 - 3), or the addend's 2^(exp_c - 150 - TOP)
        exp_w = Mux(clamp, s1.exp_c - 150 - _FMA_TOP, s1.exp_p - 300 - _FMA_PRODUCT_AT)
        s2 = pipeline_stage(
            m, "s2", product=product, addend=addend,
            exp=_named(m, exp_w, "exp_window", signed(12)), sign_p=s1.sign_p,
            sign_c=s1.sign_c, nan=s1.nan, inf=s1.inf, inf_sign=s1.inf_sign,
            scale=s1.scale, flush_out=s1.flush_out)

        # stage 3: add, or subtract in both directions
        width = _FMA_WIDTH
        p = Cat(Const(0, _FMA_PRODUCT_AT), s2.product)
        q = s2.addend
        diff = _named(m, p - q, "p_minus_c", signed(width + 1))
        sub = s2.sign_p ^ s2.sign_c
        c_larger = sub & diff[-1]
        mag = Mux(sub, Mux(c_larger, q - p, diff), p + q)
        s3 = pipeline_stage(
            m, "s3", mag=_named(m, mag, "mag", width), exp=s2.exp,
            sign=Mux(c_larger, s2.sign_c, s2.sign_p), zero_sign=s2.sign_p & s2.sign_c,
            nan=s2.nan, inf=s2.inf, inf_sign=s2.inf_sign, scale=s2.scale,
            flush_out=s2.flush_out)

        # stage 4: normalize; a leading one in window bit i has biased exponent exp + 127 + i
        count, zero = leading_zeros(s3.mag)
        lz = _named(m, count, "lz", range(width + 1))
        norm = normalize_left(m, s3.mag, lz, "norm")
        keep = 26
        s4 = pipeline_stage(
            m, "s4", sig=Cat(norm[:width - keep].any(), norm[width - keep:]),
            exp=_named(m, s3.exp + 127 + width - 1 - lz + s3.scale, "exp", signed(12)),
            sign=Mux(zero, s3.zero_sign, s3.sign), nan=s3.nan, inf=s3.inf,
            inf_sign=s3.inf_sign, flush_out=s3.flush_out)

        # stage 5: round
        rounded = round_pack(m, s4.sign, s4.exp, s4.sig, s4.flush_out)
        self._output(m, Mux(s4.inf, _special(s4.nan, s4.inf_sign), rounded))
        return m


# --- adder and multiplier shared, unfused multiply-add -------------------------------------

class FpMulAdd(FpSubUnit):
    """The lane's adder and multiplier, shared by the adds, the multiplies and the unfused
    multiply-adds.

    Built from ``ops`` (any of :data:`ADD_OPS`, :data:`MUL_OPS` and :data:`MAD_OPS`):
    submodule ``mul``, an :class:`FpMul`, only when a multiply or a mad is built, and
    submodule ``add``, an :class:`FpAdd`, only when an add or a mad is built. An add or a
    multiply runs in its unit alone (:attr:`FpAdd.LATENCY` and :attr:`FpMul.LATENCY`
    cycles). A mad runs the multiplier with ``mad`` set (inputs and rounded product flushed,
    ``MUL_LEGACY_F32`` for the ``_legacy`` forms), then, when the product is ready, the adder
    with ``force_flush`` set on the product and the addend: the sum of both latencies.

    The lane supplies the operands in the emulator's argument order
    (:data:`~gpgpu_hdl.emu.valu_ops.VALU_OPS`):

    ===================================  ===========  ==============================
    instruction                          product      addend
    ===================================  ===========  ==============================
    ``v_mad_f32``, ``v_mad_legacy_f32``  src0 * src1  src2
    ``v_mac_f32``, ``v_mac_legacy_f32``  src0 * src1  src2 (the old destination)
    ``v_madmk_f32``                      src0 * src2  src1 (src2 is the literal K)
    ``v_madak_f32``                      src0 * src1  src2 (the literal K)
    ===================================  ===========  ==============================

    (``madmk``/``madak`` arrive as ``src0 = S0``, ``src1 = S1``, ``src2 = K``, the order of
    the emulator's arguments: ``madmk`` is ``S0 * K + S1``, ``madak`` is ``S0 * S1 + K``.)

    A mad's addend is read when the product is ready, so the lane must hold the inputs until
    ``done``, as the :class:`~.common.FpSubUnit` contract says.

    Members
    -------
    (all)
        As :class:`~.common.FpSubUnit`.
    """

    OPS = ADD_OPS + MUL_OPS + MAD_OPS

    def __init__(self, *, ops=None):
        super().__init__(ops=ops)
        mads = self.ops & frozenset(MAD_OPS)
        self._mul_ops = self.ops & frozenset(MUL_OPS)
        if mads - frozenset(_LEGACY_MAD_OPS):
            self._mul_ops |= {"v_mul_f32"}
        if mads & frozenset(_LEGACY_MAD_OPS):
            self._mul_ops |= {"v_mul_legacy_f32"}
        self._add_ops = self.ops & frozenset(ADD_OPS) | ({"v_add_f32"} if mads else set())

    @property
    def mul_ops(self) -> frozenset[str]:
        """Ops of the ``mul`` submodule (empty: none built)."""
        return frozenset(self._mul_ops)

    @property
    def add_ops(self) -> frozenset[str]:
        """Ops of the ``add`` submodule (empty: none built)."""
        return frozenset(self._add_ops)

    def latency_of(self, mnemonic: str) -> int:
        """Cycles from ``start`` to ``done`` for one built instruction."""
        if mnemonic not in self.ops:
            raise ValueError(f"{mnemonic!r} is not built")
        if mnemonic in MAD_OPS:
            return FpMul.LATENCY + FpAdd.LATENCY
        return FpMul.LATENCY if mnemonic in MUL_OPS else FpAdd.LATENCY

    @property
    def latency(self) -> int:
        """Cycles from ``start`` to ``done``: the most of the built instructions (1 if none)."""
        return max((self.latency_of(n) for n in self.ops), default=1)

    def _ports(self, unit):
        return [unit.src2.eq(self.src2), unit.cin.eq(self.cin), unit.ieee.eq(self.ieee),
                unit.flush_in.eq(self.flush_in), unit.flush_out.eq(self.flush_out)]

    def elaborate(self, platform):
        m = Module()
        is_add = self._decode(m, ADD_OPS, "is_add")
        is_mul = self._decode(m, MUL_OPS, "is_mul")
        is_mad = self._decode(m, MAD_OPS, "is_mad")
        is_madmk = self._decode(m, ("v_madmk_f32",), "is_madmk")
        is_legacy = self._decode(m, _LEGACY_MAD_OPS, "is_legacy_mad")
        if not self.ops:
            m.d.sync += self.done.eq(self.start)
            return m

        mul = add = None
        if self._mul_ops:
            m.submodules.mul = mul = FpMul(ops=self._mul_ops)
            mad_op = Mux(is_legacy, FpOp.MUL_LEGACY_F32, FpOp.MUL_F32)
            m.d.comb += [
                *self._ports(mul),
                mul.start.eq(self.start & (is_mul | is_mad)),
                mul.op.eq(Mux(is_mad, mad_op, self.op)),
                mul.src0.eq(self.src0),
                mul.src1.eq(Mux(is_madmk, self.src2, self.src1)),
                mul.mad.eq(is_mad),
            ]
        if self._add_ops:
            m.submodules.add = add = FpAdd(ops=self._add_ops)
            # a mad starts the adder when the product is ready (mul's done rises)
            product_ready = self.start & is_mad
            for stage in range(FpMul.LATENCY if mul is not None else 0):
                nxt = Signal(name=f"mad_wait{stage + 1}")
                m.d.sync += nxt.eq(product_ready)
                product_ready = nxt
            product = mul.result if mul is not None else Const(0, 32)
            m.d.comb += [
                *self._ports(add),
                add.start.eq((self.start & is_add) | (product_ready & is_mad)),
                add.op.eq(Mux(is_mad, FpOp.ADD_F32, self.op)),
                add.src0.eq(Mux(is_mad, product, self.src0)),
                add.src1.eq(Mux(is_mad, Mux(is_madmk, self.src1, self.src2), self.src1)),
                add.force_flush.eq(is_mad),
            ]

        if mul is None or add is None:
            unit = mul if add is None else add
            m.d.comb += [self.result.eq(unit.result), self.done.eq(unit.done)]
            return m
        # both built: the adder answers for adds and mads; a mad's done waits for the adder
        use_add = Signal(name="use_add")
        in_mul = Signal(name="mad_in_mul")
        with m.If(self.start):
            m.d.sync += [use_add.eq(is_add | is_mad), in_mul.eq(is_mad)]
        with m.Elif(product_ready):
            m.d.sync += in_mul.eq(0)
        m.d.comb += [
            self.result.eq(Mux(use_add, add.result, mul.result)),
            self.done.eq(Mux(use_add, add.done & ~in_mul, mul.done)),
        ]
        return m
