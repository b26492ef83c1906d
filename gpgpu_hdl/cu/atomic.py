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
    signed ones corrected by the sign bits); the adder's operands are chosen by AND-OR of the
    one-hot operation, and the result by AND-OR of the words it can be (``d0``, ``d1``,
    ``old``, the sum, each with one select bit from the operation and the comparisons, and the
    bitwise operations' words)."""
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
    # the result is ``d0``, ``d1``, ``old``, the sum or a bitwise operation's word: which of
    # the first four is one bit each, worked out from the one-hot operation and the
    # comparisons, so that a result bit is an AND-OR of a few words (and not of a word per
    # operation, 16 terms a bit)
    dec_d0 = (old == 0) | lt                    # dec: old == 0 or old > d0 gives d0
    swap_eq = old == d1                         # the buffer's cmpswap compares with d1
    choices = (                                 # (operation, its word, when)
        (AtomicOp.SWAP, "d0", 1), (AtomicOp.ADD, "sum", 1), (AtomicOp.SUB, "sum", 1),
        (AtomicOp.RSUB, "sum", 1), (AtomicOp.INC, "sum", gt),      # old >= d0: 0
        (AtomicOp.DEC, "d0", dec_d0), (AtomicOp.DEC, "sum", ~dec_d0),
        (AtomicOp.MIN_I, "d0", lt_i), (AtomicOp.MIN_I, "old", ~lt_i),
        (AtomicOp.MAX_I, "d0", gt_i), (AtomicOp.MAX_I, "old", ~gt_i),
        (AtomicOp.MIN_U, "d0", lt), (AtomicOp.MIN_U, "old", ~lt),
        (AtomicOp.MAX_U, "d0", gt), (AtomicOp.MAX_U, "old", ~gt),
        (AtomicOp.CMPST, "d1", eq), (AtomicOp.CMPST, "old", ~eq),
        (AtomicOp.CMPSWAP, "d0", swap_eq), (AtomicOp.CMPSWAP, "old", ~swap_eq))
    words = {"d0": d0, "d1": d1, "old": old, "sum": s}
    picks = {word: [] for word in words}
    for kind, word, when in choices:
        if kind in atomics:
            picks[word].append(is_(kind) & when)
    terms = [every(reduce(operator.or_, bits)) & words[word]
             for word, bits in picks.items() if bits]
    for kind, expr in ((AtomicOp.AND, old & d0), (AtomicOp.OR, old | d0),
                       (AtomicOp.XOR, old ^ d0), (AtomicOp.MSKOR, (old & ~d0) | d1)):
        if kind in atomics:
            terms.append(every(is_(kind)) & expr)
    m.d.comb += new.eq(reduce(operator.or_, terms, Const(0, 32)))
    return new
