# amaranth: UnusedElaboratable=no
"""One lane of the FP32 vector unit: the sub-units a profile needs, behind one port set.

:class:`FpLaneUnit` instantiates, for the FP32 instructions it is asked to build, only the
sub-units those instructions need (:data:`UNIT_CLASSES`), each built with only its share of the
instructions:

==========  =====================================================================  ============
submodule   class                                                                  table
==========  =====================================================================  ============
``arith``   :class:`~.arith.FpMulAdd`: the multiplier (``mul``) and the adder      add, mul, mad
            (``add``), chained for the unfused multiply-add
``fma``     :class:`~.arith.FpFma`: the fused multiply-add                         fma
``cmp``     :class:`~.cmp.FpCmp`: compares, class, min/max/med3                    cmp
``cvt``     :class:`~.cvt.FpCvt`: conversions, rounding to integral, ldexp/frexp   cvt
``trans``   :class:`~.trans.FpTrans`: reciprocal, square roots, division helpers   trans
==========  =====================================================================  ============

Around them the lane applies what the VOP3 encoding adds: the input modifiers ``abs`` and
``neg`` on every source (as the golden model does) and, on a float result, the output
modifiers ``omod`` (times 2, 4 or 0.5, rounded and flushed like any f32 result) and ``clamp``
(to [0, 1]; a NaN stays NaN, or becomes +0 with MODE.DX10_CLAMP).
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...isa.table import TABLE, Unit
from .arith import FpFma, FpMulAdd
from .cmp import FpCmp
from .common import F32_NAN, is_nan, leading_zeros, round_pack, unpack
from .cvt import FpCvt
from .ops import FP_OPS, FpOp, fp_member
from .trans import FpTrans

__all__ = ["FpLaneUnit", "UNIT_CLASSES", "FP_BUILT_OPS", "FLOAT_RESULT_OPS"]

#: Submodule name -> sub-unit class, in elaboration order.
UNIT_CLASSES = {"arith": FpMulAdd, "fma": FpFma, "cmp": FpCmp, "cvt": FpCvt, "trans": FpTrans}

#: The FP32 instructions the hardware implements (the union of the sub-units' ``OPS``).
FP_BUILT_OPS = frozenset(op for cls in UNIT_CLASSES.values() for op in cls.OPS)

_overlap = [op for op in FP_BUILT_OPS
            if sum(op in cls.OPS for cls in UNIT_CLASSES.values()) > 1]
if _overlap:
    raise RuntimeError(f"FP32 instructions claimed by two sub-units: {sorted(_overlap)}")

#: Instructions whose destination is a float (the output modifiers apply to them).
FLOAT_RESULT_OPS = frozenset(e.mnemonic for e in TABLE
                             if e.unit is Unit.FPU and e.dst is not None and e.dst.is_float)


class FpLaneUnit(wiring.Component):
    """The FP32 sub-units of one lane, with the VOP3 input and output modifiers.

    Timing: ``start`` is a one-cycle pulse with the inputs valid; the inputs stay stable until
    ``done``, which rises when ``result`` and ``flag`` are valid (at the earliest the cycle
    after ``start``) and stays high until the next ``start``.

    Parameters
    ----------
    ops : iterable of str
        FP32 mnemonics to build (a subset of :data:`FP_BUILT_OPS`); nothing else is elaborated.

    Raises
    ------
    ValueError
        If ``ops`` is empty, a string, or names an instruction the hardware does not have.

    Members
    -------
    start : In(1)
        The inputs are valid.
    op : In(FpOp)
        Operation.
    src0, src1, src2 : In(32)
        Raw source bits, before the input modifiers.
    abs, neg : In(3)
        VOP3 input modifiers, one bit per source (0 for the 32-bit encodings).
    clamp : In(1)
        VOP3 output clamp to [0, 1].
    omod : In(2)
        VOP3 output multiplier: 0 none, 1 times 2, 2 times 4, 3 times 0.5.
    cin : In(1)
        The lane's VCC bit (``v_div_fmas_f32``).
    flush_in, flush_out, ieee, dx10_clamp : In(1)
        MODE: flush f32 denormal sources, flush f32 denormal results, IEEE mode, DX10 clamp.
    result : Out(32)
        Destination bits.
    flag : Out(1)
        Compare result, ``v_div_scale_f32``'s VCC bit.
    done : Out(1)
        ``result`` and ``flag`` are valid.
    """

    start: In(1)
    op: In(FpOp)
    src0: In(32)
    src1: In(32)
    src2: In(32)
    abs: In(3)
    neg: In(3)
    clamp: In(1)
    omod: In(2)
    cin: In(1)
    flush_in: In(1)
    flush_out: In(1)
    ieee: In(1)
    dx10_clamp: In(1)
    result: Out(32)
    flag: Out(1)
    done: Out(1)

    def __init__(self, *, ops):
        if isinstance(ops, str):
            raise ValueError(f"ops must be an iterable of mnemonics, not the string {ops!r}")
        ops = frozenset(ops)
        unknown = sorted(map(repr, ops - FP_BUILT_OPS))
        if unknown:
            raise ValueError(f"the FP32 unit has no {', '.join(unknown)}")
        if not ops:
            raise ValueError("an FP32 unit needs at least one instruction")
        self._ops = ops
        super().__init__()

    @property
    def ops(self) -> frozenset[str]:
        return self._ops

    @property
    def units(self) -> dict[str, frozenset[str]]:
        """Submodule name -> the instructions it is built with (only the sub-units built)."""
        out = {}
        for name, cls in UNIT_CLASSES.items():
            share = self._ops & frozenset(cls.OPS)
            if share:
                out[name] = share
        return out

    @property
    def latency(self) -> int:
        """Worst-case cycles from ``start`` to ``done``."""
        return max(cls(ops=share).latency
                   for cls, share in ((UNIT_CLASSES[n], s) for n, s in self.units.items()))

    def elaborate(self, platform):
        m = Module()
        op = self.op.as_value()

        # --- input modifiers: abs clears the sign, neg flips it (abs first) --------------------
        srcs = []
        for i, raw in enumerate((self.src0, self.src1, self.src2)):
            src = Signal(32, name=f"src{i}_mod")
            sign = (raw[31] & ~self.abs[i]) ^ self.neg[i]
            m.d.comb += src.eq(Cat(raw[:31], sign))
            srcs.append(src)

        # --- the sub-units ---------------------------------------------------------------------
        outputs = []        # (selected, result, flag, done)
        for name, share in self.units.items():
            unit = UNIT_CLASSES[name](ops=share)
            m.submodules[name] = unit
            chosen = Signal(name=f"{name}_sel")
            m.d.comb += chosen.eq(op.matches(*(fp_member(n) for n in FP_OPS if n in share)))
            m.d.comb += [unit.start.eq(self.start & chosen), unit.op.eq(self.op),
                         unit.src0.eq(srcs[0]), unit.src1.eq(srcs[1]), unit.src2.eq(srcs[2]),
                         unit.cin.eq(self.cin), unit.flush_in.eq(self.flush_in),
                         unit.flush_out.eq(self.flush_out), unit.ieee.eq(self.ieee)]
            outputs.append((chosen, unit.result, unit.flag, unit.done))

        raw = Signal(32)
        flag = Signal()
        unit_done = Signal()
        for chosen, result, unit_flag, done in outputs:
            with m.If(chosen):
                m.d.comb += [raw.eq(result), flag.eq(unit_flag), unit_done.eq(done)]

        # done: never in the cycle of start (the sub-unit's done may still be that of the
        # previous operation), then as soon as the chosen sub-unit says so
        m.d.comb += self.done.eq(~self.start & unit_done)

        # --- output modifiers -------------------------------------------------------------------
        float_result = Signal()
        members = [fp_member(n) for n in FP_OPS if n in self._ops and n in FLOAT_RESULT_OPS]
        if members:
            m.d.comb += float_result.eq(op.matches(*members))
        scaled = _omod(m, raw, self.omod, self.flush_out)
        modified = Signal(32)
        m.d.comb += modified.eq(Mux(self.omod != 0, scaled, raw))
        clamped = _clamp(modified, self.dx10_clamp)
        m.d.comb += [
            self.result.eq(Mux(float_result & self.clamp, clamped,
                               Mux(float_result, modified, raw))),
            self.flag.eq(flag),
        ]
        return m


def _omod(m, x, omod, flush_out):
    """``x`` times 2, 4 or 0.5 (by ``omod`` 1, 2, 3), rounded once and flushed like an f32
    result; infinities and zeros keep their sign, a NaN is the canonical NaN."""
    u = unpack(x)
    count, _ = leading_zeros(u.sig)
    norm = Signal(24, name="omod_sig")
    m.d.comb += norm.eq(u.sig << count[:5])
    k = Signal(signed(3), name="omod_k")
    m.d.comb += k.eq(Mux(omod == 3, -1, omod))
    exp = Signal(signed(11), name="omod_exp")
    m.d.comb += exp.eq(u.exp - count + k)
    rounded = round_pack(m, u.sign, exp, Cat(Const(0, 2), norm), flush_out, name="omod")
    out = Signal(32, name="omod_out")
    m.d.comb += out.eq(Mux(is_nan(x), F32_NAN,
                           Mux(u.inf | u.zero, x, rounded)))
    return out


def _clamp(x, dx10):
    """``x`` clamped to [0, 1]: below +0 gives +0 (-0 stays -0), above 1 gives 1.0, a NaN
    stays NaN unless ``dx10`` (then +0)."""
    negative = x[31] & x[:31].any()
    above_one = ~x[31] & (x[:31] > 0x3F800000)
    return Mux(is_nan(x), Mux(dx10, 0, F32_NAN),
               Mux(negative, 0, Mux(above_one, 0x3F800000, x)))
