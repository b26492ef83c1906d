"""The pipelined integer lane of the slow vector unit (:mod:`gpgpu_hdl.cu.slow_unit`): every
:data:`~.valu.VALU_INT_OPS` instruction, one operation a cycle, :data:`LATENCY` cycles from
the operands to the result.

:class:`SlowLaneAlu` is the pipelined counterpart of the combinational
:class:`~.valu.IntLaneAlu`, with the same results (the golden model's, bit for bit), built
for the pipelined compute unit's clock. It is two pipelines of the same depth side by side,
their results ORed (the one not chosen by ``op`` gives 0):

* a :class:`~.fast_alu.FastLaneAlu` for the :data:`~.fast_alu.FAST_OPS` (the add family,
  compares, min/max, multiplies, shifts in the multiplier, bit-field extracts: the fast lanes'
  own pipeline, with its DSP registers), built only when ``ops`` has some (a standalone slow
  unit's instructions with VOP3 modifiers; the pipelined unit's fast lanes apply those
  themselves, so its slow unit has none). The lane exchanges S0 and S1 for the control
  word's ``swap`` and picks the 32-bit words of a 64-bit compare or shift (a *pair* of
  operations, ``half`` 0 then 1, see :class:`~.fast_alu.FastLaneAlu`);
* :class:`SlowOpsPipe` for the :data:`~.fast_alu.SLOW_OPS` (bit counts and scans, SADs,
  min3/max3/med3, ``v_alignbit``/``v_alignbyte``, packing, ``v_bfi``/``v_bfm``/``v_bfrev``,
  ``v_lerp_u8``), each class of instruction a short pipeline of its own, a stage about one
  carry chain or a few LUT levels deep; a running result collects each class's result in the
  stage where it is done.
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from .dsp import check_style
from .fast_alu import FAST_OPS, SLOW_OPS, FastControl, FastLaneAlu, fast_control
from .fast_alu import LATENCY as FAST_LATENCY
from .valu import VALU_INT_OPS, ValuOp, _leading_zeros, _member_name

__all__ = ["LATENCY", "SlowOpsPipe", "SlowLaneAlu", "pair_decode"]

#: register stages from the operands to the result (those of the fast lane)
LATENCY = FAST_LATENCY

#: SlowOpsPipe's decoded classes: flag name -> mnemonics
_CLASSES = {
    "bfrev": ("v_bfrev_b32",), "bfm": ("v_bfm_b32",), "bfi": ("v_bfi_b32",),
    "lerp": ("v_lerp_u8",), "pk_u16": ("v_cvt_pk_u16_u32",), "pk_i16": ("v_cvt_pk_i16_i32",),
    "alignbit": ("v_alignbit_b32",), "alignbyte": ("v_alignbyte_b32",),
    "ffbh_u": ("v_ffbh_u32",), "ffbh_i": ("v_ffbh_i32",), "ffbl": ("v_ffbl_b32",),
    "bcnt": ("v_bcnt_u32_b32",), "mbcnt_lo": ("v_mbcnt_lo_u32_b32",),
    "mbcnt_hi": ("v_mbcnt_hi_u32_b32",),
    "mm3_signed": ("v_min3_i32", "v_max3_i32", "v_med3_i32"),
    "min3": ("v_min3_i32", "v_min3_u32"), "max3": ("v_max3_i32", "v_max3_u32"),
    "med3": ("v_med3_i32", "v_med3_u32"),
    "sad_u8": ("v_sad_u8",), "sad_hi": ("v_sad_hi_u8",), "msad": ("v_msad_u8",),
    "sad_u16": ("v_sad_u16",), "sad_u32": ("v_sad_u32",), "mqsad": ("v_mqsad_pk_u16_u8",),
}
_SlowClass = data.StructLayout({name: 1 for name in _CLASSES})


def pair_decode(op, ops=None):
    """(pair, hi_first) of a :class:`~.valu.ValuOp` value, as :class:`SlowLaneAlu` built with
    ``ops`` gives them on its ports of those names: for a unit that registers them as it takes
    an instruction."""
    ops = frozenset(VALU_INT_OPS if ops is None else ops)
    pairs = [n for n in FAST_OPS if n in ops and (fast_control(n).get("cmp_wide")
                                                   or fast_control(n).get("shift64"))]
    right = [n for n in pairs if fast_control(n).get("shift_right")]

    def one_of(names):
        members = [ValuOp[_member_name(n)] for n in names]
        return op.matches(*members) if members else Const(0)
    return one_of(pairs), one_of(right)


def _rom(values, index, width: int = 32):
    """A constant table of ``width``-bit words indexed by ``index`` (LUTs)."""
    return Array(Const(v, width) for v in values)[index]


def _ones(n: int) -> int:
    return (1 << max(0, min(n, 32))) - 1


def _sum(terms):
    terms = list(terms)
    while len(terms) > 1:
        pairs = [terms[i] + terms[i + 1] for i in range(0, len(terms) - 1, 2)]
        terms = pairs + terms[len(pairs) * 2:]
    return terms[0]


def _absdiff(x, y):
    """``|x - y|`` of unsigned values: the difference, or its negation when it borrows."""
    n = max(len(x), len(y))
    diff = (x - y)[:n + 1]
    return Mux(diff[n], (y - x)[:n], diff[:n])


class SlowOpsPipe(wiring.Component):
    """The :data:`~.fast_alu.SLOW_OPS` instructions as a pipeline of :data:`LATENCY`
    register stages: one operation a cycle, no stall, results in order.

    Per stage (stage 0 the registered inputs and the decoded class of the instruction)::

        stage 1  v_bfrev, v_bfi and the packing conversions done; v_bfm's end (offset +
                 width), v_lerp_u8's four byte adders, the funnel shift's first two steps
                 (16, 8) of v_alignbit/v_alignbyte; the leading-zero counter's input; the
                 popcount's masked input (v_mbcnt_*: the lane's unary code, a ROM);
                 S0 < S1 of min3/max3/med3; the SADs' absolute differences (byte, half,
                 word)
        stage 2  v_bfm (two ROMs), v_lerp_u8, v_alignbit/v_alignbyte (the funnel's last
                 three steps) done; the leading-zero count; the popcount of each byte; min
                 and max of S0, S1 and the one min3/max3 compares with S2; the SADs'
                 four-byte sums
        stage 3  v_ffbh_*, v_ffbl_b32 done; the SAD's sum picked, v_mqsad_pk_u16_u8's four
                 16-bit fields plus S2; the popcount; the min3/max3 compare with S2
        stage 4  the SADs plus S2 done; the popcount plus S1; min3 and max3
        stage 5  v_bcnt, v_mbcnt_*, min3 and max3 done; med3's second compare
        stage 6  med3 done
        stage 7  the result register

    Parameters
    ----------
    ops : iterable of str
        Mnemonics to build (default: all of :data:`~.fast_alu.SLOW_OPS`); the others give 0.

    Members
    -------
    op : In(ValuOp)
    src0 : In(64)
        S0 (64 bits for ``v_mqsad_pk_u16_u8``, else the low 32 bits are read).
    src1 : In(32)
    src2 : In(64)
        S2 (64 bits for ``v_mqsad_pk_u16_u8``).
    lane : In(6)
        The lane in the wave (``v_mbcnt_*``).
    result : Out(64)
        :data:`LATENCY` cycles after the inputs; 32-bit results zero-extended.
    """

    op: In(ValuOp)
    src0: In(64)
    src1: In(32)
    src2: In(64)
    lane: In(6)
    result: Out(64)

    def __init__(self, *, ops=None):
        ops = SLOW_OPS if ops is None else ops
        self._ops = frozenset(ops) & frozenset(SLOW_OPS)
        super().__init__()

    @property
    def latency(self) -> int:
        return LATENCY

    def elaborate(self, platform):
        m = Module()

        def stage(n, name, value, width=None):
            reg = Signal(width if width is not None else len(value), name=f"s{n}_{name}")
            m.d.sync += reg.eq(value)
            return reg

        # --- stage 0: the inputs and the instruction's class --------------------------------
        decoded = Signal(_SlowClass)
        for name, names in _CLASSES.items():
            members = [ValuOp[_member_name(n)] for n in names if n in self._ops]
            if members:
                m.d.comb += getattr(decoded, name).eq(self.op.as_value().matches(*members))
        ctl = [Signal(_SlowClass, name="s0_class")]
        m.d.sync += ctl[0].eq(decoded)
        for n in range(1, 7):
            ctl.append(Signal(_SlowClass, name=f"s{n}_class"))
            m.d.sync += ctl[n].eq(ctl[n - 1])
        a64 = stage(0, "src0", self.src0)
        b = stage(0, "src1", self.src1)
        c64 = stage(0, "src2", self.src2)
        lane = stage(0, "lane", self.lane)
        a, c = a64[:32], c64[:32]

        def when(flag, value, width=32):
            return Mux(flag, value, 0)[:width]

        # --- stage 1 -------------------------------------------------------------------------
        k0 = ctl[0]

        def sat_u16(x):
            return Mux(x[16:32].any(), 0xFFFF, x[:16])

        def sat_i16(x):
            fits = x[15:32].all() | ~x[15:32].any()
            return Mux(fits, x[:16], Mux(x[31], 0x8000, 0x7FFF))

        r1 = stage(1, "result", when(k0.bfrev, a[::-1]) | when(k0.bfi, (a & b) | (~a & c))
                   | when(k0.pk_u16, Cat(sat_u16(a), sat_u16(b)))
                   | when(k0.pk_i16, Cat(sat_i16(a), sat_i16(b))))
        s1_bfm_end = stage(1, "bfm_end", Cat(b[:5]) + Cat(a[:5]), 6)    # offset + width
        s1_bfm_off = stage(1, "bfm_off", b[:5])
        s1_lerp = stage(1, "lerp", Cat((a[i:i + 8] + b[i:i + 8] + c[i])[1:9]
                                       for i in range(0, 32, 8)))
        # v_alignbit/v_alignbyte: the funnel shift's 16 and 8 here, 4, 2, 1 in stage 2
        amount = Mux(k0.alignbyte, Cat(Const(0, 3), c[:2]), c[:5])
        funnel = Cat(b, a[:31])
        for i in (4, 3):
            dist = 1 << i
            keep = 32 + dist - 1
            funnel = Mux(amount[i], funnel[dist:dist + keep], funnel[:keep])
        s1_funnel = stage(1, "funnel", funnel)
        s1_amount = stage(1, "funnel_amount", amount[:3])

        lzc_in = stage(1, "lzc_in", when(k0.ffbh_u, a) | when(k0.ffbh_i, a ^ a[31].replicate(32))
                       | when(k0.ffbl, a[::-1]))
        pc_mask = (Mux(k0.bcnt, 0xFFFF_FFFF, 0)
                   | when(k0.mbcnt_lo, _rom([_ones(v) for v in range(64)], lane))
                   | when(k0.mbcnt_hi, _rom([_ones(v - 32) for v in range(64)], lane)))
        pc_in = stage(1, "pc_in", a & pc_mask)

        def ext33(x, signed):
            return Cat(x, x[31] & signed).as_signed()

        lt01 = stage(1, "mm_lt", ext33(a, k0.mm3_signed) < ext33(b, k0.mm3_signed))
        s1_a, s1_b = stage(1, "a", a), stage(1, "b", b)
        s1_c = stage(1, "c", c64)

        a_bytes = [a64[i:i + 8] for i in range(0, 64, 8)]
        b_bytes = [b[i:i + 8] for i in range(0, 32, 8)]
        masked = k0.msad | k0.mqsad
        windows = 4 if "v_mqsad_pk_u16_u8" in self._ops else 1
        diffs = {}
        if self._ops & {"v_sad_u8", "v_sad_hi_u8", "v_msad_u8", "v_mqsad_pk_u16_u8"}:
            for j in range(windows):
                for k in range(4):
                    keep = ~masked | b_bytes[k].any()
                    diffs[j, k] = stage(1, f"sad_diff{j}{k}",
                                        Mux(keep, _absdiff(a_bytes[j + k], b_bytes[k]), 0))
        d16 = [stage(1, f"sad_half{i}", _absdiff(a[16 * i:16 * i + 16], b[16 * i:16 * i + 16]))
               for i in range(2)] if "v_sad_u16" in self._ops else [Const(0, 16)] * 2
        d32 = stage(1, "sad_word", _absdiff(a, b)) if "v_sad_u32" in self._ops \
            else Const(0, 32)

        # --- stage 2 -------------------------------------------------------------------------
        k1 = ctl[1]
        bfm = _rom([_ones(v) for v in range(64)], s1_bfm_end) \
            & ~_rom([_ones(v) for v in range(32)], s1_bfm_off)
        funnel = s1_funnel
        for i in reversed(range(3)):
            dist = 1 << i
            keep = 32 + dist - 1
            funnel = Mux(s1_amount[i], funnel[dist:dist + keep], funnel[:keep])
        r2 = stage(2, "result", r1 | when(k1.bfm, bfm) | when(k1.lerp, s1_lerp)
                   | when(k1.alignbit | k1.alignbyte, funnel))
        count, zero = _leading_zeros(lzc_in)
        s2_lzc = stage(2, "lzc", Cat(count, zero))
        pc_bytes = [stage(2, f"pc{i}", _sum(pc_in[i + j] for j in range(8)), 4)
                    for i in range(0, 32, 8)]
        s2_b = stage(2, "b", s1_b)
        lo = Mux(lt01, s1_a, s1_b)
        hi = Mux(lt01, s1_b, s1_a)
        s2_lo = stage(2, "mm_lo", lo)
        s2_pick = stage(2, "mm_pick", Mux(k1.min3, lo, hi))
        s2_c = stage(2, "c", s1_c)
        sums = [stage(2, f"sad_sum{j}", _sum(diffs[j, k] for k in range(4)), 10)
                for j in range(windows)] if diffs else [Const(0, 10)]
        s2_d16 = stage(2, "sad_half", d16[0] + d16[1], 17)
        s2_d32 = stage(2, "sad_word", d32)

        # --- stage 3 -------------------------------------------------------------------------
        k2 = ctl[2]
        lzc_count, lzc_zero = s2_lzc[:-1], s2_lzc[-1]
        r3 = stage(3, "result", r2 | when(k2.ffbh_u | k2.ffbh_i | k2.ffbl,
                                          Mux(lzc_zero, 0xFFFF_FFFF, lzc_count)))
        s3_sad = stage(3, "sad", when(k2.sad_u8 | k2.msad, sums[0])
                       | when(k2.sad_hi, Cat(Const(0, 16), sums[0]))
                       | when(k2.sad_u16, s2_d16) | when(k2.sad_u32, s2_d32))
        s3_mq = stage(3, "mqsad", when(k2.mqsad, Cat((sums[j] + s2_c[16 * j:16 * j + 16])[:16]
                                                     for j in range(4)), 64)) \
            if windows == 4 else Const(0, 64)
        pc = stage(3, "pc", _sum(pc_bytes), 6)
        s3_b = stage(3, "b", s2_b)
        lt2 = stage(3, "mm_lt2", ext33(s2_pick, k2.mm3_signed) < ext33(s2_c[:32], k2.mm3_signed))
        s3_lo, s3_pick, s3_c = stage(3, "mm_lo", s2_lo), stage(3, "mm_pick", s2_pick), \
            stage(3, "c", s2_c[:32])

        # --- stage 4 -------------------------------------------------------------------------
        k3 = ctl[3]
        sad_any = k3.sad_u8 | k3.sad_hi | k3.msad | k3.sad_u16 | k3.sad_u32
        r4 = stage(4, "result", r3 | s3_mq | when(sad_any, s3_sad + s3_c), 64)
        s4_pc = stage(4, "pc", pc + s3_b, 32)
        lower = Mux(lt2, s3_pick, s3_c)
        s4_lo, s4_lower = stage(4, "mm_lo", s3_lo), stage(4, "mm_lower", lower)
        s4_max3 = stage(4, "mm_max3", Mux(lt2, s3_c, s3_pick))

        # --- stage 5, 6, 7 -------------------------------------------------------------------
        k4 = ctl[4]
        r5 = stage(5, "result", r4 | when(k4.bcnt | k4.mbcnt_lo | k4.mbcnt_hi, s4_pc)
                   | when(k4.min3, s4_lower) | when(k4.max3, s4_max3))
        lt3 = stage(5, "mm_lt3", ext33(s4_lo, k4.mm3_signed) < ext33(s4_lower, k4.mm3_signed))
        s5_lo, s5_lower = stage(5, "mm_lo", s4_lo), stage(5, "mm_lower", s4_lower)
        k5 = ctl[5]
        r6 = stage(6, "result", r5 | when(k5.med3, Mux(lt3, s5_lower, s5_lo)))
        m.d.sync += self.result.eq(r6)
        return m


class SlowLaneAlu(wiring.Component):
    """One pipelined lane of every :data:`~.valu.VALU_INT_OPS` instruction (the slow unit's
    integer lane): a :class:`~.fast_alu.FastLaneAlu` beside a :class:`SlowOpsPipe`.

    One operation a cycle, the result :data:`LATENCY` cycles after the inputs, no stall. An
    instruction for which ``pair`` is 1 (a 64-bit compare or shift) is two operations,
    ``half`` 0 then 1 with the same inputs, with nothing between them: the compare's flag
    comes with the second; a shift's result word ``half ^ hi_first`` comes with each, in its
    place in ``result`` (the other word 0). Anything else is one operation with ``half`` 0.

    Parameters
    ----------
    ops : iterable of str
        Mnemonics to build (default: all of :data:`~.valu.VALU_INT_OPS`); any other ``op``
        gives result and flag 0.
    dsp : str
        The fast lane's multipliers (:data:`~.dsp.DSP_STYLES`).

    Members
    -------
    op : In(ValuOp)
    src0, src1, src2 : In(64)
        Raw operand bits, as :class:`~.valu.IntLaneAlu` takes them.
    cin : In(1)
    lane : In(6)
    half : In(1)
    pair : Out(1)
        ``op`` is done as two operations (combinational from ``op``).
    hi_first : Out(1)
        A pair's first operation gives the high result word (a 64-bit right shift).
    result : Out(64)
    flag : Out(1)
    """

    op: In(ValuOp)
    src0: In(64)
    src1: In(64)
    src2: In(64)
    cin: In(1)
    lane: In(6)
    half: In(1)
    pair: Out(1)
    hi_first: Out(1)
    result: Out(64)
    flag: Out(1)

    def __init__(self, *, ops=None, dsp: str = "generic"):
        ops = VALU_INT_OPS if ops is None else ops
        if isinstance(ops, str):
            raise ValueError(f"ops must be an iterable of mnemonics, not the string {ops!r}")
        ops = frozenset(ops)
        unknown = sorted(ops - frozenset(VALU_INT_OPS))
        if unknown:
            raise ValueError(f"ops must be VALU_INT_OPS mnemonics, not {', '.join(unknown)}")
        self._ops, self._dsp = ops, check_style(dsp, "dsp")
        super().__init__()

    @property
    def ops(self) -> frozenset[str]:
        return self._ops

    @property
    def latency(self) -> int:
        """Clock cycles from the inputs to ``result`` and ``flag``: :data:`LATENCY`."""
        return LATENCY

    def elaborate(self, platform):
        m = Module()
        fast_ops = [n for n in FAST_OPS if n in self._ops]
        slow_ops = [n for n in SLOW_OPS if n in self._ops]
        result = Const(0, 64)
        hi_word = Const(0, 1)
        if fast_ops:
            ctl = Signal(FastControl, name="fast_control")
            with m.Switch(self.op):
                for name in fast_ops:
                    with m.Case(ValuOp[_member_name(name)]):
                        m.d.comb += ctl.eq(FastControl.const(fast_control(name)))
            m.submodules.fast = fast = FastLaneAlu(dsp=self._dsp)
            pair = ctl.cmp_wide | ctl.shift64
            right = ctl.shift64 & ctl.shift_right
            half = self.half & pair
            x, y = Mux(ctl.swap, self.src1, self.src0), Mux(ctl.swap, self.src0, self.src1)
            m.d.comb += [self.pair.eq(pair), self.hi_first.eq(right),
                         fast.control.eq(ctl), fast.half.eq(half), fast.cin.eq(self.cin),
                         fast.src0.eq(Mux(half ^ right, x[32:], x[:32])),
                         fast.src1.eq(Mux(half & ctl.cmp_wide, y[32:], y[:32])),
                         fast.src2.eq(self.src2[:32])]
            # where the fast lane's word goes, carried beside it
            word = half ^ right
            for n in range(LATENCY):
                nxt = Signal(name=f"s{n}_hi_word")
                m.d.sync += nxt.eq(word)
                word = nxt
            hi_word = word
            m.d.comb += self.flag.eq(fast.flag)
            result = Cat(Mux(hi_word, 0, fast.result), Mux(hi_word, fast.result, 0))
        if slow_ops:
            m.submodules.slow = slow = SlowOpsPipe(ops=slow_ops)
            m.d.comb += [slow.op.eq(self.op), slow.src0.eq(self.src0),
                         slow.src1.eq(self.src1[:32]), slow.src2.eq(self.src2),
                         slow.lane.eq(self.lane)]
            result = result | slow.result
        m.d.comb += self.result.eq(result)
        return m
