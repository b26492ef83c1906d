"""The FP32 compare sub-unit: compares, ``v_cmp_class_f32`` and the min/max family.

:class:`FpCmp` computes every instruction of the table's ``cmp`` sub-unit with the semantics
of the golden model (:mod:`gpgpu_hdl.emu.fp`, :mod:`gpgpu_hdl.emu.valu_ops`), bit for bit:

* ``v_cmp*_<cond>_f32`` (``cmp``, ``cmpx``, ``cmps``, ``cmpsx``: the same compare, the lane
  writes EXEC for the ``x`` forms, the signalling forms differ only in exceptions, which SI
  does not report) on the sources flushed per ``flush_in``. The 16 conditions are numbered
  so that condition ``k`` is ``(k[0] & lt) | (k[1] & eq) | (k[2] & gt) | (k[3] & unordered)``
  (``f`` = 0, ``lt`` = 1, ... ``nlt`` = 14, ``tru`` = 15), so one decoder gives the four-bit
  condition and one comparator the four relations.
* ``v_cmp_class_f32``/``v_cmpx_class_f32``: the class of the raw ``src0`` (never flushed)
  looked up in the mask ``src1``.
* ``v_min/max_f32`` (minNum/maxNum, ``-0 < +0``, an sNaN gives NaN when ``ieee``),
  ``v_min/max_legacy_f32``, ``v_min3/max3_f32`` (nested min/max) and ``v_med3_f32`` (AMD's rule:
  ``min3`` when an operand is NaN, else the larger of the two operands that are not ``max3``,
  "not ``max3``" judged by float equality). The result goes through the output stage of every
  float op: a NaN becomes ``0x7FC00000``, a denormal is flushed when ``flush_out``.

Hardware: a magnitude comparator per operand pair, shared by everything that compares that
pair. Pair (S0, S1) serves the compares, min/max and the legacy forms; pairs (S0, S2) and
(S1, S2) are built only for ``min3``/``max3``/``med3``, which then choose among the three
sources by the three pairwise orders (no comparator on a selected value, so the three
compares work in parallel).
"""

from amaranth.hdl import Cat, Module, Mux, Signal

from .common import (F32_NAN, FpSubUnit, flush, is_denorm, is_inf, is_nan, is_snan, is_zero,
                     pipeline_stage)
from .ops import FP_OPS, SUBUNIT_OF

__all__ = ["FpCmp", "CMP_CONDITIONS"]

#: Compare conditions in encoding order: condition ``k`` is the four-bit code above.
CMP_CONDITIONS = ("f", "lt", "eq", "le", "gt", "lg", "ge", "o",
                  "u", "nge", "nlg", "ngt", "nle", "neq", "nlt", "tru")

_CMP_UNIT_OPS = tuple(n for n in FP_OPS if SUBUNIT_OF[n] == "cmp")

#: Float compares: mnemonic -> condition code (index in :data:`CMP_CONDITIONS`).
_COMPARE_OPS = {n: CMP_CONDITIONS.index(n.split("_")[2]) for n in _CMP_UNIT_OPS
                if n.split("_")[1] in ("cmp", "cmpx", "cmps", "cmpsx")
                and n.split("_")[2] in CMP_CONDITIONS}
_CLASS_OPS = ("v_cmp_class_f32", "v_cmpx_class_f32")
_MIN2_OPS = ("v_min_f32", "v_max_f32")
_LEGACY_OPS = ("v_min_legacy_f32", "v_max_legacy_f32")
_MIN3_OPS = ("v_min3_f32", "v_max3_f32", "v_med3_f32")
_MAX_OPS = ("v_max_f32", "v_max3_f32")       # the maxNum forms (med3 has its own rule)

_IMPLEMENTED = frozenset([*_COMPARE_OPS, *_CLASS_OPS, *_MIN2_OPS, *_LEGACY_OPS, *_MIN3_OPS])
if frozenset(_CMP_UNIT_OPS) != _IMPLEMENTED:     # the table changed under this module
    raise RuntimeError(f"FpCmp is out of step with the instruction table: not implemented "
                       f"{sorted(set(_CMP_UNIT_OPS) - _IMPLEMENTED)}, unknown "
                       f"{sorted(_IMPLEMENTED - set(_CMP_UNIT_OPS))}")


def _magnitude(m, x, y, name: str):
    """``(|x| < |y|, |x| == |y|)`` of two f32 values: one 31-bit magnitude comparator (the
    first stage of :func:`_order`)."""
    mag_lt = Signal(name=f"{name}_mag_lt")
    mag_eq = Signal(name=f"{name}_mag_eq")
    m.d.comb += [mag_lt.eq(x[:31] < y[:31]), mag_eq.eq(x[:31] == y[:31])]
    return mag_lt, mag_eq


def _order(m, x, y, mag, name: str):
    """The order of two non-NaN f32 values ``x`` and ``y`` (flushed already), ``mag`` their
    :func:`_magnitude` relations.

    Returns ``(lt, feq)``: ``lt`` is the total order with ``-0 < +0`` (what min/max select
    by), ``feq`` float equality (``-0 == +0``). Float ``x < y`` is ``lt & ~both_zero``.
    """
    mag_lt, mag_eq = mag
    lt = Signal(name=f"{name}_lt")
    feq = Signal(name=f"{name}_feq")
    m.d.comb += [
        # different signs: the negative one is less (-0 < +0); both negative: the larger
        # magnitude is less
        lt.eq(Mux(x[31] != y[31], x[31], Mux(x[31], ~mag_lt & ~mag_eq, mag_lt))),
        feq.eq((mag_eq & (x[31] == y[31])) | (is_zero(x) & is_zero(y))),
    ]
    return lt, feq


def _class_bit(x):
    """Bit number of the class of raw f32 bits ``x`` in a ``v_cmp_class`` mask:
    0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal,
    9 +inf. Returns a one-hot 10-bit value."""
    sign = x[31]
    normal = ~is_nan(x) & ~is_inf(x) & ~is_zero(x) & ~is_denorm(x)
    return Cat(is_snan(x), is_nan(x) & x[22],
               is_inf(x) & sign, normal & sign, is_denorm(x) & sign, is_zero(x) & sign,
               is_zero(x) & ~sign, is_denorm(x) & ~sign, normal & ~sign, is_inf(x) & ~sign)


def _output_stage(m, value, nan, flush_out, name: str):
    """A float result as the golden model's output stage returns it: the canonical NaN when
    ``nan``, a denormal flushed to the zero of its sign when ``flush_out``."""
    out = Signal(32, name=name)
    m.d.comb += out.eq(Mux(nan, F32_NAN, flush(value, flush_out)))
    return out


class FpCmp(FpSubUnit):
    """FP32 compare sub-unit: the compares, ``v_cmp_class_f32`` and min/max/min3/max3/med3.

    Two register stages (:attr:`latency` 2): the flushed sources, the magnitude comparisons
    and the class lookup are registered at the end of the ``start`` cycle with the op and
    MODE bits, the result at the end of the next; ``done`` is high from the second cycle after
    ``start`` until the cycle after the next ``start`` (the unit can take a ``start`` every
    cycle).

    Parameters
    ----------
    ops : iterable of str or None
        Mnemonics to build (default: all of :attr:`OPS`, the table's ``cmp`` sub-unit); see
        :class:`~gpgpu_hdl.cu.fpu.common.FpSubUnit`. Ops that are not built give 0.

    Members
    -------
    start, op, src0, src1, src2, flush_in, flush_out, ieee, done
        As in :class:`~gpgpu_hdl.cu.fpu.common.FpSubUnit`; ``cin`` is not used. ``src1`` of
        ``v_cmp_class_f32`` is the class mask (an integer), ``src2`` is read by
        ``v_min3/max3/med3_f32`` only.
    result : Out(32)
        min/max result; 0 for the compares.
    flag : Out(1)
        Compare result (VOPC, ``v_cmpx``: the lane writes it to VCC, an SGPR pair or EXEC);
        0 for min/max.
    """

    OPS = _CMP_UNIT_OPS

    @property
    def latency(self) -> int:
        """Cycles from ``start`` to ``done``: 2."""
        return 2

    @property
    def comparators(self) -> int:
        """Number of magnitude comparators built: 1 for the two-operand ops, 3 with
        ``min3``/``max3``/``med3``, 0 when only ``v_cmp_class`` is built."""
        if self._any(_MIN3_OPS):
            return 3
        return int(self._any([*_COMPARE_OPS, *_MIN2_OPS, *_LEGACY_OPS]))

    def elaborate(self, platform):
        m = Module()
        result = Signal(32)
        flag = Signal()

        # --- stage 1: the float sources flushed per MODE, the magnitude comparators, the class
        # lookup; registered with the op and MODE bits (a new operation every cycle) ----------
        three = self._any(_MIN3_OPS)
        srcs = [self.src0, self.src1, self.src2][:3 if three else 2]
        flushed = [Signal(32, name=f"x{i}") for i in range(len(srcs))]
        for x, src in zip(flushed, srcs, strict=True):
            m.d.comb += x.eq(flush(src, self.flush_in))
        stage = {"valid": self.start, "op": self.op.as_value(), "flush_out": self.flush_out,
                 "ieee": self.ieee, "a": flushed[0], "b": flushed[1]}
        if three:
            stage["c"] = flushed[2]
        pairs = {"ab": (0, 1), "ac": (0, 2), "bc": (1, 2)} if three else {"ab": (0, 1)}
        if self.comparators:
            for name, (i, j) in pairs.items():
                stage[f"{name}_lt"], stage[f"{name}_eq"] = _magnitude(m, flushed[i], flushed[j],
                                                                      name)
        if self._any(_CLASS_OPS):
            stage["class_hit"] = (_class_bit(self.src0) & self.src1[:10]).any()
        s1 = pipeline_stage(m, "s1", **stage)
        op = s1.op
        a, b, c = s1.a, s1.b, getattr(s1, "c", None)

        # --- stage 2: the relations, the selections, the output stage --------------------------
        if self.comparators:
            nan_a, nan_b = is_nan(a), is_nan(b)
            unord = nan_a | nan_b
            lt_ab, feq_ab = _order(m, a, b, (s1.ab_lt, s1.ab_eq), "ab")
            both_zero = is_zero(a) & is_zero(b)
            f_lt = Signal(name="f_lt")      # float relations of S0 and S1
            f_eq = Signal(name="f_eq")
            f_gt = Signal(name="f_gt")
            m.d.comb += [
                f_lt.eq(~unord & lt_ab & ~both_zero),
                f_eq.eq(~unord & feq_ab),
                f_gt.eq(~unord & ~lt_ab & ~feq_ab),
            ]

        # --- compares -------------------------------------------------------------------------
        if self._any(_COMPARE_OPS):
            cond = Signal(4, name="cond")
            with m.Switch(op):
                for code in range(len(CMP_CONDITIONS)):
                    members = self._members([n for n, k in _COMPARE_OPS.items() if k == code])
                    if members:
                        with m.Case(*members):
                            m.d.comb += cond.eq(code)
            is_compare = self._decode(m, _COMPARE_OPS, "is_compare", op)
            with m.If(is_compare):
                m.d.comb += flag.eq((cond[0] & f_lt) | (cond[1] & f_eq) | (cond[2] & f_gt)
                                    | (cond[3] & unord))

        if self._any(_CLASS_OPS):
            is_class = self._decode(m, _CLASS_OPS, "is_class", op)
            with m.If(is_class):
                m.d.comb += flag.eq(s1.class_hit)

        # --- min / max ------------------------------------------------------------------------
        is_max = self._decode(m, _MAX_OPS, "is_max", op)
        ieee_nan_ab = (s1.ieee & (is_snan(a) | is_snan(b))) if self.comparators else 0
        if self._any([*_MIN2_OPS, *_MIN3_OPS]):
            # minNum/maxNum of S0, S1: a NaN gives the other operand
            pick_b = Signal(name="mm_pick_b")
            nan_ab = Signal(name="mm_nan")
            m.d.comb += [
                pick_b.eq(nan_a | (~nan_b & (lt_ab == is_max))),
                nan_ab.eq((nan_a & nan_b) | ieee_nan_ab),
            ]
            mm = Mux(pick_b, b, a)
            mm_out = _output_stage(m, mm, nan_ab, s1.flush_out, "mm")
            with m.If(self._decode(m, _MIN2_OPS, "is_min2", op)):
                m.d.comb += result.eq(mm_out)

        if self._any(_LEGACY_OPS):
            is_max_legacy = self._decode(m, ["v_max_legacy_f32"], "is_max_legacy", op)
            # s0 < s1 ? s0 : s1 and s0 > s1 ? s0 : s1 (a NaN gives s1)
            pick_a = Mux(is_max_legacy, f_gt, f_lt)
            legacy = _output_stage(m, Mux(pick_a, a, b), ~pick_a & nan_b, s1.flush_out,
                                   "legacy")
            with m.If(self._decode(m, _LEGACY_OPS, "is_legacy", op)):
                m.d.comb += result.eq(legacy)

        if self._any(_MIN3_OPS):
            nan_c = is_nan(c)
            lt_ac, feq_ac = _order(m, a, c, (s1.ac_lt, s1.ac_eq), "ac")
            lt_bc, feq_bc = _order(m, b, c, (s1.bc_lt, s1.bc_eq), "bc")
            # nested: (S0 min/max S1) min/max S2; the inner NaN is never signalling (in IEEE
            # mode an sNaN made it the canonical quiet NaN)
            lt_mm_c = Mux(pick_b, lt_bc, lt_ac)
            pick_c = Signal(name="mm3_pick_c")
            nan3 = Signal(name="mm3_nan")
            m.d.comb += [
                pick_c.eq(nan_ab | (~nan_c & (lt_mm_c == is_max))),
                nan3.eq((nan_ab & nan_c) | (s1.ieee & is_snan(c))),
            ]
            mm3 = Mux(pick_c, c, mm)

            # med3 without NaN: top = max3 (as a one-hot choice of a source), then the max of
            # the other two, where "other" is judged by float equality with top
            top_b = Signal(name="top_b")             # max(a, b) is b
            top_is = Signal(3, name="top_is")        # one-hot: a, b, c
            m.d.comb += [
                top_b.eq(lt_ab),
                top_is[2].eq(Mux(top_b, lt_bc, lt_ac)),
                top_is[1].eq(top_b & ~top_is[2]),
                top_is[0].eq(~top_b & ~top_is[2]),
            ]
            top_eq_a = top_is[0] | (top_is[1] & feq_ab) | (top_is[2] & feq_ac)
            top_eq_b = top_is[1] | (top_is[0] & feq_ab) | (top_is[2] & feq_bc)
            med = Signal(32, name="med")
            m.d.comb += med.eq(Mux(top_eq_a, Mux(lt_bc, c, b),
                                   Mux(top_eq_b, Mux(lt_ac, c, a), Mux(lt_ab, b, a))))
            any_nan = nan_a | nan_b | nan_c
            is_med3 = self._decode(m, ["v_med3_f32"], "is_med3", op)
            # med3 with a NaN operand is min3 (is_max is 0 for it)
            use_med = is_med3 & ~any_nan
            mm3_out = _output_stage(m, Mux(use_med, med, mm3), ~use_med & nan3,
                                    s1.flush_out, "mm3")
            with m.If(self._decode(m, _MIN3_OPS, "is_min3", op)):
                m.d.comb += result.eq(mm3_out)

        # --- the output registers ------------------------------------------------------------
        with m.If(s1.valid):
            m.d.sync += [self.result.eq(result), self.flag.eq(flag), self.done.eq(1)]
        with m.Elif(self.start):
            m.d.sync += self.done.eq(0)
        return m
