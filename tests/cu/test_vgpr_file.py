# amaranth: UnusedElaboratable=no
"""The banked VGPR file against a Python model of the registers: every operand bundle holds
the registers' values; a request's operands come one cycle (schedule) plus one per register
of its busiest bank (reads; each extra one counted on ``conflict``) plus two (bank registers,
collect) after it is taken; conflict-free requests go at one per cycle; writes honour the
lane mask."""

from __future__ import annotations

import random

import pytest

from gpgpu_hdl.cu.vgpr_file import BANKS, VgprFile
from tests.simulation import simulate


def expected_cycles(regs: list[int | None]) -> int:
    """Cycles a request takes: the most distinct registers that share one bank."""
    per_bank: dict[int, set[int]] = {}
    for r in regs:
        if r is not None:
            per_bank.setdefault(r % BANKS, set()).add(r)
    return max((len(s) for s in per_bank.values()), default=1)


@pytest.mark.parametrize("lanes", [16, 4])
def test_operands_match_the_model_and_conflicts_cost_what_they_should(lanes):
    slots, vgprs, sources = 3, 16, 6
    dut = VgprFile(lanes=lanes, slots=slots, vgprs=vgprs, sources=sources)
    passes = 64 // lanes
    rng = random.Random(lanes)
    model = [[[0] * 64 for _ in range(vgprs)] for _ in range(slots)]
    conflicts = [0]

    def request():
        regs = []
        for _ in range(sources):
            pick = rng.random()
            if pick < 0.25:
                regs.append(None)
            elif pick < 0.4 and regs and regs[-1] is not None:
                regs.append(regs[-1])                       # named twice
            else:
                regs.append(rng.randrange(vgprs))
        return rng.randrange(slots), rng.randrange(passes), regs

    async def bench(ctx):
        for step in range(120):
            for _ in range(rng.randrange(3)):               # some writes between the reads
                slot, p, reg = rng.randrange(slots), rng.randrange(passes), rng.randrange(vgprs)
                values = [rng.getrandbits(32) for _ in range(lanes)]
                mask = rng.getrandbits(lanes) if rng.random() < 0.5 else (1 << lanes) - 1
                ctx.set(dut.write.payload, {"slot": slot, "pass_": p, "reg": reg,
                                            "data": values, "mask": mask})
                ctx.set(dut.write.valid, 1)
                await ctx.tick()
                ctx.set(dut.write.valid, 0)
                for lane in range(lanes):
                    if mask >> lane & 1:
                        model[slot][reg][p * lanes + lane] = values[lane]
            slot, p, regs = request()
            ctx.set(dut.read[0].payload, {"slot": slot, "pass_": p, "regs": [
                {"reg": r or 0, "valid": r is not None} for r in regs]})
            ctx.set(dut.read[0].valid, 1)
            _, _, ready = await ctx.tick().sample(dut.read[0].ready)
            assert ready                                    # the file was idle: taken at once
            ctx.set(dut.read[0].valid, 0)
            cycles = waited = 0
            while not ctx.get(dut.operands.valid):
                cycles += 1
                waited += ctx.get(dut.conflict)
                await ctx.tick()
                assert cycles <= 3 + sources, regs
            # after the cycle it is taken in (the schedule): one turn (address) per register of
            # the busiest bank, then the read, the bank registers and the collect
            assert cycles == expected_cycles(regs) + 3, (regs, cycles)
            assert waited == expected_cycles(regs) - 1, (regs, waited)
            conflicts[0] += waited
            out = ctx.get(dut.operands.payload)
            assert (out.slot, out.pass_) == (slot, p)
            for i, r in enumerate(regs):
                # a source not named reads 0
                want = [0] * lanes if r is None else model[slot][r][p * lanes:(p + 1) * lanes]
                assert list(out.data[i]) == want, (step, i, r)
            await ctx.tick()
            assert not ctx.get(dut.operands.valid)

    simulate(dut, bench, clock=1e-8)
    assert conflicts[0] > 0


def test_conflict_free_requests_go_at_one_per_cycle():
    dut = VgprFile(lanes=16, slots=2, vgprs=8, sources=3)
    requests = [[0, 1, 2], [4, 5, 7], [3, 3, 3], [0, None, 6]]

    async def bench(ctx):
        ctx.set(dut.read[0].valid, 1)
        accepted, bundles = [], []
        for cycle in range(len(requests) + 5):
            if cycle < len(requests):
                ctx.set(dut.read[0].payload, {"slot": 1, "pass_": 2, "regs": [
                    {"reg": r or 0, "valid": r is not None} for r in requests[cycle]]})
            else:
                ctx.set(dut.read[0].valid, 0)
            _, _, ready, valid, conflict = await ctx.tick().sample(
                dut.read[0].ready, dut.operands.valid, dut.conflict)
            if ready and cycle < len(requests):
                accepted.append(cycle)
            if valid:
                bundles.append(cycle)
            assert not conflict
        assert accepted == [0, 1, 2, 3]           # one a cycle
        assert bundles == [5, 6, 7, 8]            # each five cycles after it was taken

    simulate(dut, bench, clock=1e-8)


def test_readers_are_taken_in_turn_each_with_its_own_plan():
    """Three readers asking at once are taken in rotating order (a reader that stops asking is
    passed over), one request a cycle when it has one turn; each one's operands, in the order
    taken and marked with its reader, are its registers' values (with a conflict, a register
    named twice, a source not named)."""
    lanes, slots, vgprs = 16, 2, 8
    dut = VgprFile(lanes=lanes, slots=slots, vgprs=vgprs, sources=3, readers=3)
    requests = [(0, 1, [0, 1, 2]), (1, 2, [4, 0, None]), (1, 3, [5, 5, 3])]
    wanted = [3, 1, 2]                      # requests each reader makes
    taken, bundles = [], []

    def value(slot, reg, p, lane):
        return (slot << 24) | (reg << 16) | (p << 8) | lane

    async def bench(ctx):
        for slot in range(slots):
            for reg in range(vgprs):
                for p in range(64 // lanes):
                    ctx.set(dut.write.payload, {
                        "slot": slot, "pass_": p, "reg": reg, "mask": (1 << lanes) - 1,
                        "data": [value(slot, reg, p, lane) for lane in range(lanes)]})
                    ctx.set(dut.write.valid, 1)
                    await ctx.tick()
        ctx.set(dut.write.valid, 0)
        for r, (slot, p, regs) in enumerate(requests):
            ctx.set(dut.read[r].payload, {"slot": slot, "pass_": p, "regs": [
                {"reg": reg or 0, "valid": reg is not None} for reg in regs]})
        made = [0, 0, 0]
        for cycle in range(20):
            asking = [made[r] < wanted[r] for r in range(3)]
            for r in range(3):
                ctx.set(dut.read[r].valid, asking[r])
            _, _, *ready, valid, reader, slot, p, data = await ctx.tick().sample(
                *(dut.read[r].ready for r in range(3)), dut.operands.valid, dut.reader,
                dut.operands.payload.slot, dut.operands.payload.pass_,
                dut.operands.payload.data)
            for r in range(3):
                if asking[r] and ready[r]:
                    taken.append((cycle, r))
                    made[r] += 1
            if valid:
                bundles.append((reader, slot, p, [[data[i][lane] for lane in range(lanes)]
                                                  for i in range(3)]))

    simulate(dut, bench, clock=1e-8)
    # reader 1's request has two registers in bank 0: two turns, so the next is taken a
    # cycle later
    assert taken == [(0, 0), (1, 1), (3, 2), (4, 0), (5, 2), (6, 0)]
    order = [r for _, r in taken]
    assert len(bundles) == len(order)
    for r, (reader, slot, p, data) in zip(order, bundles, strict=True):
        want_slot, want_pass, regs = requests[r]
        assert (reader, slot, p) == (r, want_slot, want_pass)
        for i, reg in enumerate(regs):
            want = [0] * lanes if reg is None else [value(want_slot, reg, want_pass, lane)
                                                     for lane in range(lanes)]
            assert data[i] == want, (r, i)


def test_refuses_bad_shapes():
    with pytest.raises(ValueError, match="lanes must be one of"):
        VgprFile(lanes=3)
    with pytest.raises(ValueError, match="multiple of 4"):
        VgprFile(vgprs=30)
