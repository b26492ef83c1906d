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

The lane registers its inputs at ``start`` and its outputs before ``done`` (see
:class:`FpLaneUnit`), so no combinational path crosses it: the core's decode and operand logic
ends at the input registers, the write-back starts from the result registers.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...isa.table import TABLE, Unit
from .arith import FpFma, FpMulAdd
from .cmp import FpCmp
from .common import F32_NAN, is_nan, leading_zeros, pipeline_stage, round_pack, unpack
from .cvt import FpCvt
from .ops import FP_OPS, FpOp, fp_member
from .trans import FpTrans

__all__ = ["FpLaneUnit", "UNIT_CLASSES", "FP_BUILT_OPS", "FLOAT_RESULT_OPS", "LANE_STAGES"]

#: Submodule name -> sub-unit class, in elaboration order.
UNIT_CLASSES = {"arith": FpMulAdd, "fma": FpFma, "cmp": FpCmp, "cvt": FpCvt, "trans": FpTrans}

#: The FP32 instructions the hardware implements (the union of the sub-units' ``OPS``).
FP_BUILT_OPS = frozenset(op for cls in UNIT_CLASSES.values() for op in cls.OPS)

_overlap = [op for op in FP_BUILT_OPS
            if sum(op in cls.OPS for cls in UNIT_CLASSES.values()) > 1]
if _overlap:
    raise RuntimeError(f"FP32 instructions claimed by two sub-units: {sorted(_overlap)}")

#: Cycles the lane adds to its sub-unit's latency: the input register and two output stages.
LANE_STAGES = 3

#: Instructions whose destination is a float (the output modifiers apply to them).
FLOAT_RESULT_OPS = frozenset(e.mnemonic for e in TABLE
                             if e.unit is Unit.FPU and e.dst is not None and e.dst.is_float)


class FpLaneUnit(wiring.Component):
    """The FP32 sub-units of one lane, with the VOP3 input and output modifiers.

    Timing: ``start`` is a one-cycle pulse with the inputs valid. The unit latches them at
    the end of that cycle (the sources with ``abs``/``neg`` applied), so they may change from
    the next cycle on; the chosen sub-unit starts one cycle later on the latched values. Its
    result goes through two output stages (the selection and omod's normalization, then omod's
    rounding and ``clamp``) into the ``result``/``flag`` registers: ``done`` rises with them,
    :data:`LANE_STAGES` cycles more than the sub-unit takes (:attr:`latency` at most), and stays
    high, the outputs stable, until the next ``start``. ``done`` is low in a ``start`` cycle.

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
        """Worst-case cycles from ``start`` to ``done``: the slowest sub-unit built plus
        :data:`LANE_STAGES`."""
        return LANE_STAGES + max(cls(ops=share).latency
                                 for cls, share in ((UNIT_CLASSES[n], s)
                                                    for n, s in self.units.items()))

    def elaborate(self, platform):
        m = Module()
        units = self.units

        # --- input stage: everything latched at start, the modifiers applied ----------------
        # abs clears the sign, neg flips it (abs first); the sub-unit starts the next cycle
        i_valid = Signal()
        m.d.sync += i_valid.eq(self.start)
        i_srcs = [Signal(32, name=f"i_src{i}") for i in range(3)]
        i_op = Signal(FpOp, name="i_op")
        i_bits = {name: Signal(name=f"i_{name}")
                  for name in ("cin", "flush_in", "flush_out", "ieee", "dx10_clamp", "clamp")}
        i_omod = Signal(2, name="i_omod")
        i_float = Signal(name="i_float")            # the result is a float: modifiers apply
        i_sel = {name: Signal(name=f"i_{name}_sel") for name in units}
        op = self.op.as_value()
        members = [fp_member(n) for n in FP_OPS if n in self._ops and n in FLOAT_RESULT_OPS]
        with m.If(self.start):
            for i, (reg, raw) in enumerate(zip(i_srcs, (self.src0, self.src1, self.src2),
                                               strict=True)):
                sign = (raw[31] & ~self.abs[i]) ^ self.neg[i]
                m.d.sync += reg.eq(Cat(raw[:31], sign))
            m.d.sync += [i_op.eq(self.op), i_omod.eq(self.omod)]
            m.d.sync += [reg.eq(getattr(self, name)) for name, reg in i_bits.items()]
            m.d.sync += i_float.eq(op.matches(*members) if members else 0)
            for name, share in units.items():
                m.d.sync += i_sel[name].eq(op.matches(*(fp_member(n) for n in FP_OPS
                                                        if n in share)))

        # --- the sub-units, on the latched inputs ----------------------------------------------
        raw = Signal(32)
        flag = Signal()
        unit_done = Signal()
        for name, share in units.items():
            unit = UNIT_CLASSES[name](ops=share)
            m.submodules[name] = unit
            m.d.comb += [unit.start.eq(i_valid & i_sel[name]), unit.op.eq(i_op),
                         unit.src0.eq(i_srcs[0]), unit.src1.eq(i_srcs[1]),
                         unit.src2.eq(i_srcs[2]), unit.cin.eq(i_bits["cin"]),
                         unit.flush_in.eq(i_bits["flush_in"]),
                         unit.flush_out.eq(i_bits["flush_out"]), unit.ieee.eq(i_bits["ieee"])]
            with m.If(i_sel[name]):
                m.d.comb += [raw.eq(unit.result), flag.eq(unit.flag), unit_done.eq(unit.done)]

        # the chosen sub-unit's done counts from the cycle after its start (in the start cycle
        # it may still be that of the previous operation)
        pending = Signal()
        capture = Signal()
        m.d.comb += capture.eq(pending & unit_done)
        with m.If(i_valid):
            m.d.sync += pending.eq(1)
        with m.Elif(capture):
            m.d.sync += pending.eq(0)

        # --- output stage 1: the result selected, omod's normalization ---------------------------
        o = _omod_normalize(m, raw, i_omod)
        o1 = pipeline_stage(m, "o1", valid=capture, raw=raw, flag=flag, **o)

        # --- output stage 2: omod's rounding, clamp, the result register --------------------------
        scaled = _omod_round(m, o1, i_bits["flush_out"])
        modified = Signal(32)
        m.d.comb += modified.eq(Mux(i_omod != 0, scaled, o1.raw))
        clamped = _clamp(modified, i_bits["dx10_clamp"])
        final = Mux(i_float & i_bits["clamp"], clamped, Mux(i_float, modified, o1.raw))
        done = Signal()
        with m.If(self.start):
            m.d.sync += done.eq(0)
        with m.Elif(o1.valid):
            m.d.sync += [self.result.eq(final), self.flag.eq(o1.flag), done.eq(1)]
        # never in the cycle of start (the register still holds the previous operation's)
        m.d.comb += self.done.eq(done & ~self.start)
        return m


def _omod_normalize(m, x, omod):
    """First half of omod: ``x``'s significand normalized and the scaled exponent (``x``
    times 2, 4 or 0.5 for ``omod`` 1, 2, 3), and what passes ``x`` through unrounded."""
    u = unpack(x)
    count, _ = leading_zeros(u.sig)
    norm = Signal(24, name="omod_sig")
    m.d.comb += norm.eq(u.sig << count[:5])
    k = Signal(signed(3), name="omod_k")
    m.d.comb += k.eq(Mux(omod == 3, -1, omod))
    exp = Signal(signed(11), name="omod_exp")
    m.d.comb += exp.eq(u.exp - count + k)
    return {"sign": u.sign, "sig": norm, "exp": exp, "nan": is_nan(x), "keep": u.inf | u.zero}


def _omod_round(m, o, flush_out):
    """Second half of omod: the scaled value of :func:`_omod_normalize` (registered, ``o``)
    rounded once and flushed like an f32 result; infinities and zeros keep their sign, a NaN
    is the canonical NaN."""
    rounded = round_pack(m, o.sign, o.exp, Cat(Const(0, 2), o.sig), flush_out, name="omod")
    out = Signal(32, name="omod_out")
    m.d.comb += out.eq(Mux(o.nan, F32_NAN, Mux(o.keep, o.raw, rounded)))
    return out


def _clamp(x, dx10):
    """``x`` clamped to [0, 1]: below +0 gives +0 (-0 stays -0), above 1 gives 1.0, a NaN
    stays NaN unless ``dx10`` (then +0)."""
    negative = x[31] & x[:31].any()
    above_one = ~x[31] & (x[:31] > 0x3F800000)
    return Mux(is_nan(x), Mux(dx10, 0, F32_NAN),
               Mux(negative, 0, Mux(above_one, 0x3F800000, x)))
