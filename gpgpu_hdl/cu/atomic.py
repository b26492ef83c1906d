"""The new value of a 32-bit atomic read-modify-write, shared by the pipelined compute unit's
LDS (:mod:`~gpgpu_hdl.cu.lds`) and buffer unit (:mod:`~gpgpu_hdl.cu.lsu`), with the
semantics of the golden model's ``ATOMIC_OPS`` (``gpgpu_hdl/emu/lsu.py``) and of the
multi-cycle unit's atomic ALU.
"""

import operator
from functools import reduce

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value

from .decode import AtomicOp

__all__ = ["atomic_onehot", "atomic_value"]


def atomic_onehot(op) -> Value:
    """The operation ``op`` (an :class:`~gpgpu_hdl.cu.decode.AtomicOp` value) one-hot: bit
    ``k`` is operation ``AtomicOp(k)``, for :func:`atomic_value` (which a caller gives it
    registered, so that the value's select needs no decode of the operation)."""
    return Cat(op == kind for kind in AtomicOp)


def atomic_value(m: Module, sel, old, d0, d1, atomics) -> Signal:
    """The new value of the atomic operation ``sel`` (one-hot: :func:`atomic_onehot`) on the
    memory's ``old`` value with the instruction's data ``d0`` and ``d1``, for the operations
    of ``atomics`` (another gives 0).

    ``d0`` is DS ``DATA0`` or the buffer's ``VDATA``; ``d1`` is DS ``DATA1`` (``MSKOR``'s
    bits, ``CMPST``'s new value: DS compares with ``DATA0``) or the buffer's ``VDATA + 1``
    (``CMPSWAP``'s compare value: the buffer stores ``VDATA``).

    The arithmetic operations share one adder (``a + b + carry``: add, sub, rsub, inc, dec)
    and the orderings one unsigned comparison and one equality of ``d0`` with ``old`` (the
    signed ones corrected by the sign bits); the operand and the result are chosen by AND-OR
    of the one-hot operation."""
    def is_(kind):
        return sel[kind.value]

    def every(bit):
        return bit.replicate(32)
    new = Signal(32)
    lt = Signal()                               # d0 < old, unsigned
    eq = Signal()                               # d0 == old
    m.d.comb += [lt.eq(d0 < old), eq.eq(d0 == old)]
    gt = ~lt & ~eq                              # d0 > old, unsigned
    signs = d0[31] ^ old[31]
    lt_i, gt_i = Mux(signs, d0[31], lt), Mux(signs, old[31], gt)
    a, b, carry = Signal(32), Signal(32), Signal()
    sub, rsub, inc, dec = (is_(k) for k in (AtomicOp.SUB, AtomicOp.RSUB, AtomicOp.INC,
                                             AtomicOp.DEC))
    plain = ~(sub | rsub | inc | dec)
    m.d.comb += [a.eq(Mux(rsub, d0, old)),
                 b.eq((every(plain) & d0) | (every(sub) & ~d0) | (every(rsub) & ~old) |
                      every(dec)),
                 carry.eq(sub | rsub | inc)]
    total = Signal(33)                          # the carry in as bit 0 of both operands
    m.d.comb += total.eq(Cat(carry, a) + Cat(carry, b))
    s = total[1:]
    terms = []
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
            terms.append(every(is_(kind)) & expr)
    m.d.comb += new.eq(reduce(operator.or_, terms, Const(0, 32)))
    return new
