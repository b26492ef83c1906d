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


def random_registers(rng, sources: int, vgprs: int, *, none: float) -> list[int | None]:
    """A request's registers: a source not named (None) with probability ``none``, the one
    before named again with probability ``0.4 - none``, else a random register."""
    regs: list[int | None] = []
    for _ in range(sources):
        pick = rng.random()
        if pick < none:
            regs.append(None)
        elif pick < 0.4 and regs and regs[-1] is not None:
            regs.append(regs[-1])                       # named twice
        else:
            regs.append(rng.randrange(vgprs))
    return regs


@pytest.mark.parametrize("lanes", [16, 4])
def test_operands_match_the_model_and_conflicts_cost_what_they_should(lanes):
    slots, vgprs, sources = 3, 16, 6
    dut = VgprFile(lanes=lanes, slots=slots, vgprs=vgprs, sources=sources)
    passes = 64 // lanes
    rng = random.Random(lanes)
    model = [[[0] * 64 for _ in range(vgprs)] for _ in range(slots)]
    conflicts = [0]

    def request():
        regs = random_registers(rng, sources, vgprs, none=0.25)
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


@pytest.mark.parametrize("lanes", [16, 4])
def test_two_collectors_read_in_the_same_cycle_when_their_banks_differ(lanes):
    """With a collector for reader 0 and one shared by readers 1 and 2, random requests
    (conflicts, registers named twice, sources not named) and writes in the same cycles: each
    collector's bundles, in the order it took its requests, hold the registers' values as of
    the cycle each was taken (for reader 0, a write presented in that cycle included; none to
    a register a request taken in the cycle before names, which one with conflicts may read in
    a later turn, nor to one that a request of the other readers names between its taking and
    its operands, as it waits in the second collector's queue; the second write port's
    writes, in the same cycles as the first's to other banks, too); reader 0's requests come
    out on ``operands`` only, the others' on ``side`` with their reader; the two collectors
    give out operands in the same cycle (their last reads were in one cycle, in different
    banks), and that happens often; and neither side waits for ever while the other asks in
    every cycle."""
    slots, vgprs, sources, readers = 2, 16, 3, 3
    dut = VgprFile(lanes=lanes, slots=slots, vgprs=vgprs, sources=sources, readers=readers,
                   collectors=2)
    passes = 64 // lanes
    rng = random.Random(7 + lanes)
    model = [[[0] * 64 for _ in range(vgprs)] for _ in range(slots)]
    taken: list[list] = [[], []]            # per collector: (reader, slot, pass, values)
    together = [0]
    waits = [0, 0, 0]

    def request():
        regs = random_registers(rng, sources, vgprs, none=0.3)
        return rng.randrange(slots), rng.randrange(passes), regs

    def banks(regs):
        return {r % BANKS for r in regs if r is not None}

    async def bench(ctx):
        pending = [None] * readers
        got: list[list] = [[], []]
        recent = [set(), set()]           # registers named by the requests of recent cycles
        queued: list[set] = []            # those of the other readers' requests in flight
        for _ in range(400):
            for r in range(readers):
                # reader 0 asks in most cycles, so that the others meet it
                if pending[r] is None and rng.random() < (0.9 if r == 0 else 0.35):
                    pending[r] = request()
                    slot, p, regs = pending[r]
                    ctx.set(dut.read[r].payload, {"slot": slot, "pass_": p, "regs": [
                        {"reg": x or 0, "valid": x is not None} for x in regs],
                        "banks": sum(1 << b for b in banks(regs))})
                ctx.set(dut.read[r].valid, pending[r] is not None)
            writes = []
            for port in (dut.write, dut.side_write):
                target = (rng.randrange(slots), rng.randrange(passes), rng.randrange(vgprs))
                # not a register a request with conflicts may still read in a later turn (it
                # would see the write: the unit never writes what a request in flight
                # reads), and the two writes of a cycle in different banks
                if (rng.random() < 0.4 and target not in recent[-1] | recent[-2]
                        and not any(target in q for q in queued)
                        and all(w[2] % BANKS != target[2] % BANKS for w in writes)):
                    writes.append((*target, [rng.getrandbits(32) for _ in range(lanes)],
                                   rng.getrandbits(lanes)))
                    slot, p, reg, values, mask = writes[-1]
                    ctx.set(port.payload, {"slot": slot, "pass_": p, "reg": reg,
                                           "data": values, "mask": mask})
                    ctx.set(port.valid, 1)
                else:
                    ctx.set(port.valid, 0)
            _, _, *sampled = await ctx.tick().sample(
                *(dut.read[r].ready for r in range(readers)), dut.operands.valid,
                dut.operands.payload, dut.reader, dut.side.valid, dut.side.payload,
                dut.side_reader)
            ready = sampled[:readers]
            for slot, p, reg, values, mask in writes:   # read by the requests taken now
                for lane in range(lanes):
                    if mask >> lane & 1:
                        model[slot][reg][p * lanes + lane] = values[lane]
            now = []
            for r in range(readers):
                if pending[r] is not None and ready[r]:
                    slot, p, regs = pending[r]
                    want = [[0] * lanes if x is None else
                            list(model[slot][x][p * lanes:(p + 1) * lanes]) for x in regs]
                    taken[0 if r == 0 else 1].append((r, slot, p, want))
                    now.append((slot, p, regs))
                    if r:
                        queued.append({(slot, p, x) for x in regs if x is not None})
                    pending[r] = None
                elif pending[r] is not None:
                    waits[r] += 1
                    assert waits[r] < 40, f"reader {r} waits for ever"
                if pending[r] is None:
                    waits[r] = 0
            recent.append({(slot, p, x) for slot, p, regs in now for x in regs
                           if x is not None})
            assert len(now) <= 2
            outputs = (sampled[readers:readers + 3], sampled[readers + 3:])
            together[0] += outputs[0][0] and outputs[1][0]
            for c, (valid, payload, reader) in enumerate(outputs):
                if valid:
                    got[c].append((reader, payload.slot, payload.pass_,
                                   [list(payload.data[i]) for i in range(sources)]))
                    if c:
                        queued.pop(0)
        for r in range(readers):
            ctx.set(dut.read[r].valid, 0)
        for _ in range(12):
            _, _, *sampled = await ctx.tick().sample(
                dut.operands.valid, dut.operands.payload, dut.reader, dut.side.valid,
                dut.side.payload, dut.side_reader)
            for c, (valid, payload, reader) in enumerate((sampled[:3], sampled[3:])):
                if valid:
                    got[c].append((reader, payload.slot, payload.pass_,
                                   [list(payload.data[i]) for i in range(sources)]))
        for c in range(2):
            assert len(got[c]) == len(taken[c]) > 50
            for n, (g, w) in enumerate(zip(got[c], taken[c], strict=True)):
                assert g == w, (c, n)

    simulate(dut, bench, clock=1e-8)
    assert together[0] > 20


def test_two_collectors_need_two_readers():
    with pytest.raises(ValueError, match="collectors"):
        VgprFile(readers=1, collectors=2)
    with pytest.raises(ValueError, match="collectors"):
        VgprFile(readers=2, collectors=3)


def test_read_banks_names_the_banks_of_the_named_registers():
    """``read_banks`` of a request's registers against the register numbers modulo BANKS."""
    from amaranth.hdl import Module, Signal

    from gpgpu_hdl.cu.vgpr_file import read_banks, vgpr_layouts

    layout = vgpr_layouts(lanes=16, slots=2, vgprs=64, sources=3)[0]
    m = Module()
    req = Signal(layout)
    out = Signal(BANKS)
    m.d.comb += out.eq(read_banks(req.regs))
    rng = random.Random(3)

    async def bench(ctx):
        for _ in range(200):
            regs = [rng.randrange(64) if rng.random() < 0.7 else None for _ in range(3)]
            ctx.set(req, {"slot": 0, "pass_": 0, "banks": 0, "regs": [
                {"reg": r if r is not None else rng.randrange(64), "valid": r is not None}
                for r in regs]})
            want = sum(1 << b for b in {r % BANKS for r in regs if r is not None})
            assert ctx.get(out) == want, regs

    simulate(m, bench)
