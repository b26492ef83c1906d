# amaranth: UnusedElaboratable=no
"""The per-slot completions of :mod:`gpgpu_hdl.cu.done_slots` against a Python model, on random
writes (a slot at a time holds one), followers whose wave's ``last`` comes later, and takes:
every offer is a completion that is there and may go (not a follower, or its wave's ``last``
was set the cycle before), with the data written for its slot; each is taken once; none waits
for ever; and a completion into an idle unit is offered two cycles after its write."""

import random

import pytest
from amaranth.lib import data

from gpgpu_hdl.cu.done_slots import DoneSlots
from tests.simulation import simulate

_LAYOUT = data.StructLayout({"a": 13, "b": 7})


@pytest.mark.parametrize("slots, seed", [(8, 1), (3, 2), (1, 3)])
def test_offers_what_may_retire_once_each(slots, seed):
    dut = DoneSlots(slots=slots, layout=_LAYOUT)
    rng = random.Random(seed)
    problems, taken = [], []
    written = 0

    async def testbench(ctx):
        nonlocal written
        held = {}                    # slot -> (value, follower)
        last = 0
        may_before = set()           # slots that could go, as of the cycle before
        for cycle in range(4000):
            # the offer now: something that was there and could go in the cycle before
            if ctx.get(dut.valid):
                s = ctx.get(dut.slot)
                value = ctx.get(dut.data).as_value().value
                if s not in may_before or held.get(s, (None,))[0] != value:
                    problems.append((cycle, s, value, held.get(s)))
                take = rng.random() < 0.7
                ctx.set(dut.take, take)
                if take and s in held:
                    taken.append(held.pop(s)[0])
            else:
                ctx.set(dut.take, 0)
            # a wave's last may be set while its follower waits (never cleared then)
            waiting = {s for s, (_, f) in held.items() if f}
            last = (last | sum(1 << s for s in waiting if rng.random() < 0.1)) & \
                ~sum(1 << s for s in range(slots) if s not in waiting and rng.random() < 0.5)
            ctx.set(dut.last, last)
            free = [s for s in range(slots) if s not in held]
            ctx.set(dut.w_en, 0)
            if free and rng.random() < 0.4:
                s, value, fol = rng.choice(free), rng.getrandbits(20), rng.random() < 0.5
                ctx.set(dut.w_slot, s)
                ctx.set(dut.w_data, _LAYOUT.const({"a": value & 0x1FFF, "b": value >> 13}))
                ctx.set(dut.w_fol, fol)
                ctx.set(dut.w_en, 1)
                if fol:
                    last &= ~(1 << s)
                    ctx.set(dut.last, last)
                written += 1
            # what may go in the next cycle's offer: there before this cycle's write
            may_before = {s for s, (_, f) in held.items() if not f or last >> s & 1}
            if ctx.get(dut.w_en):
                held[ctx.get(dut.w_slot)] = (ctx.get(dut.w_data).as_value().value,
                                             ctx.get(dut.w_fol))
            await ctx.tick()
        # the rest: every wave's last set, everything taken
        ctx.set(dut.w_en, 0)
        ctx.set(dut.last, (1 << slots) - 1)
        for _ in range(4 * slots + 4):
            if ctx.get(dut.valid):
                ctx.set(dut.take, 1)
                taken.append(held.pop(ctx.get(dut.slot))[0])
            await ctx.tick()
        assert not held, held

    simulate(dut, testbench, clock=1e-8)
    assert not problems, problems[:5]
    assert len(taken) == written > 300


def test_an_idle_unit_offers_a_completion_two_cycles_after_its_write():
    dut = DoneSlots(slots=4, layout=_LAYOUT)
    seen = []

    async def testbench(ctx):
        ctx.set(dut.take, 1)
        for cycle in range(12):
            ctx.set(dut.w_en, cycle in (1, 6))
            ctx.set(dut.w_slot, 2 if cycle == 1 else 3)
            ctx.set(dut.w_fol, cycle == 6)
            ctx.set(dut.last, 1 << 3 if cycle >= 9 else 0)
            ctx.set(dut.w_data, _LAYOUT.const({"a": cycle, "b": 1}))
            if ctx.get(dut.valid):
                seen.append((cycle, ctx.get(dut.slot), ctx.get(dut.data.a)))
            await ctx.tick()

    simulate(dut, testbench, clock=1e-8)
    # the follower (slot 3, written at 6) waits for its wave's last (set at 9)
    assert seen == [(3, 2, 1), (10, 3, 6)]


def test_rejects_no_slots():
    with pytest.raises(ValueError, match="slots must be a positive integer, not 0"):
        DoneSlots(slots=0, layout=_LAYOUT)
