"""The shared atomic ALU (:func:`gpgpu_hdl.cu.atomic.atomic_value`) against the golden model's
``ATOMIC_OPS`` (``gpgpu_hdl/emu/lsu.py``): every :class:`AtomicOp` on random operands and on
the edge values that make its comparisons go both ways."""

from __future__ import annotations

import random

import pytest
from amaranth.hdl import Module, Signal

from gpgpu_hdl.cu.atomic import atomic_onehot, atomic_value
from gpgpu_hdl.cu.decode import AtomicOp
from gpgpu_hdl.emu.lsu import ATOMIC_OPS
from tests.bits import M32
from tests.simulation import simulate

#: the golden model's name of each operation
NAMES = {AtomicOp.SWAP: "swap", AtomicOp.ADD: "add", AtomicOp.SUB: "sub",
         AtomicOp.RSUB: "rsub", AtomicOp.INC: "inc", AtomicOp.DEC: "dec",
         AtomicOp.MIN_I: "min_i", AtomicOp.MAX_I: "max_i", AtomicOp.MIN_U: "min_u",
         AtomicOp.MAX_U: "max_u", AtomicOp.AND: "and", AtomicOp.OR: "or", AtomicOp.XOR: "xor",
         AtomicOp.MSKOR: "mskor", AtomicOp.CMPST: "cmpst", AtomicOp.CMPSWAP: "cmpswap"}
EDGES = (0, 1, 2, 0x7FFF_FFFF, 0x8000_0000, 0x8000_0001, M32 - 1, M32)


@pytest.mark.parametrize("op", list(AtomicOp), ids=lambda op: op.name)
def test_atomic_value_matches_the_golden_model(op):
    m = Module()
    kind, old, d0, d1 = Signal(AtomicOp), Signal(32), Signal(32), Signal(32)
    new = atomic_value(m, atomic_onehot(kind), old, d0, d1, frozenset(AtomicOp))
    rng = random.Random(op.value)

    def operand():
        return rng.choice(EDGES) if rng.random() < 0.4 else rng.getrandbits(32)

    async def bench(ctx):
        ctx.set(kind, op)
        for _ in range(500):
            o, a, b = operand(), operand(), operand()
            if rng.random() < 0.2:
                a = o                       # equal operands (cmpst, min/max, inc)
            if rng.random() < 0.2:
                b = o                       # cmpswap's compare value
            ctx.set(old, o)
            ctx.set(d0, a)
            ctx.set(d1, b)
            want = ATOMIC_OPS[NAMES[op]](o, a, b, 32) & M32
            assert ctx.get(new) == want, (op, hex(o), hex(a), hex(b))

    simulate(m, bench)


@pytest.mark.parametrize("seed", range(3))
def test_operations_not_built_give_zero_and_the_built_ones_stay_right(seed):
    """A unit trimmed to some atomics (the LDS's and the buffer's sets differ): each built
    operation still matches the golden model, each other one gives 0."""
    rng = random.Random(seed)
    built = frozenset(rng.sample(list(AtomicOp), 6))
    m = Module()
    kind, old, d0, d1 = Signal(AtomicOp), Signal(32), Signal(32), Signal(32)
    new = atomic_value(m, atomic_onehot(kind), old, d0, d1, built)

    async def bench(ctx):
        for _ in range(400):
            op = rng.choice(list(AtomicOp))
            o, a, b = (rng.choice(EDGES) if rng.random() < 0.4 else rng.getrandbits(32)
                       for _ in range(3))
            if rng.random() < 0.2:
                a = o
            for sig, value in ((kind, op), (old, o), (d0, a), (d1, b)):
                ctx.set(sig, value)
            want = ATOMIC_OPS[NAMES[op]](o, a, b, 32) & M32 if op in built else 0
            assert ctx.get(new) == want, (op, hex(o), hex(a), hex(b))

    simulate(m, bench)
