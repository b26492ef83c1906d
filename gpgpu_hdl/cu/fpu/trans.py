"""The FP32 divide / square-root / transcendental sub-unit (the instruction table's ``trans``
sub-unit).

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
  (:func:`gpgpu_hdl.emu.fp.exp2_f32`: relative error below 2^-46 before one rounding);
* ``v_log_f32``, ``v_log_clamp_f32`` (``-inf`` becomes ``-FLT_MAX``): ``log2(x)`` by the
  shift-and-add algorithm the model defines (:func:`gpgpu_hdl.emu.fp.log2_f32`: error below
  2^-22 ulp before one rounding), the source always flushed;
* ``v_sin_f32``, ``v_cos_f32``: ``sin(2*pi*x)``, ``cos(2*pi*x)`` by the CORDIC the model
  defines (:func:`gpgpu_hdl.emu.fp.sin_f32`: error below 2^-22 ulp before one rounding).

That is the whole table sub-unit (:data:`TRANS_NOT_BUILT` is empty).

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

``v_log_f32`` has one too (built only with it), the dual of exp's: ``x = 2**E * x'`` (or, for x in
(1, 5/4), ``x' = x * (1 - 2**-c)`` and a start value ``-log2(1 - 2**-c)`` from a 21-word ROM), and
the deviation from 1 held scaled, ``W = 2**k * (1 - x' * prod)`` with 52 fraction bits, below 2 (so
that it keeps its relative precision near 1). For 48 cycles from ``k = ks`` (1, or up to 23 near 1),
``T = W + (W >> k)`` (a barrel shifter and a 54-bit addition) decides: ``T >= 1`` takes the factor
``1 + 2**-k``, ``W <- 2 * (T - 1)`` (else ``2 * W``), and adds or subtracts ``log2(1 + 2**-k)`` (a
70-word ROM of 57-bit constants scaled by ``2**k``, shifted right by ``k - u``, a second shifter) to
the 58-bit result ``R``, kept at the result's scale ``2**(56 + u)``. ``R``'s leading one is among
its top four bits: a four-way shift and :func:`~.common.round_pack` round it. NaN, negative, zero
and +inf take one cycle.

``v_sin_f32`` and ``v_cos_f32`` share a third datapath. The argument is reduced exactly: for |x| >=
1/8, ``|x| * 2**26`` is an integer (35 bits), its distance to the nearest integer (ties to even)
gives ``t`` in [0, 1/4] (``min(a, 1/2 - a)``, or ``|1/4 - a|`` for cos) and the sign; below 1/8
``t = |x|`` (sin) or ``1/4 - |x|`` rounded down to 2**-58 (cos). CORDIC then rotates ``(x, y)``
from ``(1/K, 0)`` by ``-+atan(2**-k)`` as the angle left, ``z``, is positive or negative, for 48
cycles from ``k = ks``, where ``t`` is in [2**-(ks+3), 2**-(ks+2)) (``ks = 0`` from 1/8, up to 146
for a denormal): ``y`` and ``z`` are held at the scale ``2**ks``, so ``sin(2*pi*t)`` keeps its
relative precision however small ``t`` is. A cycle is three 58-bit additions or subtractions
(``x -+ y >> (ks + k)``, ``y +- x >> (k - ks)``, ``z -+ ROM[k] >> (k - ks)``, the ROM holding
``atan(2**-k) / (2*pi)`` scaled by ``2**k``, 33 words) beside three shifters; ``1/K`` (the gain of
the 48 rotations) comes from a 33-word ROM by ``ks``. ``y`` is rounded once, a denormal result
included. NaN, inf, |x| > 256, zeros and exact zero results (sin of a multiple of 1/2, cos of an
odd multiple of 1/4) take one cycle.
"""

import decimal
import types

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, signed

from ...emu import fp
from .common import (F32_NAN, FpSubUnit, flush, is_inf, is_nan, leading_zeros, pipeline_stage,
                     register, round_pack, unpack)
from .ops import FP_OPS, SUBUNIT_OF

__all__ = ["FpTrans", "TRANS_NOT_BUILT", "EXP_TABLE", "LOG_TABLE", "LOG_DOWN_TABLE",
           "TRIG_ATAN_TABLE", "TRIG_START_TABLE"]

_RCP_OPS = ("v_rcp_f32", "v_rcp_iflag_f32", "v_rcp_clamp_f32", "v_rcp_legacy_f32")
_SQRT_OPS = ("v_sqrt_f32",)
_RSQ_OPS = ("v_rsq_f32", "v_rsq_clamp_f32", "v_rsq_legacy_f32")
_ROOT_OPS = _SQRT_OPS + _RSQ_OPS
_DIGIT_OPS = _RCP_OPS + _ROOT_OPS           # the shared digit recurrence
_EXP_OPS = ("v_exp_f32",)
_LOG_OPS = ("v_log_f32", "v_log_clamp_f32")
_TRIG_OPS = ("v_sin_f32", "v_cos_f32")
_DIV_SCALE_OPS = ("v_div_scale_f32",)
_DIV_FIXUP_OPS = ("v_div_fixup_f32",)
_CLAMP_OPS = ("v_rcp_clamp_f32", "v_rsq_clamp_f32")

_TRANS_UNIT_OPS = tuple(n for n in FP_OPS if SUBUNIT_OF[n] == "trans")
_IMPLEMENTED = frozenset(_DIGIT_OPS + _EXP_OPS + _LOG_OPS + _TRIG_OPS + _DIV_SCALE_OPS
                         + _DIV_FIXUP_OPS)

#: The table's ``trans`` instructions :class:`FpTrans` does not build (none now).
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

#: v_log_f32: fraction bits of the scaled deviation W and of the sum R (relative to the
#: result's scale), the factors 1 + 2**-k per operation and the largest k.
_LOG_F = 52
_LOG_A = 56
_LOG_STEPS = 48
_LOG_KMAX = 23 + _LOG_STEPS - 1

#: v_sin_f32/v_cos_f32: fraction bits of x, y and of z (relative to 2**-ks), rotations per
#: operation, and the k from which the scaled constants no longer change.
_TRIG_X = 56
_TRIG_Z = 58
_TRIG_STEPS = 48
_TRIG_KCAP = 32


#: log2(1 + 2**-k) in units of 2**-52, k = 1..48 (the ROM of v_exp_f32): the golden model's
#: constants, which are the specification of v_exp_f32.
EXP_TABLE: tuple[int, ...] = fp._EXP_TABLE


def _log2_relative_table(down: bool, frac_bits: int, kmin: int, kmax: int) -> tuple[int, ...]:
    """``round(T * 2**(k + frac_bits))`` (nearest even) for k = kmin..kmax, ``T`` being
    ``log2(1 + 2**-k)``, or ``-log2(1 - 2**-k)`` when ``down`` (the same constants as
    :func:`gpgpu_hdl.emu.fp.log2_f32`, computed here independently)."""
    out = []
    with decimal.localcontext() as ctx:
        ctx.prec = 90
        two = decimal.Decimal(2)
        ln2 = two.ln()
        for k in range(kmin, kmax + 1):
            value = -(1 - two ** -k).ln() if down else (1 + two ** -k).ln()
            scaled = value / ln2 * two ** (k + frac_bits)
            out.append(int(scaled.to_integral_value(decimal.ROUND_HALF_EVEN)))
    return tuple(out)


#: log2(1 + 2**-k) * 2**(k + 56), k = 1..70 (the ROM of v_log_f32's iteration).
LOG_TABLE: tuple[int, ...] = _log2_relative_table(False, _LOG_A, 1, _LOG_KMAX)
#: -log2(1 - 2**-c) * 2**(c + 56), c = 2..22 (v_log_f32's start value for x in (1, 5/4)).
LOG_DOWN_TABLE: tuple[int, ...] = _log2_relative_table(True, _LOG_A, 2, 22)


def _cordic_tables() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``atan(2**-k) / (2*pi) * 2**(k + 58)`` for k = 0..32 and ``2**56`` divided by
    ``prod(sqrt(1 + 2**-2j), j = ks .. ks + 47)`` for ks = 0..32, rounded to nearest even (the
    same constants as :func:`gpgpu_hdl.emu.fp.sin_f32`, computed here independently)."""
    def atan(y: decimal.Decimal) -> decimal.Decimal:       # 0 < y <= 1/2: the series
        total, power, n = decimal.Decimal(0), y, 1
        while abs(power) > decimal.Decimal(10) ** -85:
            total += power / n
            power *= -y * y
            n += 2
        return total

    with decimal.localcontext() as ctx:
        ctx.prec = 80
        two = decimal.Decimal(2)
        quarter_pi = 4 * atan(decimal.Decimal(1) / 5) - atan(decimal.Decimal(1) / 239)
        angles = [quarter_pi] + [atan(two ** -k) for k in range(1, _TRIG_KCAP + 1)]
        rom = tuple(int((a / (8 * quarter_pi) * two ** (k + _TRIG_Z))
                        .to_integral_value(decimal.ROUND_HALF_EVEN))
                    for k, a in enumerate(angles))
        starts = []
        for ks in range(_TRIG_KCAP + 1):
            gain_squared = decimal.Decimal(1)
            for j in range(ks, ks + _TRIG_STEPS):
                gain_squared *= 1 + two ** (-2 * j)
            starts.append(int((two ** _TRIG_X / gain_squared.sqrt())
                              .to_integral_value(decimal.ROUND_HALF_EVEN)))
    return rom, tuple(starts)


#: atan(2**-k) / (2*pi) * 2**(k + 58), k = 0..32 (v_sin_f32/v_cos_f32's angle ROM, revolutions)
#: and the start value 2**56 / gain for each first rotation ks = 0..32.
TRIG_ATAN_TABLE, TRIG_START_TABLE = _cordic_tables()


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


def _held_operand(m, load, u, name: str):
    """:func:`_operand`'s namespace ``u`` as registers loaded when ``load``."""
    return types.SimpleNamespace(**{
        key: register(m, getattr(u, key), f"{name}_{key}", load=load)
        for key in ("sign", "exp", "sig", "zero", "denorm", "inf", "nan", "snan")})


def _late(m, value, name: str):
    """``value`` registered, loaded every cycle: for a function of the stage-0 registers it is
    valid from the second cycle after ``start`` on (from the third for a function of such a
    register), and, like them, stable until the next ``start``. Splits a long operand
    computation across the cycles before ``go`` (the third after ``start``)."""
    return register(m, value, name)


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
    """FP32 reciprocal, square root, reciprocal square root, 2**x, log2(x), sin, cos and the
    division helpers.

    Timing: the sources (flushed and unpacked), the op and MODE are registered at the end of
    the ``start`` cycle, so the inputs may change from the next cycle on. The two cycles after
    are spent on the slow parts of the argument reductions and start values (exp's fixed
    point, log's start values, sin/cos's reduced angle, then its start values); in the one
    after that, ``go``, the special cases are decided and an iteration is loaded.
    ``v_div_scale_f32``, ``v_div_fixup_f32`` and every op whose source is special (a zero, an
    infinity, a NaN, negative for the roots and log, out of [-126, 128) for exp, beyond 256 or
    with an exact zero result for sin/cos) are then rounded in a cycle of their own and
    registered: ``done`` rises :attr:`SHORT_LATENCY` (5) cycles after ``start``.
    Otherwise the datapath iterates (26 cycles for rcp/sqrt/rsq, 48 for exp, log, sin and cos),
    then the result is rounded and registered: ``done`` rises 32 (exp, log, sin, cos: 54)
    cycles after ``start`` (the steps plus :attr:`ITER_OVERHEAD`); the most of the ops built is
    :attr:`latency`. ``done`` falls at the end of every ``start`` cycle and stays high, the
    outputs stable, from when it rises until then.

    Parameters
    ----------
    ops : iterable of str or None
        Mnemonics to build (default: all of :attr:`OPS`); see
        :class:`~gpgpu_hdl.cu.fpu.common.FpSubUnit`. Without sqrt and rsq there is no root
        datapath (``tau`` stays constant, no ``h`` registers); without rsq the registers are 26
        fraction bits wide instead of 48; without any of rcp/sqrt/rsq no digit recurrence;
        without exp no exp datapath; without log no log datapath; without sin and cos no
        CORDIC.

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

    #: Cycles from ``start`` to ``done`` of an operation that does not iterate.
    SHORT_LATENCY = 5
    #: Cycles from ``start`` to ``done`` of an iterating operation beyond its steps (26 for
    #: rcp/sqrt/rsq, 48 for exp, log, sin and cos).
    ITER_OVERHEAD = 6

    @property
    def latency(self) -> int:
        """Worst-case cycles from ``start`` to ``done``: 54 with exp, log, sin or cos, else 32
        with rcp/sqrt/rsq, else 5."""
        steps = [n for ops, n in ((_DIGIT_OPS, _STEPS), (_EXP_OPS, _EXP_STEPS),
                                  (_LOG_OPS, _LOG_STEPS), (_TRIG_OPS, _TRIG_STEPS))
                 if self._any(ops)]
        return max(steps) + self.ITER_OVERHEAD if steps else self.SHORT_LATENCY

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

        # --- stage 0 (the start cycle): the sources flushed and unpacked, registered with the
        # op and MODE; they hold until the next start. The operand logic reads them in the
        # cycle ``go`` (three cycles after start: the two between register the slow parts of
        # the argument reductions and the start values, see :func:`_late`); the iteration loads
        # at the end of ``go``.
        valid1 = Signal(name="valid1")
        valid2 = Signal(name="valid2")
        go = Signal(name="go")
        m.d.sync += [valid1.eq(self.start), valid2.eq(valid1), go.eq(valid2)]
        op = register(m, self.op.as_value(), "s0_op", load=self.start)
        flush_out = register(m, self.flush_out, "s0_flush_out", load=self.start)
        always = self._decode(m, _RSQ_OPS + _LOG_OPS, "in_flush_always")

        dec = types.SimpleNamespace(**{
            name: self._decode(mo, names, f"is_{name}", op) for name, names in (
                ("rcp", _RCP_OPS), ("sqrt", _SQRT_OPS), ("rsq", _RSQ_OPS), ("clamp", _CLAMP_OPS),
                ("rcp_legacy", ("v_rcp_legacy_f32",)), ("rsq_legacy", ("v_rsq_legacy_f32",)),
                ("exp", _EXP_OPS), ("log", _LOG_OPS), ("log_clamp", ("v_log_clamp_f32",)),
                ("trig", _TRIG_OPS), ("cos", ("v_cos_f32",)),
                ("div_scale", _DIV_SCALE_OPS), ("div_fixup", _DIV_FIXUP_OPS))})

        dec.go = go
        # registered copies for the iteration registers' enables (valid from the cycle before
        # go, like the start values)
        for name in ("exp", "log", "trig"):
            setattr(dec, f"{name}_r", _late(m, getattr(dec, name), f"is_{name}_r"))

        # S0, flushed per MODE (rsq and log always)
        x_in = Signal(32, name="x_in")
        m.d.comb += x_in.eq(flush(self.src0, self.flush_in | always))
        x_bits = register(m, x_in, "x_bits", load=self.start)
        x = _held_operand(m, self.start, _operand(m, x_in, "x_in"), "x")

        value = Signal(32, name="value")        # the op's result, from the inputs and state
        value_flag = Signal(name="value_flag")
        needs_iter = Signal(name="needs_iter")  # start an iteration
        # registered (its inputs are valid a cycle before go): the load enable of every
        # iteration register does not wait for the special-case decisions
        iterate = _late(m, needs_iter, "iterate")
        dec.load = Signal(name="load")
        m.d.comb += dec.load.eq(go & iterate)
        fin = Signal(name="fin")                # the iteration has ended: round now

        rp_sign = Signal(name="rp_sign")
        rp_exp = Signal(signed(12), name="rp_exp")
        rp_sig = Signal(27, name="rp_sig")
        log_sign = Signal(name="log_sign")
        trig_sign = Signal(name="trig_sign")
        rounded = None
        if self._any(_DIGIT_OPS + _EXP_OPS + _LOG_OPS + _TRIG_OPS + _DIV_SCALE_OPS):
            # the roots only iterate on x > 0: every rounded result but exp, log, sin and cos
            # has S0's sign
            mr.d.comb += rp_sign.eq(Mux(dec.log, log_sign,
                                        Mux(dec.trig, trig_sign, x.sign & ~dec.exp)))
            # registered: the rounding is a cycle of its own
            rq = pipeline_stage(mr, "rq", sign=rp_sign, exp=rp_exp, sig=rp_sig)
            rounded = round_pack(mr, rq.sign, rq.exp, rq.sig, flush_out, name="rp")

        if self._any(_DIGIT_OPS + _EXP_OPS + _LOG_OPS + _TRIG_OPS):
            # --- the iteration's control: busy for 26 (exp, log, sin, cos: 48) cycles, then fin
            # for one ---
            m.submodules.recurrence = mc = Module()
            busy = Signal(name="busy")
            count = Signal(range(max(_STEPS, _EXP_STEPS, _LOG_STEPS, _TRIG_STEPS)), name="count")
            with mc.If(dec.load):
                mc.d.sync += [busy.eq(1), fin.eq(0),
                              count.eq(Mux(dec.exp, _EXP_STEPS - 1,
                                           Mux(dec.log, _LOG_STEPS - 1,
                                               Mux(dec.trig, _TRIG_STEPS - 1, _STEPS - 1))))]
            with mc.Elif(busy):
                mc.d.sync += count.eq(count - 1)
                with mc.If(count == 0):
                    mc.d.sync += [busy.eq(0), fin.eq(1)]
            with mc.Elif(fin):
                mc.d.sync += fin.eq(0)
            digit_iter = Signal(name="digit_iter")
            exp_iter = Signal(name="exp_iter")
            log_iter = Signal(name="log_iter")
            trig_iter = Signal(name="trig_iter")
            mo.d.comb += needs_iter.eq(digit_iter | exp_iter | log_iter | trig_iter)
            if self._any(_DIGIT_OPS):
                self._recurrence(mo, mc, mr, x, dec, busy, digit_iter, rounded, rp_exp, rp_sig,
                                 value)
            if self._any(_EXP_OPS):
                self._exp(mo, mc, mr, x, x_bits, dec, busy, exp_iter, rounded, rp_exp, rp_sig,
                          value)
            if self._any(_LOG_OPS):
                self._log(mo, mc, mr, x, x_bits, dec, busy, log_iter, rounded, rp_exp, rp_sig,
                          log_sign, value)
            if self._any(_TRIG_OPS):
                self._trig(mo, mc, mr, x, x_bits, dec, busy, trig_iter, rounded, rp_exp, rp_sig,
                           trig_sign, value)

        if self._any(_DIV_SCALE_OPS + _DIV_FIXUP_OPS):
            d_in = Signal(32, name="d_in")
            n_in = Signal(32, name="n_in")
            m.d.comb += [d_in.eq(flush(self.src1, self.flush_in)),
                         n_in.eq(flush(self.src2, self.flush_in))]
            d_bits = register(m, d_in, "d_bits", load=self.start)
            n_bits = register(m, n_in, "n_bits", load=self.start)
            d = _held_operand(m, self.start, _operand(m, d_in, "d_in"), "d")
            n = _held_operand(m, self.start, _operand(m, n_in, "n_in"), "n")
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
                q_bits = register(m, flush(self.src0, self.flush_in | self.flush_out), "df_q",
                                  load=self.start)
                df_value = self._div_fixup(mo, q_bits, d, n)
                with mr.If(dec.div_fixup):
                    mr.d.comb += value.eq(df_value)

        # the result: a cycle after ``go`` (no iteration) or ``fin``, the rounding's register
        out = Signal(name="out")
        m.d.sync += out.eq((go & ~iterate) | fin)
        with m.If(self.start):
            m.d.sync += self.done.eq(0)
        with m.Elif(out):
            m.d.sync += [self.result.eq(value), self.flag.eq(value_flag), self.done.eq(1)]
        return m

    # --- rcp, sqrt, rsq --------------------------------------------------------------------

    def _recurrence(self, mo, mc, mr, x, dec, busy, needs_iter, rounded, rp_exp, rp_sig,
                    value):
        """Special cases and exponent (in ``mo``), the digit recurrence (``mc``) and the
        rounding and result of rcp/sqrt/rsq (``mr``)."""
        frac = self.fraction_bits
        width = self.width
        is_root = Signal(name="is_root")
        is_digit = Signal(name="is_digit")     # the registers only step for these ops
        mo.d.comb += [is_root.eq(dec.sqrt | dec.rsq), is_digit.eq(dec.rcp | is_root)]
        is_digit_r = _late(mo, is_digit, "is_digit_r")      # the iteration's enable

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

        with mc.If(dec.load & is_digit_r):
            mc.d.sync += [
                rho.eq(Mux(dec.sqrt, m_fix, one)),
                tau.eq(Mux(dec.sqrt, one, m_fix)),
            ]
        with mc.Elif(busy & is_digit_r):
            mc.d.sync += [
                rho.eq(Mux(take, diff[:width], rho) << 1),
                y.eq(Cat(take, y[:-1])),
            ]

        if self._any(_ROOT_OPS):
            h = Signal(frac + 2, name="h")       # < 2
            h3 = Signal(frac + 3, name="h3")     # < 6
            with mc.If(dec.load & is_digit_r):
                mc.d.sync += [
                    h.eq(Mux(dec.sqrt, one >> 1, Mux(dec.rsq, m_fix >> 1, 0))),
                    h3.eq(Mux(dec.sqrt, (3 * one) >> 1,
                              Mux(dec.rsq, (m_fix + (m_fix << 1)) >> 1, 0))),
                ]
            with mc.Elif(busy & is_digit_r):
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
        fixed_in = Signal(signed(_EXP_F + 9), name="exp_fixed_in")
        shift = Signal(signed(11), name="exp_shift")
        mo.d.comb += [
            shift.eq(x.exp - (150 - _EXP_F)),
            left.eq(Mux(shift >= 0, shift, 0)),
            right.eq(Mux(shift >= 0, 0, Mux(shift < -88, 88, -shift))),
            wide.eq(Cat(Const(0, 88), x.sig) >> right),
            magnitude.eq(Mux(shift >= 0, x.sig << left, wide[88:])),
            # floor of a negative value: minus the magnitude, one less if bits were dropped
            fixed_in.eq(Mux(x.sign, -magnitude - wide[:88].any(), magnitude)),
        ]
        fixed = _late(mo, fixed_in, "exp_fixed")       # a cycle before go

        # --- the iteration: r -= C[k], Y += Y >> k while r >= C[k], k = 1..48 -------------
        # (a module of its own, which only steps for exp: a simulator evaluates it only when
        # its state changes)
        mc.submodules.exp = me = Module()
        r = Signal(_EXP_F, name="exp_r")
        big_y = Signal(_EXP_G + 1, name="exp_y")
        k = Signal(range(_EXP_STEPS + 1), name="exp_k")
        table = Array(Const(c, _EXP_F) for c in (0, *EXP_TABLE))
        c_k = Signal(_EXP_F, name="exp_c")
        r_diff = Signal(_EXP_F + 1, name="exp_diff")
        me.d.comb += [c_k.eq(table[k]), r_diff.eq(r - c_k)]
        with me.If(dec.load & dec.exp_r):
            me.d.sync += [r.eq(fixed[:_EXP_F]), big_y.eq(1 << _EXP_G), k.eq(1)]
        with me.Elif(busy & dec.exp_r):
            with me.If(~r_diff[_EXP_F]):
                me.d.sync += [r.eq(r_diff[:_EXP_F]), big_y.eq(big_y + (big_y >> k))]
            me.d.sync += k.eq(k + 1)

        # --- rounding: Y * 2**(i - 54), Y in [2**54, 2**55) --------------------------------
        with mr.If(dec.exp):
            mr.d.comb += [
                rp_exp.eq(127 + fixed[_EXP_F:].as_signed()),
                rp_sig.eq(Cat(big_y[:_EXP_G - 25].any(), big_y[_EXP_G - 25:])),
                value.eq(Mux(needs_iter, rounded, special)),
            ]

    # --- log --------------------------------------------------------------------------------

    def _log(self, mo, mc, mr, x, x_bits, dec, busy, needs_iter, rounded, rp_exp, rp_sig,
             sign, value):
        """``v_log_f32``, ``v_log_clamp_f32``: cases, start values (``mo``), the shift-and-add
        iteration (``mc``), rounding and result (``mr``)."""
        frac, acc = _LOG_F, _LOG_A
        # --- special operands: NaN, x < 0 (-inf included), ±0 (denormals flushed), +inf ------
        invalid = Signal(name="log_invalid")
        special = Signal(32, name="log_special")
        mo.d.comb += [
            invalid.eq(x.nan | (x.sign & ~x.zero)),
            needs_iter.eq(dec.log & ~invalid & ~x.zero & ~x.inf),
        ]
        with mo.If(invalid):
            mo.d.comb += special.eq(F32_NAN)
        with mo.Elif(x.zero):
            mo.d.comb += special.eq(Cat(Const(_INF, 31), 1))
        with mo.Else():
            mo.d.comb += special.eq(_INF)

        # --- the cases: x = 2**E * x' with x' in (1/2, 1] (E - 1 the exponent, or E with a zero
        # mantissa), except x in (1, 5/4): x' = x * (1 - 2**-c), c = leading zeros of mant ---
        mant = x_bits[:23]
        field = x_bits[23:31]
        pow2 = Signal(name="log_pow2")
        big_e = Signal(signed(10), name="log_e")
        below = Signal(name="log_below")          # x in (1/2, 1): the result is -log2(1/x')
        above = Signal(name="log_above")          # x in (1, 5/4)
        mo.d.comb += [
            pow2.eq(~mant.any()),
            big_e.eq(field - 126 - pow2),
            below.eq((field == 126) & ~pow2),
            above.eq((field == 127) & ~pow2 & ~mant[21:].any()),
        ]
        # 1 - x' = v * 2**-24, or (2**23 - mant * (2**c - 1)) * 2**-(23 + c) (above)
        v = Signal(24, name="log_v")
        nv = Signal(24, name="log_nv")
        norm = Signal(24, name="log_norm")
        mo.d.comb += [
            v.eq(Mux(pow2, 0, (1 << 23) - mant)),
            nv.eq(Mux(above, mant, v)),
        ]
        lz, _ = leading_zeros(nv)
        mo.d.comb += norm.eq(nv << lz[:5])
        ks = Signal(range(24), name="log_ks")     # the first k
        w_init = Signal(frac + 1, name="log_w_init")
        mo.d.comb += ks.eq(Mux(below, lz, Mux(above, lz - 1, 1)))
        with mo.If(above):
            mo.d.comb += w_init.eq(((1 << 23) - (norm >> 1) + mant) << (frac - 23))
        with mo.Elif(below):
            mo.d.comb += w_init.eq(norm << (frac - 24))
        with mo.Else():
            mo.d.comb += w_init.eq(v << (frac - 23))

        # --- the result's scale: R = |log2 x| * 2**(56 + u) in [2**54, 2**58) ---------------
        mag = Signal(8, name="log_mag")           # |E| <= 128
        mag1 = Signal(9, name="log_mag1")
        mo.d.comb += [mag.eq(Mux(big_e < 0, -big_e, big_e)), mag1.eq(mag + 1)]
        lz_e, _ = leading_zeros(mag1)             # 9 - bitlen(|E| + 1), at most 8
        u = Signal(signed(8), name="log_u")
        shift0 = Signal(range(8), name="log_shift0")   # k - u at the first step
        r_init = Signal(acc + 2, name="log_r_init")
        down = Array(Const(c, acc + 1) for c in (0, 0, *LOG_DOWN_TABLE, *(0,) * 9))
        mo.d.comb += [
            u.eq(Mux(below | above, ks, lz_e - 7)),
            shift0.eq(Mux(below | above, 0, 8 - lz_e)),
        ]
        mo.d.sync += sign.eq(below | (~above & (big_e < 0)))      # a cycle before go
        with mo.If(above):
            mo.d.comb += r_init.eq(down[(lz - 1)[:5]])
        with mo.Elif(below):
            mo.d.comb += r_init.eq(0)
        with mo.Else():
            mo.d.comb += r_init.eq((mag << lz_e[:4]) << (acc - 7))
        # registered: the start values are computed in a cycle before go
        ks, w_init, r_init, shift0, u = (_late(mo, value, f"{value.name}_r")
                                         for value in (ks, w_init, r_init, shift0, u))

        # --- the iteration: W + (W >> k) >= 1 takes the factor 1 + 2**-k -----------------------
        # (a module of its own: a simulator evaluates it only when its state changes)
        mc.submodules.log = ml = Module()
        w = Signal(frac + 1, name="log_w")
        r = Signal(acc + 2, name="log_r")
        k = Signal(range(_LOG_KMAX + 1), name="log_k")
        sh = Signal(range(8 + _LOG_STEPS), name="log_sh")
        table = Array(Const(c, acc + 1) for c in (0, *LOG_TABLE, 0))
        t = Signal(frac + 2, name="log_t")
        # the step's constant, table[k] >> sh, is a register loaded a step ahead (k and sh
        # only count up), so the ROM and its shifter are not in front of the addition
        term = Signal(acc + 1, name="log_term")
        term_init = _late(mo, table[ks] >> shift0, "log_term_init")   # valid at go
        take = Signal(name="log_take")
        ml.d.comb += [
            t.eq(w + (w >> k)),
            take.eq(t[frac:].any()),
        ]
        with ml.If(dec.load & dec.log_r):
            ml.d.sync += [w.eq(w_init), r.eq(r_init), k.eq(ks), sh.eq(shift0),
                          term.eq(term_init)]
        with ml.Elif(busy & dec.log_r):
            ml.d.sync += [
                w.eq(Cat(Const(0, 1), Mux(take, t[:frac], w[:frac]))),
                k.eq(k + 1),
                sh.eq(sh + 1),
                term.eq(table[k + 1] >> (sh + 1)),
            ]
            with ml.If(take):
                ml.d.sync += r.eq(Mux(sign, r + term, r - term))

        # --- rounding: R * 2**-(56 + u), its leading bit among the top four (R = 0: x = 1) ---
        lz_r, _ = leading_zeros(r[acc - 2:])
        r_norm = Signal(acc + 2, name="log_r_norm")
        low = acc + 2 - 26
        ml.d.comb += r_norm.eq(r << lz_r)
        with mr.If(dec.log):
            mr.d.comb += [
                rp_exp.eq(128 - lz_r - u),
                rp_sig.eq(Cat(r_norm[:low].any(), r_norm[low:])),
            ]
            with mr.If(~needs_iter):
                mr.d.comb += value.eq(Mux(dec.log_clamp & (special == 0xFF800000),
                                          0xFF7FFFFF, special))
            with mr.Else():
                mr.d.comb += value.eq(rounded)

    # --- sin, cos ---------------------------------------------------------------------------

    def _trig(self, mo, mc, mr, x, x_bits, dec, busy, needs_iter, rounded, rp_exp, rp_sig,
              sign, value):
        """``v_sin_f32``, ``v_cos_f32``: argument reduction and start values (``mo``), the
        CORDIC rotations (``mc``), rounding and result (``mr``)."""
        fx, fz = _TRIG_X, _TRIG_Z
        # --- |x| >= 1/8 (exponent >= 124): |x| * 2**26 exactly, its distance to an integer ---
        fixed_in = Signal(name="trig_fixed_in")
        xi = Signal(24 + 11, name="trig_xi")               # |x| <= 256
        frac = xi[:26]
        rneg = Signal(name="trig_rneg")                     # x - rint(x) has the other sign
        a = Signal(26, name="trig_a")                       # |x - rint(x)| * 2**26 <= 2**25
        c = Signal(signed(27), name="trig_c")               # (1/4 - |x - rint(x)|) * 2**26
        t_in = Signal(25, name="trig_t_in")                 # the reduced angle * 2**26
        sign_in = Signal(name="trig_sign_in")
        mo.d.comb += [
            fixed_in.eq(x.exp >= 124),
            xi.eq(Mux(fixed_in, x.sig << (x.exp - 124)[:4], 0)),
            rneg.eq((frac > (1 << 25)) | ((frac == (1 << 25)) & xi[26])),
            a.eq(Mux(rneg, (1 << 26) - frac, frac)),
            c.eq((1 << 24) - a),
        ]
        with mo.If(dec.cos):            # cos(2 pi a) = sin(2 pi (1/4 - a))
            mo.d.comb += [t_in.eq(Mux(c < 0, -c, c)), sign_in.eq(fixed_in & (c < 0))]
        with mo.Else():                 # sin(2 pi a) = sin(2 pi (1/2 - a))
            mo.d.comb += [t_in.eq(Mux(a > (1 << 24), (1 << 25) - a, a)),
                          sign_in.eq(x.sign ^ (fixed_in & rneg))]
        # registered: the reduction takes a cycle before go
        fixed = _late(mo, fixed_in, "trig_fixed")
        t = _late(mo, t_in, "trig_t")
        mo.d.sync += sign.eq(sign_in)

        # --- special operands: NaN, inf, |x| > 256, zero, and exact zeros of the result ------
        in_range = Signal(name="trig_in_range")
        zero_t = Signal(name="trig_zero_t")
        special = Signal(32, name="trig_special")
        mo.d.comb += [
            in_range.eq(x_bits[:31] <= 0x4380_0000),
            zero_t.eq(fixed & ~t.any()),
            needs_iter.eq(dec.trig & ~x.nan & ~x.inf & in_range & ~x.zero & ~zero_t),
        ]
        with mo.If(x.nan | x.inf):
            mo.d.comb += special.eq(F32_NAN)
        with mo.Elif(dec.cos):          # 1.0 out of range and for a zero, +0 for a zero t
            mo.d.comb += special.eq(Mux(zero_t & in_range & ~x.zero, 0, _ONE))
        with mo.Elif(~in_range):
            mo.d.comb += special.eq(0)
        with mo.Else():                 # a signed zero
            mo.d.comb += special.eq(Cat(Const(0, 31), sign))

        # --- start: t in [2**-(ks+3), 2**-(ks+2)) (ks = 0 from 1/8), z = t * 2**(ks + 58) ------
        lz, _ = leading_zeros(t)
        ks = Signal(8, name="trig_ks")                      # up to 146 (a denormal x)
        z_init = Signal(signed(fz), name="trig_z_init")
        # cos of |x| < 1/8: 1/4 - |x| rounded down, 2**56 - ceil(|x| * 2**58)
        left = Signal(range(32), name="trig_left")
        right = Signal(range(128), name="trig_right")
        wide = Signal(24 + 120, name="trig_wide")
        up_in = Signal(fz - 2, name="trig_up_in")
        mo.d.comb += [
            left.eq(Mux(x.exp >= 92, x.exp - 92, 0)),
            right.eq(Mux(x.exp >= 92, 0, 92 - x.exp)),
            wide.eq(Cat(Const(0, 120), x.sig) >> right),
            up_in.eq(Mux(x.exp >= 92, x.sig << left, wide[120:] + wide[:120].any())),
        ]
        up = _late(mo, up_in, "trig_up")
        with mo.If(fixed):
            mo.d.comb += [ks.eq(Mux(lz == 0, 0, lz - 1)),
                          z_init.eq(Mux(lz == 0, t << 32, (t << lz[:5]) << 31))]
        with mo.Elif(dec.cos):
            mo.d.comb += [ks.eq(0), z_init.eq((1 << (fz - 2)) - up)]
        with mo.Else():                 # sin of |x| < 1/8: t = |x|, the normalized significand
            mo.d.comb += [ks.eq(124 - x.exp), z_init.eq(x.sig << 32)]
        ks_cap = Signal(range(_TRIG_KCAP + 1), name="trig_ks_cap")
        shy_init = Signal(range(64), name="trig_shy_init")
        mo.d.comb += [
            ks_cap.eq(Mux(ks > _TRIG_KCAP, _TRIG_KCAP, ks)),
            shy_init.eq(Mux(ks > 31, 63, ks << 1)),
        ]
        # registered again: the start values take the cycle after the reduction's
        ks, z_init, ks_cap, shy_init = (_late(mo, value, f"{value.name}_r")
                                        for value in (ks, z_init, ks_cap, shy_init))

        # --- the rotations: d = sign of z; x -= d y 2**-k, y += d x 2**-k, z -= d atan(2**-k) -
        # (a module of its own: a simulator evaluates it only when its state changes)
        mc.submodules.trig = mt = Module()
        cx = Signal(signed(fx + 2), name="trig_x")
        cy = Signal(signed(fx + 2), name="trig_y")          # scaled by 2**ks
        cz = Signal(signed(fz), name="trig_z")              # scaled by 2**ks
        i = Signal(range(_TRIG_STEPS), name="trig_i")       # k - ks
        kidx = Signal(range(_TRIG_KCAP + 1), name="trig_k")  # min(k, 32)
        shy = Signal(range(64), name="trig_shy")            # min(ks + k, 63)
        atan = Array(Const(v, fz - 2) for v in TRIG_ATAN_TABLE)
        starts = Array(Const(v, fx + 1) for v in TRIG_START_TABLE)
        dx = Signal(signed(fx + 2), name="trig_dx")
        dy = Signal(signed(fx + 2), name="trig_dy")
        dz = Signal(fz - 2, name="trig_dz")
        down = Signal(name="trig_down")
        mt.d.comb += [
            down.eq(cz < 0),
            dx.eq(cy >> shy),
            dy.eq(cx >> i),
            dz.eq(atan[kidx] >> i),
        ]
        with mt.If(dec.load & dec.trig_r):
            mt.d.sync += [cx.eq(starts[ks_cap]), cy.eq(0), cz.eq(z_init), i.eq(0),
                          kidx.eq(ks_cap), shy.eq(shy_init)]
        with mt.Elif(busy & dec.trig_r):
            mt.d.sync += [
                cx.eq(Mux(down, cx + dx, cx - dx)),
                cy.eq(Mux(down, cy - dy, cy + dy)),
                cz.eq(Mux(down, cz + dz, cz - dz)),
                i.eq(i + 1),
                kidx.eq(Mux(kidx == _TRIG_KCAP, _TRIG_KCAP, kidx + 1)),
                shy.eq(Mux(shy == 63, 63, shy + 1)),
            ]

        # --- rounding: y * 2**-(ks + 56), y in [2**55, 2**57) ---------------------------------
        top = cy[fx]
        y_norm = Signal(fx + 1, name="trig_y_norm")
        low = fx + 1 - 26
        mt.d.comb += y_norm.eq(Mux(top, cy[:fx + 1], cy[:fx] << 1))
        with mr.If(dec.trig):
            mr.d.comb += [
                rp_exp.eq(126 + top - ks),
                rp_sig.eq(Cat(y_norm[:low].any(), y_norm[low:])),
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

    def _div_fixup(self, m, q_bits, d, n):
        """``v_div_fixup_f32``: the special cases of n/d around the estimate S0 (``q_bits``,
        flushed per both MODE flags)."""
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
