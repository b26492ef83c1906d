"""The new value of a 32-bit atomic read-modify-write, shared by the pipelined compute unit's
LDS (:mod:`~gpgpu_hdl.cu.lds`) and buffer unit (:mod:`~gpgpu_hdl.cu.lsu`), with the
semantics of the golden model's ``ATOMIC_OPS`` (``gpgpu_hdl/emu/lsu.py``) and of the
multi-cycle unit's atomic ALU.
"""

from amaranth.hdl import Cat, Module, Mux, Signal

from .decode import AtomicOp

__all__ = ["atomic_value"]


def atomic_value(m: Module, op, old, d0, d1, atomics) -> Signal:
    """The new value of an atomic ``op`` (an :class:`~gpgpu_hdl.cu.decode.AtomicOp`) on the
    memory's ``old`` value with the instruction's data ``d0`` and ``d1``, for the operations
    of ``atomics`` (another gives 0).

    ``d0`` is DS ``DATA0`` or the buffer's ``VDATA``; ``d1`` is DS ``DATA1`` (``MSKOR``'s
    bits, ``CMPST``'s new value: DS compares with ``DATA0``) or the buffer's ``VDATA + 1``
    (``CMPSWAP``'s compare value: the buffer stores ``VDATA``).

    The arithmetic operations share one adder (``a + b + carry``: add, sub, rsub, inc, dec)
    and the orderings one unsigned comparison and one equality of ``d0`` with ``old`` (the
    signed ones corrected by the sign bits)."""
    new = Signal(32)
    lt = Signal()                               # d0 < old, unsigned
    eq = Signal()                               # d0 == old
    m.d.comb += [lt.eq(d0 < old), eq.eq(d0 == old)]
    gt = ~lt & ~eq                              # d0 > old, unsigned
    signs = d0[31] ^ old[31]
    lt_i, gt_i = Mux(signs, d0[31], lt), Mux(signs, old[31], gt)
    a, b, carry = Signal(32), Signal(32), Signal()
    m.d.comb += [a.eq(old), b.eq(d0)]
    with m.Switch(op):
        with m.Case(AtomicOp.SUB):
            m.d.comb += [b.eq(~d0), carry.eq(1)]
        with m.Case(AtomicOp.RSUB):
            m.d.comb += [a.eq(d0), b.eq(~old), carry.eq(1)]
        with m.Case(AtomicOp.INC):
            m.d.comb += [b.eq(0), carry.eq(1)]
        with m.Case(AtomicOp.DEC):
            m.d.comb += b.eq(0xFFFF_FFFF)
    total = Signal(33)                          # the carry in as bit 0 of both operands
    m.d.comb += total.eq(Cat(carry, a) + Cat(carry, b))
    s = total[1:]
    with m.Switch(op):
        for kind, expr in (
                (AtomicOp.SWAP, d0), (AtomicOp.ADD, s), (AtomicOp.SUB, s), (AtomicOp.RSUB, s),
                (AtomicOp.INC, Mux(gt, s, 0)),                          # old >= d0: 0
                (AtomicOp.DEC, Mux((old == 0) | lt, d0, s)),            # old > d0: d0
                (AtomicOp.MIN_I, Mux(lt_i, d0, old)), (AtomicOp.MAX_I, Mux(gt_i, d0, old)),
                (AtomicOp.MIN_U, Mux(lt, d0, old)), (AtomicOp.MAX_U, Mux(gt, d0, old)),
                (AtomicOp.AND, old & d0), (AtomicOp.OR, old | d0), (AtomicOp.XOR, old ^ d0),
                (AtomicOp.MSKOR, (old & ~d0) | d1),
                (AtomicOp.CMPST, Mux(eq, d1, old)),
                (AtomicOp.CMPSWAP, Mux(old == d1, d0, old))):
            if kind in atomics:
                with m.Case(kind):
                    m.d.comb += new.eq(expr)
    return new
