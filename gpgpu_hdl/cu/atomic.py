"""The new value of a 32-bit atomic read-modify-write, shared by the pipelined compute unit's
LDS (:mod:`~gpgpu_hdl.cu.lds`) and buffer unit (:mod:`~gpgpu_hdl.cu.lsu`), with the
semantics of the golden model's ``ATOMIC_OPS`` (``gpgpu_hdl/emu/lsu.py``) and of the
multi-cycle unit's atomic ALU.
"""

from amaranth.hdl import Module, Mux, Signal

from .decode import AtomicOp

__all__ = ["atomic_value"]


def atomic_value(m: Module, op, old, d0, d1, atomics) -> Signal:
    """The new value of an atomic ``op`` (an :class:`~gpgpu_hdl.cu.decode.AtomicOp`) on the
    memory's ``old`` value with the instruction's data ``d0`` and ``d1``, for the operations
    of ``atomics`` (another gives 0).

    ``d0`` is DS ``DATA0`` or the buffer's ``VDATA``; ``d1`` is DS ``DATA1`` (``MSKOR``'s
    bits, ``CMPST``'s new value: DS compares with ``DATA0``) or the buffer's ``VDATA + 1``
    (``CMPSWAP``'s compare value: the buffer stores ``VDATA``)."""
    new = Signal(32)
    with m.Switch(op):
        for kind, expr in (
                (AtomicOp.SWAP, d0), (AtomicOp.ADD, old + d0), (AtomicOp.SUB, old - d0),
                (AtomicOp.RSUB, d0 - old),
                (AtomicOp.INC, Mux(old >= d0, 0, old + 1)),
                (AtomicOp.DEC, Mux((old == 0) | (old > d0), d0, old - 1)),
                (AtomicOp.MIN_I, Mux(d0.as_signed() < old.as_signed(), d0, old)),
                (AtomicOp.MAX_I, Mux(d0.as_signed() > old.as_signed(), d0, old)),
                (AtomicOp.MIN_U, Mux(d0 < old, d0, old)),
                (AtomicOp.MAX_U, Mux(d0 > old, d0, old)),
                (AtomicOp.AND, old & d0), (AtomicOp.OR, old | d0), (AtomicOp.XOR, old ^ d0),
                (AtomicOp.MSKOR, (old & ~d0) | d1),
                (AtomicOp.CMPST, Mux(old == d0, d1, old)),
                (AtomicOp.CMPSWAP, Mux(old == d1, d0, old))):
            if kind in atomics:
                with m.Case(kind):
                    m.d.comb += new.eq(expr)
    return new
