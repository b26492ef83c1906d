"""The FP32 divide / square-root / exp sub-unit (the instruction table's ``trans`` sub-unit).

:class:`FpTrans` computes, bit for bit as the golden model (:mod:`gpgpu_hdl.emu.fp`,
:mod:`gpgpu_hdl.emu.valu_ops`) does:

* ``v_rcp_f32`` (and ``v_rcp_iflag_f32``, the same result), ``v_rcp_clamp_f32`` (an infinite
  result becomes ``±FLT_MAX``), ``v_rcp_legacy_f32`` (an infinite result becomes the zero of
  the input's sign): ``1/x`` correctly rounded, denormal results rounded once;
* ``v_sqrt_f32``: ``sqrt(x)`` correctly rounded;
* ``v_rsq_f32``, ``v_rsq_clamp_f32`` (``±inf`` becomes ``±FLT_MAX``), ``v_rsq_legacy_f32``
  (``+inf`` becomes ``+0``): ``1/sqrt(x)`` correctly rounded, the source always flushed;
* ``v_div_scale_f32`` (with its VCC bit on ``flag``) and ``v_div_fixup_f32``, the exponent and
  special-case steps of LLVM's division sequence;
* ``v_exp_f32``: ``2**x`` by the shift-and-add algorithm the model defines
  (:func:`gpgpu_hdl.emu.fp.exp2_f32`: relative error below 2^-46 before one rounding).

``v_log_f32``, ``v_log_clamp_f32``, ``v_sin_f32`` and ``v_cos_f32`` belong to the same table
sub-unit but are not built (:data:`TRANS_NOT_BUILT`): their model is a binary64 evaluation,
which no small iterative datapath reproduces bit for bit.

The reciprocal and the two roots share one restoring digit recurrence that finds, one bit
per cycle from the weight ``2**0`` down to ``2**-25``, the largest ``y`` with

========  ==================  ================================================
op        condition           operand ``m`` (24-bit significand scaled to [1, 4))
========  ==================  ================================================
rcp       ``y * m <= 1``      ``m`` in [1, 2)
sqrt      ``y**2 <= m``       ``m`` in [1, 4), the source exponent made even
rsq       ``y**2 * m <= 1``   ``m`` in [1, 4), the source exponent made even
========  ==================  ================================================

The state after the bits above ``2**-k`` are chosen is the scaled remainder ``rho`` (``2**k``
times ``1 - y*m``, ``m - y**2`` or ``1 - y**2*m``) and the scaled trial ``tau`` (``2**k``
times what setting bit ``2**-k`` would add to ``y*m``, ``y**2`` or ``y**2*m``: ``m``,
``2*y + 2**-k`` or ``(2*y + 2**-k) * m``). Each cycle computes ``rho - tau``; the bit is 1
when that is not negative, and then::

    rho <- 2 * (rho - tau)     tau <- tau + h3        (bit 1)
    rho <- 2 * rho             tau <- tau - h         (bit 0)
    h <- h / 2                 h3 <- h3 / 2

where ``h = 2**-(k+1)`` times ``m`` (rsq) or 1 (sqrt) and ``h3 = 3*h`` (rcp: both 0, ``tau``
stays ``m``). ``tau`` is updated from registers only, in parallel with the subtraction, so a
cycle is one subtraction of :attr:`FpTrans.width` bits (52 with rsq, 30 with sqrt, 25 for
rcp alone) and a multiplexer. All registers are
exact fixed point (48 fraction bits with rsq, 26 with sqrt, 23 for rcp alone), so the final
``rho`` is 0 exactly when the result is exact: it is the sticky bit of the 26 result bits, and
:func:`~.common.round_pack` rounds the whole (including a denormal ``1/x``) once.

``v_exp_f32`` has a datapath of its own (built only with it): ``x`` in [-126, 128) is
converted to the fixed point ``floor(x * 2**52) = i * 2**52 + r``, then for k = 1..48, one per
cycle, ``r >= C[k]`` (``C[k] = log2(1 + 2**-k)`` in units of 2**-52, a ROM) gives
``r -= C[k]`` and ``Y += Y >> k`` (a barrel shifter), starting from ``Y = 1`` with 54 fraction
bits; ``Y * 2**i`` is then rounded once. A cycle is a 53-bit subtraction from a ROM word in
parallel with a 55-bit addition of a shifted copy, and a multiplexer. Zero, NaN, ``x >= 128``
(+inf) and ``x < -126`` (+0) take one cycle.
"""

import decimal
import types

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, signed

from .common import F32_NAN, FpSubUnit, flush, is_inf, is_nan, leading_zeros, round_pack, unpack
from .ops import FP_OPS, SUBUNIT_OF

__all__ = ["FpTrans", "TRANS_NOT_BUILT", "EXP_TABLE"]

_RCP_OPS = ("v_rcp_f32", "v_rcp_iflag_f32", "v_rcp_clamp_f32", "v_rcp_legacy_f32")
_SQRT_OPS = ("v_sqrt_f32",)
_RSQ_OPS = ("v_rsq_f32", "v_rsq_clamp_f32", "v_rsq_legacy_f32")
_ROOT_OPS = _SQRT_OPS + _RSQ_OPS
_DIGIT_OPS = _RCP_OPS + _ROOT_OPS           # the shared digit recurrence
_EXP_OPS = ("v_exp_f32",)
_DIV_SCALE_OPS = ("v_div_scale_f32",)
_DIV_FIXUP_OPS = ("v_div_fixup_f32",)
_CLAMP_OPS = ("v_rcp_clamp_f32", "v_rsq_clamp_f32")

_TRANS_UNIT_OPS = tuple(n for n in FP_OPS if SUBUNIT_OF[n] == "trans")
_IMPLEMENTED = frozenset(_DIGIT_OPS + _EXP_OPS + _DIV_SCALE_OPS + _DIV_FIXUP_OPS)

#: The table's ``trans`` instructions :class:`FpTrans` does not build (binary64 models).
TRANS_NOT_BUILT: tuple[str, ...] = tuple(n for n in _TRANS_UNIT_OPS if n not in _IMPLEMENTED)

if not frozenset(_TRANS_UNIT_OPS) >= _IMPLEMENTED:      # the table changed under this module
    raise RuntimeError(f"FpTrans implements instructions outside the table's trans sub-unit: "
                       f"{sorted(_IMPLEMENTED - frozenset(_TRANS_UNIT_OPS))}")

#: Result bits chosen per cycle by the recurrence: the weights 2**0 down to 2**-25.
_STEPS = 26
_INF = 0x7F800000
_FLT_MAX = 0x7F7FFFFF
_ONE = 0x3F800000

#: v_exp_f32: fraction bits of the argument and of the product, and the factors 1 + 2**-k.
_EXP_F = 52
_EXP_G = 54
_EXP_STEPS = 48


def _log2_table(frac_bits: int, steps: int) -> tuple[int, ...]:
    """``round(log2(1 + 2**-k) * 2**frac_bits)`` (nearest even) for k = 1..steps (the same
    constants as :func:`gpgpu_hdl.emu.fp.exp2_f32`, computed here independently)."""
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        ln2 = decimal.Decimal(2).ln()
        scale = decimal.Decimal(2) ** frac_bits
        return tuple(int(((1 + decimal.Decimal(2) ** -k).ln() / ln2 * scale)
                         .to_integral_value(decimal.ROUND_HALF_EVEN))
                     for k in range(1, steps + 1))


#: log2(1 + 2**-k) in units of 2**-52, k = 1..48 (the ROM of v_exp_f32).
EXP_TABLE: tuple[int, ...] = _log2_table(_EXP_F, _EXP_STEPS)


def _operand(m, bits, name: str):
    """Unpack f32 ``bits`` (flushed already) and normalize a denormal's significand.

    Returns :func:`~.common.unpack`'s namespace with ``sig`` replaced by the normalized 24-bit
    significand (hidden bit on top unless the value is 0) and ``exp`` by the signed biased
    exponent of its top bit (``value = sig * 2**(exp - 150)``, below 1 for a denormal).
    """
    u = unpack(bits)
    count, _ = leading_zeros(u.sig)
    sig = Signal(24, name=f"{name}_sig")
    exp = Signal(signed(10), name=f"{name}_exp")
    m.d.comb += [sig.eq(u.sig << count[:5]), exp.eq(u.exp - count)]
    u.sig, u.exp = sig, exp
    return u


def _below(m, a, b, offset: int, name: str):
    """``|a| * 2**offset < |b|`` exactly, for finite nonzero normalized operands."""
    shifted = Signal(signed(12), name=f"{name}_exp")
    out = Signal(name=name)
    m.d.comb += [
        shifted.eq(a.exp + offset),
        out.eq((shifted < b.exp) | ((shifted == b.exp) & (a.sig < b.sig))),
    ]
    return out


class FpTrans(FpSubUnit):
    """FP32 reciprocal, square root, reciprocal square root, 2**x and the division helpers.

    Timing: ``v_div_scale_f32``, ``v_div_fixup_f32`` and every op whose source is special (a
    zero, an infinity, a NaN, negative for the roots, out of [-126, 128) for exp) take one
    cycle: the result of the inputs at ``start`` is registered at the end of that cycle and
    ``done`` is high from the next one. Otherwise the datapath loads at the end of the
    ``start`` cycle, iterates (26 cycles for rcp/sqrt/rsq, 48 for exp), and the rounded result
    is registered one cycle later: ``done`` rises 28 (exp: 50) cycles after ``start``; the most
    of the ops built is :attr:`latency`. ``done`` falls at the end of a ``start`` cycle that
    begins an iteration; it stays high, the outputs stable, until then. The inputs must be
    held stable from ``start`` until ``done`` (the final rounding reads them again).

    Parameters
    ----------
    ops : iterable of str or None
        Mnemonics to build (default: all of :attr:`OPS`); see
        :class:`~gpgpu_hdl.cu.fpu.common.FpSubUnit`. Without sqrt and rsq there is no root
        datapath (``tau`` stays constant, no ``h`` registers); without rsq the registers are 26
        fraction bits wide instead of 48; without any of rcp/sqrt/rsq no digit recurrence;
        without exp no exp datapath.

    Members
    -------
    start, op, flush_in, flush_out, done
        As in :class:`~gpgpu_hdl.cu.fpu.common.FpSubUnit`; ``cin`` and ``ieee`` are not used.
    src0 : In(32)
        The operand of the unary ops; S0 of ``v_div_scale_f32`` (the value scaled) and of
        ``v_div_fixup_f32`` (the quotient estimate).
    src1, src2 : In(32)
        Denominator and numerator of ``v_div_scale_f32`` and ``v_div_fixup_f32``.
    result : Out(32)
        Destination bits.
    flag : Out(1)
        The VCC bit of ``v_div_scale_f32`` ("rescale the quotient"); 0 otherwise.
    """

    OPS = tuple(n for n in _TRANS_UNIT_OPS if n in _IMPLEMENTED)

    @property
    def latency(self) -> int:
        """Worst-case cycles from ``start`` to ``done``: 50 with exp, else 28 with
        rcp/sqrt/rsq, else 1."""
        if self._any(_EXP_OPS):
            return _EXP_STEPS + 2
        return _STEPS + 2 if self._any(_DIGIT_OPS) else 1

    @property
    def fraction_bits(self) -> int:
        """Fraction bits of the digit recurrence's registers (0 when it is not built)."""
        if self._any(_RSQ_OPS):
            return 48
        if self._any(_SQRT_OPS):
            return 26
        return 23 if self._any(_RCP_OPS) else 0

    @property
    def width(self) -> int:
        """Width of ``rho``, ``tau`` and the per-cycle subtraction (0 without a recurrence)."""
        if not self.fraction_bits:
            return 0
        return self.fraction_bits + (4 if self._any(_ROOT_OPS) else 2)

    def elaborate(self, platform):
        m = Module()
        # The logic is grouped in submodules by what it depends on: ``operands`` on the inputs
        # only (decoding, unpacking, special cases, the division helpers' decisions),
        # ``recurrence`` on its state, ``rounding`` on both (a simulator re-evaluates a group
        # only when its inputs change). The output registers are here.
        m.submodules.operands = mo = Module()
        m.submodules.rounding = mr = Module()

        dec = types.SimpleNamespace(**{
            name: self._decode(mo, names, f"is_{name}") for name, names in (
                ("rcp", _RCP_OPS), ("sqrt", _SQRT_OPS), ("rsq", _RSQ_OPS), ("clamp", _CLAMP_OPS),
                ("rcp_legacy", ("v_rcp_legacy_f32",)), ("rsq_legacy", ("v_rsq_legacy_f32",)),
                ("exp", _EXP_OPS), ("div_scale", _DIV_SCALE_OPS), ("div_fixup", _DIV_FIXUP_OPS))})

        # S0, flushed per MODE (rsq always)
        x_bits = Signal(32, name="x_bits")
        mo.d.comb += x_bits.eq(flush(self.src0, self.flush_in | dec.rsq))
        x = _operand(mo, x_bits, "x")

        value = Signal(32, name="value")        # the op's result, from the inputs and state
        value_flag = Signal(name="value_flag")
        needs_iter = Signal(name="needs_iter")  # start an iteration
        fin = Signal(name="fin")                # the iteration has ended: round now

        rp_sign = Signal(name="rp_sign")
        rp_exp = Signal(signed(12), name="rp_exp")
        rp_sig = Signal(27, name="rp_sig")
        rounded = None
        if self._any(_DIGIT_OPS + _EXP_OPS + _DIV_SCALE_OPS):
            # the roots only iterate on x > 0: every rounded result but exp has S0's sign
            mr.d.comb += rp_sign.eq(x.sign & ~dec.exp)
            rounded = round_pack(mr, rp_sign, rp_exp, rp_sig, self.flush_out, name="rp")

        if self._any(_DIGIT_OPS + _EXP_OPS):
            # --- the iteration's control: busy for 26 (exp: 48) cycles, then fin for one ---
            m.submodules.recurrence = mc = Module()
            busy = Signal(name="busy")
            count = Signal(range(max(_STEPS, _EXP_STEPS)), name="count")
            with mc.If(self.start & needs_iter):
                mc.d.sync += [busy.eq(1), fin.eq(0),
                              count.eq(Mux(dec.exp, _EXP_STEPS - 1, _STEPS - 1))]
            with mc.Elif(busy):
                mc.d.sync += count.eq(count - 1)
                with mc.If(count == 0):
                    mc.d.sync += [busy.eq(0), fin.eq(1)]
            with mc.Elif(fin):
                mc.d.sync += fin.eq(0)
            digit_iter = Signal(name="digit_iter")
            exp_iter = Signal(name="exp_iter")
            mo.d.comb += needs_iter.eq(digit_iter | exp_iter)
            if self._any(_DIGIT_OPS):
                self._recurrence(mo, mc, mr, x, dec, busy, digit_iter, rounded, rp_exp, rp_sig,
                                 value)
            if self._any(_EXP_OPS):
                self._exp(mo, mc, mr, x, x_bits, dec, busy, exp_iter, rounded, rp_exp, rp_sig,
                          value)

        if self._any(_DIV_SCALE_OPS + _DIV_FIXUP_OPS):
            d_bits = Signal(32, name="d_bits")
            n_bits = Signal(32, name="n_bits")
            mo.d.comb += [d_bits.eq(flush(self.src1, self.flush_in)),
                          n_bits.eq(flush(self.src2, self.flush_in))]
            d = _operand(mo, d_bits, "d")
            n = _operand(mo, n_bits, "n")
            if self._any(_DIV_SCALE_OPS):
                k, vcc = self._div_scale(mo, x_bits, d, d_bits, n, n_bits)
                with mr.If(dec.div_scale):
                    mr.d.comb += [
                        rp_exp.eq(x.exp + k),
                        rp_sig.eq(Cat(Const(0, 3), x.sig)),
                        value.eq(Mux(x.nan, F32_NAN,
                                     Mux(x.inf, Cat(Const(_INF, 31), x.sign), rounded))),
                        value_flag.eq(vcc),
                    ]
            if self._any(_DIV_FIXUP_OPS):
                df_value = self._div_fixup(mo, d, n)
                with mr.If(dec.div_fixup):
                    mr.d.comb += value.eq(df_value)

        with m.If(self.start):
            with m.If(needs_iter):
                m.d.sync += [self.done.eq(0), self.flag.eq(0)]
            with m.Else():
                m.d.sync += [self.result.eq(value), self.flag.eq(value_flag), self.done.eq(1)]
        with m.Elif(fin):
            m.d.sync += [self.result.eq(value), self.done.eq(1)]
        return m

    # --- rcp, sqrt, rsq --------------------------------------------------------------------

    def _recurrence(self, mo, mc, mr, x, dec, busy, needs_iter, rounded, rp_exp, rp_sig,
                    value):
        """Special cases and exponent (in ``mo``), the digit recurrence (``mc``) and the
        rounding and result of rcp/sqrt/rsq (``mr``)."""
        frac = self.fraction_bits
        width = self.width
        is_root = Signal(name="is_root")
        mo.d.comb += is_root.eq(dec.sqrt | dec.rsq)

        # --- special operands: NaN, negative (roots), zero, infinity ------------------------
        special = Signal(32, name="special")
        invalid = Signal(name="invalid")
        mo.d.comb += invalid.eq(x.nan | (is_root & x.sign & ~x.zero))
        with mo.If(invalid):
            mo.d.comb += special.eq(F32_NAN)
        with mo.Elif(x.zero):           # rcp, rsq: ±inf; sqrt: ±0
            mo.d.comb += special.eq(Cat(Mux(dec.sqrt, 0, _INF)[:31], x.sign))
        with mo.Else():                 # infinity: rcp ±0, rsq +0, sqrt +inf
            mo.d.comb += special.eq(Cat(Mux(dec.sqrt, _INF, 0)[:31], x.sign))
        mo.d.comb += needs_iter.eq((dec.rcp | is_root) & ~invalid & ~x.zero & ~x.inf)

        # --- exponent: x = m * 2**e_true, e_true even for the roots -------------------------
        e_true = Signal(signed(10), name="e_true")
        odd = Signal(name="odd")
        mi = Signal(25, name="m_sig")            # m with 23 fraction bits
        half = Signal(signed(10), name="e_half")
        base = Signal(signed(11), name="it_exp")   # biased exponent of y's weight 2**0
        m_fix = Signal(width, name="m_fix")        # m with frac fraction bits
        mo.d.comb += [
            e_true.eq(x.exp - 127),
            odd.eq(is_root & e_true[0]),
            mi.eq(Mux(odd, x.sig << 1, x.sig)),
            half.eq(e_true >> 1),                # floor: the even exponent halved
            m_fix.eq(mi << (frac - 23)),
        ]
        with mo.If(dec.sqrt):
            mo.d.comb += base.eq(127 + half)
        with mo.Elif(dec.rsq):
            mo.d.comb += base.eq(127 - half)
        with mo.Else():
            mo.d.comb += base.eq(127 - e_true)

        # --- state and one step per cycle ----------------------------------------------------
        rho = Signal(width, name="rho")
        tau = Signal(width, name="tau")
        y = Signal(_STEPS, name="y")
        one = 1 << frac

        diff = Signal(width + 1, name="diff")
        take = Signal(name="take")
        mc.d.comb += [diff.eq(rho - tau), take.eq(~diff[width])]

        with mc.If(self.start & needs_iter):
            mc.d.sync += [
                rho.eq(Mux(dec.sqrt, m_fix, one)),
                tau.eq(Mux(dec.sqrt, one, m_fix)),
            ]
        with mc.Elif(busy):
            mc.d.sync += [
                rho.eq(Mux(take, diff[:width], rho) << 1),
                y.eq(Cat(take, y[:-1])),
            ]

        if self._any(_ROOT_OPS):
            h = Signal(frac + 2, name="h")       # < 2
            h3 = Signal(frac + 3, name="h3")     # < 6
            with mc.If(self.start & needs_iter):
                mc.d.sync += [
                    h.eq(Mux(dec.sqrt, one >> 1, Mux(dec.rsq, m_fix >> 1, 0))),
                    h3.eq(Mux(dec.sqrt, (3 * one) >> 1,
                              Mux(dec.rsq, (m_fix + (m_fix << 1)) >> 1, 0))),
                ]
            with mc.Elif(busy):
                mc.d.sync += [
                    tau.eq(Mux(take, tau + h3, tau - h)),
                    h.eq(h >> 1),
                    h3.eq(h3 >> 1),
                ]

        # --- rounding: y has its 2**0 bit on top (always set for sqrt) -----------------------
        lead = y[_STEPS - 1]
        sig = Signal(_STEPS + 1, name="it_sig")
        mr.d.comb += [
            sig.eq(Cat(rho.any(), y)),
            rp_exp.eq(Mux(lead, base, base - 1)),
            rp_sig.eq(Mux(lead, sig, sig << 1)),
        ]

        # --- the clamp and legacy forms rewrite an infinite result ---------------------------
        raw = Signal(32, name="it_raw")
        mr.d.comb += raw.eq(Mux(needs_iter, rounded, special))
        with mr.If(is_inf(raw) & dec.clamp):
            mr.d.comb += value.eq(Cat(Const(_FLT_MAX, 31), raw[31]))
        with mr.Elif(is_inf(raw) & dec.rcp_legacy):
            mr.d.comb += value.eq(Cat(Const(0, 31), raw[31]))
        with mr.Elif(dec.rsq_legacy & (raw == _INF)):
            mr.d.comb += value.eq(0)
        with mr.Else():
            mr.d.comb += value.eq(raw)

    # --- exp --------------------------------------------------------------------------------

    def _exp(self, mo, mc, mr, x, x_bits, dec, busy, needs_iter, rounded, rp_exp, rp_sig,
             value):
        """``v_exp_f32``: range and fixed-point conversion (``mo``), the shift-and-add
        iteration (``mc``), rounding and result (``mr``)."""
        # --- special operands: NaN, x >= 128 (+inf included), x < -126 (-inf included), 0 ---
        too_big = Signal(name="exp_too_big")
        too_small = Signal(name="exp_too_small")
        special = Signal(32, name="exp_special")
        mo.d.comb += [
            too_big.eq(~x.sign & ~x.nan & (x_bits[:31] >= 0x43000000)),
            too_small.eq(x.sign & ~x.nan & (x_bits[:31] > 0x42FC0000)),
            needs_iter.eq(dec.exp & ~x.nan & ~too_big & ~too_small & ~x.zero),
        ]
        with mo.If(x.nan):
            mo.d.comb += special.eq(F32_NAN)
        with mo.Elif(too_big):
            mo.d.comb += special.eq(_INF)
        with mo.Elif(too_small):
            mo.d.comb += special.eq(0)
        with mo.Else():
            mo.d.comb += special.eq(_ONE)

        # --- floor(x * 2**52) = i * 2**52 + r: x.sig shifted by x.exp - 98 -----------------
        left = Signal(range(36), name="exp_left")          # x.exp - 98 when >= 0 (<= 35)
        right = Signal(range(89), name="exp_right")        # 98 - x.exp, at most 88 (all out)
        wide = Signal(24 + 88, name="exp_wide")
        magnitude = Signal(_EXP_F + 8, name="exp_mag")     # |x| * 2**52 truncated, < 2**59
        fixed = Signal(signed(_EXP_F + 9), name="exp_fixed")
        shift = Signal(signed(11), name="exp_shift")
        mo.d.comb += [
            shift.eq(x.exp - (150 - _EXP_F)),
            left.eq(Mux(shift >= 0, shift, 0)),
            right.eq(Mux(shift >= 0, 0, Mux(shift < -88, 88, -shift))),
            wide.eq(Cat(Const(0, 88), x.sig) >> right),
            magnitude.eq(Mux(shift >= 0, x.sig << left, wide[88:])),
            # floor of a negative value: minus the magnitude, one less if bits were dropped
            fixed.eq(Mux(x.sign, -magnitude - wide[:88].any(), magnitude)),
        ]

        # --- the iteration: r -= C[k], Y += Y >> k while r >= C[k], k = 1..48 -------------
        r = Signal(_EXP_F, name="exp_r")
        big_y = Signal(_EXP_G + 1, name="exp_y")
        k = Signal(range(_EXP_STEPS + 1), name="exp_k")
        table = Array(Const(c, _EXP_F) for c in (0, *EXP_TABLE))
        c_k = Signal(_EXP_F, name="exp_c")
        r_diff = Signal(_EXP_F + 1, name="exp_diff")
        mc.d.comb += [c_k.eq(table[k]), r_diff.eq(r - c_k)]
        with mc.If(self.start & needs_iter):
            mc.d.sync += [r.eq(fixed[:_EXP_F]), big_y.eq(1 << _EXP_G), k.eq(1)]
        with mc.Elif(busy):
            with mc.If(~r_diff[_EXP_F]):
                mc.d.sync += [r.eq(r_diff[:_EXP_F]), big_y.eq(big_y + (big_y >> k))]
            mc.d.sync += k.eq(k + 1)

        # --- rounding: Y * 2**(i - 54), Y in [2**54, 2**55) --------------------------------
        with mr.If(dec.exp):
            mr.d.comb += [
                rp_exp.eq(127 + fixed[_EXP_F:].as_signed()),
                rp_sig.eq(Cat(big_y[:_EXP_G - 25].any(), big_y[_EXP_G - 25:])),
                value.eq(Mux(needs_iter, rounded, special)),
            ]

    # --- division helpers ------------------------------------------------------------------

    def _div_scale(self, m, x_bits, d, d_bits, n, n_bits):
        """``v_div_scale_f32``: the power of two ``2**k`` applied to S0 and the VCC bit."""
        normal = Signal(name="ds_normal")
        big_q = Signal(name="ds_big_q")          # the quotient is near overflow
        d_huge = Signal(name="ds_d_huge")        # |d| > 2**126: 1/d is denormal
        n_tiny = Signal(name="ds_n_tiny")        # |n| < 2**-103
        q_den = _below(m, n, d, 126, "ds_q_den")     # n/d < 2**-126
        is_d = Signal(name="ds_is_d")
        is_n = Signal(name="ds_is_n")
        vcc = Signal(name="ds_vcc")
        k = Signal(signed(8), name="ds_k")
        m.d.comb += [
            normal.eq(~(d.zero | d.inf | d.nan | n.zero | n.inf | n.nan)),
            big_q.eq(n.exp - d.exp >= 96),
            d_huge.eq(d_bits[:31] > 0x7E800000),
            n_tiny.eq(n_bits[:31] < 0x0C000000),
            is_d.eq(x_bits == d_bits),
            is_n.eq(x_bits == n_bits),
            vcc.eq(normal & (big_q | (q_den & ~d.denorm))),
        ]
        with m.If(~normal):
            m.d.comb += k.eq(0)
        with m.Elif(big_q):
            m.d.comb += k.eq(Mux(is_d, 64, 0))
        with m.Elif(d.denorm):
            m.d.comb += k.eq(64)
        with m.Elif(d_huge):
            m.d.comb += k.eq(Mux(q_den & ~is_d, 0, -64))
        with m.Elif(q_den):
            m.d.comb += k.eq(Mux(is_n, 64, 0))
        with m.Elif(n_tiny):
            m.d.comb += k.eq(64)
        with m.Else():
            m.d.comb += k.eq(0)
        return k, vcc

    def _div_fixup(self, m, d, n):
        """``v_div_fixup_f32``: the special cases of n/d around the estimate S0."""
        q_bits = Signal(32, name="df_q")
        m.d.comb += q_bits.eq(flush(self.src0, self.flush_in | self.flush_out))
        underflow = _below(m, n, d, 150, "df_underflow")   # below half the smallest denormal
        sign = Signal(name="df_sign")
        m.d.comb += sign.eq(d.sign ^ n.sign)
        out = Signal(32, name="df_value")
        with m.If(d.nan | n.nan | (d.zero & n.zero) | (d.inf & n.inf)):
            m.d.comb += out.eq(F32_NAN)
        with m.Elif(d.zero | n.inf):
            m.d.comb += out.eq(Cat(Const(_INF, 31), sign))
        with m.Elif(d.inf | n.zero | underflow):
            m.d.comb += out.eq(Cat(Const(0, 31), sign))
        with m.Elif(is_nan(q_bits)):
            m.d.comb += out.eq(Cat(Const(_INF, 31), sign))
        with m.Else():
            m.d.comb += out.eq(Cat(q_bits[:31], sign))
        return out
