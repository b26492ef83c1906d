# amaranth: UnusedElaboratable=no
"""The vector ALU stage (:mod:`gpgpu_hdl.cu.vector_unit`) with its VGPR file, against the golden
model: random FAST_OPS instructions on random wave slots, with VGPR and scalar operands (64-bit
ones too), random EXEC and carry-in masks, VOP3 input modifiers (abs, neg) on some, issued as
fast as the unit takes them (a slot waits only for its own previous instruction, the
one-in-flight rule of the pipelined unit; or, with ``follow``, a slot's instruction follows its
one in flight, marked ``after`` when it reads what that one writes). Every write to the VGPR
file and every flag mask must be the golden model's, in issue order; the unit must take a
conflict-free instruction every ``64 / lanes`` cycles and count exactly its passes as busy.
"""

from __future__ import annotations

import random
from collections import deque

import pytest

from gpgpu_hdl.cu.fast_alu import FAST_OPS, LATENCY, FastControl, fast_control
from gpgpu_hdl.cu.vector_unit import VectorSlice
from gpgpu_hdl.isa.formats import Format
from gpgpu_hdl.isa.table import TABLE
from tests.bits import M32, M64
from tests.cu.valu_cases import golden, source_bits, takes_cin
from tests.simulation import simulate


def control_word(name: str):
    return FastControl.const(fast_control(name))


def operations(name: str) -> int:
    """Operations per pass: two for an instruction with 64-bit operands or result."""
    control = fast_control(name)
    return 2 if control.get("cmp_wide") or control.get("shift64") else 1


class Model:
    """The VGPRs of every slot, and what the unit must do for each instruction."""

    def __init__(self, slots: int, vgprs: int, rng: random.Random):
        self.vgprs = vgprs
        self.regs = [[[rng.getrandbits(32) for _ in range(64)] for _ in range(vgprs)]
                     for _ in range(slots)]
        self.flags = [0] * slots          # each slot's last instruction's flag mask

    def value(self, slot: int, reg: int, lane: int, wide: bool) -> int:
        lo = self.regs[slot][reg][lane]
        return lo | (self.regs[slot][reg + 1][lane] << 32 if wide else 0)

    def execute(self, ins: dict) -> tuple[list, int]:
        """Apply ``ins``; return its (result, flag) per lane and the flag mask."""
        name, slot = ins["name"], ins["slot"]
        cin = self.flags[slot] if ins.get("cin_after") else ins["cin"]
        lanes = []
        for lane in range(64):
            srcs = []
            for k, w in enumerate(source_bits(name)):
                s = ins["srcs"][k]
                mask = M64 if w == 64 else M32
                v = self.value(slot, s["reg"], lane, s["wide"]) if s["vgpr"] else s["value"]
                v &= mask
                if w:       # the VOP3 input modifiers, as the golden model's reader does
                    sign = 1 << (w - 1)
                    v = (v & ~sign if ins.get("abs", 0) >> k & 1 else v) ^ (
                        sign if ins.get("neg", 0) >> k & 1 else 0)
                srcs.append(v if w else 0)
            lanes.append((*srcs, cin >> lane & 1, lane))
        out = golden(name, lanes)
        flags = 0
        for lane, (result, flag) in enumerate(out):
            if ins["exec"] >> lane & 1:
                flags |= flag << lane
                if ins["dst_write"]:
                    self.regs[slot][ins["dst"]][lane] = result & M32
                    if ins["dst_wide"]:
                        self.regs[slot][ins["dst"] + 1][lane] = result >> 32
        self.flags[slot] = flags
        return out, flags


def random_instruction(rng: random.Random, slots: int, vgprs: int, name: str = "") -> dict:
    name = name or rng.choice(FAST_OPS)
    info = TABLE.by_mnemonic(name)
    srcs = []
    for w in source_bits(name):
        wide = w == 64
        if w and rng.random() < 0.7:
            srcs.append({"vgpr": 1, "reg": rng.randrange(vgprs - wide), "wide": int(wide),
                         "value": rng.getrandbits(64)})     # ignored for a VGPR source
        else:   # a scalar operand (junk above a 32-bit one), or an unused source
            srcs.append({"vgpr": 0, "reg": rng.randrange(vgprs), "wide": 0,
                         "value": rng.getrandbits(64)})
    dst_write = info.format is not Format.VOPC
    dst_wide = dst_write and info.dst.bits == 64
    exec_mask = rng.choice((M64, rng.getrandbits(64), M32 << 32, 0x8000_0000_0000_0001))
    # VOP3 input modifiers on a third of them (none on a carry-in or select mask: no source)
    used = sum(1 << k for k, w in enumerate(source_bits(name)) if w)
    mods = rng.random() < 0.3
    return {"name": name, "slot": rng.randrange(slots), "srcs": srcs,
            "abs": rng.getrandbits(3) & used if mods else 0,
            "neg": rng.getrandbits(3) & used if mods else 0,
            "dst": rng.randrange(vgprs - dst_wide), "dst_write": int(dst_write),
            "dst_wide": int(dst_wide), "exec": exec_mask,
            "cin": rng.getrandbits(64) if takes_cin(name) else rng.getrandbits(64)}


def payload(ins: dict, after: bool = False) -> dict:
    return {"slot": ins["slot"], "control": control_word(ins["name"]), "dst": ins["dst"],
            "dst_write": ins["dst_write"],
            "srcs": [{k: s[k] for k in ("vgpr", "reg", "value")} for s in ins["srcs"]],
            "exec": ins["exec"], "cin": ins["cin"], "abs": ins.get("abs", 0),
            "neg": ins.get("neg", 0), "after": after,
            "cin_after": ins.get("cin_after", 0)}


def reads_result(ins: dict, before: dict) -> bool:
    """Whether ``ins`` reads a VGPR that ``before`` writes."""
    if not before["dst_write"]:
        return False
    written = {before["dst"], before["dst"] + before["dst_wide"]}
    return any(s["vgpr"] and {s["reg"], s["reg"] + s["wide"]} & written for s in ins["srcs"])


async def preload(ctx, dut: VectorSlice, model: Model, lanes: int) -> None:
    for slot, regs in enumerate(model.regs):
        for reg, values in enumerate(regs):
            for p in range(64 // lanes):
                ctx.set(dut.fill.payload, {
                    "slot": slot, "pass_": p, "reg": reg,
                    "data": values[p * lanes:(p + 1) * lanes], "mask": (1 << lanes) - 1})
                ctx.set(dut.fill.valid, 1)
                await ctx.tick()
    ctx.set(dut.fill.valid, 0)


@pytest.mark.parametrize("lanes,follow", [(16, False), (4, False), (16, True), (4, True),
                                          (64, True)])
def test_instructions_match_the_golden_model(lanes, follow):
    slots, vgprs, count = 4, 16, 70
    rng = random.Random(lanes)
    dut = VectorSlice(lanes=lanes, slots=slots, vgprs=vgprs)
    model = Model(slots, vgprs, rng)
    program = [random_instruction(rng, slots, vgprs) for _ in range(count)]
    if follow:      # more of the instructions that take a carry-in or select mask
        cin_ops = [name for name in FAST_OPS if takes_cin(name)]
        program = [random_instruction(rng, slots, vgprs, rng.choice(cin_ops))
                   if rng.random() < 0.2 else ins for ins in program]
        # half the instructions on the slot before, reading its result, or its flags
        for before, ins in zip(program, program[1:], strict=False):
            vgpr_srcs = [s for s in ins["srcs"] if s["vgpr"]]
            if before["dst_write"] and vgpr_srcs and rng.random() < 0.5:
                ins["slot"] = before["slot"]
                src = vgpr_srcs[0]
                src["reg"] = before["dst"] - (before["dst"] + src["wide"] >= vgprs)
            if takes_cin(ins["name"]) and rng.random() < 0.7:
                ins["slot"], ins["cin_after"] = before["slot"], 1
    passes = 64 // lanes
    seen = {"writes": 0, "done": 0, "busy": 0, "conflicts": 0, "after": 0}

    async def bench(ctx):
        await preload(ctx, dut, model, lanes)
        writes, dones = deque(), deque()           # expected, in issue order
        busy = {}                                  # slot -> its instructions in flight
        queue = deque(program)
        wakes = 0
        for _ in range(count * 40):
            head = queue[0] if queue else None
            flight = busy.get(head["slot"], []) if head else []
            if len(flight) > int(follow):
                head = None
            after = bool(head and flight and reads_result(head, flight[-1]))
            if head is not None:
                ctx.set(dut.issue.payload, payload(head, after))
            ctx.set(dut.issue.valid, head is not None)
            if ctx.get(dut.unit.wake.valid):
                wakes += 1
            _, _, ready, w_valid, w, d_valid, d, b, c = await ctx.tick().sample(
                dut.issue.ready, dut.unit.write.valid, dut.unit.write.payload, dut.done.valid,
                dut.done.payload, dut.busy, dut.conflict)
            seen["busy"] += b
            seen["conflicts"] += c
            if head is not None and ready:
                queue.popleft()
                busy.setdefault(head["slot"], []).append(head)
                seen["after"] += after
                out, flags = model.execute(head)
                # a 64-bit result's two words in turn, the high one first for the right
                # shifts (the lanes shift the reversed value left)
                words = [0, 1]
                if head["dst_wide"] and fast_control(head["name"]).get("shift_right"):
                    words = [1, 0]
                for p in range(passes):
                    if head["dst_write"]:
                        lane_out = [r for r, _ in out[p * lanes:(p + 1) * lanes]]
                        for word in words[:1 + head["dst_wide"]]:
                            writes.append((head, p, head["dst"] + word,
                                           [r >> 32 * word & M32 for r in lane_out]))
                dones.append((head, flags))
            if w_valid:
                ins, p, reg, want = writes.popleft()
                mask = ins["exec"] >> (p * lanes) & ((1 << lanes) - 1)
                assert (w.slot, w.pass_, w.reg, w.mask) == (ins["slot"], p, reg, mask), ins
                for lane in range(lanes):
                    if mask >> lane & 1:
                        assert w.data[lane] == want[lane], (ins["name"], p, lane, ins)
                seen["writes"] += 1
            if d_valid:
                ins, flags = dones.popleft()
                assert (d.slot, d.flags) == (ins["slot"], flags), (ins["name"], ins)
                assert busy[ins["slot"]].pop(0) is ins
                if not busy[ins["slot"]]:
                    del busy[ins["slot"]]
                seen["done"] += 1
            if not queue and not busy:
                break
        assert not queue and not busy and not writes and not dones
        assert wakes == count                       # one a instruction, its last operation

    simulate(dut, bench, clock=1e-8)
    assert seen["done"] == count
    assert seen["writes"] == passes * sum(ins["dst_write"] * (1 + ins["dst_wide"])
                                          for ins in program)
    assert any(ins["dst_wide"] for ins in program)
    # busy counts the lanes' work, not waiting: an operation a pass, two with 64-bit words
    assert seen["busy"] == passes * sum(operations(ins["name"]) for ins in program)
    assert any(operations(ins["name"]) == 2 and not ins["dst_wide"] for ins in program)
    assert seen["conflicts"] > 0                       # the random registers did collide
    if follow:
        assert seen["after"] > 5                       # instructions read the one before
        assert sum(ins.get("cin_after", 0) for ins in program) > 3


def issue_on_every_slot(ins: dict, lanes: int, cycles: int, slots: int = 8) -> tuple:
    """Issue ``ins`` on slots 0 to ``slots - 1`` as fast as the unit takes them; return the
    cycles each was taken in and, per cycle, (done, write, write register, conflict)."""
    dut = VectorSlice(lanes=lanes, slots=slots, vgprs=16)
    taken, samples = [], []

    async def bench(ctx):
        ctx.set(dut.issue.valid, 1)
        for cycle in range(cycles):
            if len(taken) < slots:
                ctx.set(dut.issue.payload, payload({**ins, "slot": len(taken)}))
            else:
                ctx.set(dut.issue.valid, 0)
            _, _, ready, *sample = await ctx.tick().sample(
                dut.issue.ready, dut.done.valid, dut.unit.write.valid,
                dut.unit.write.payload.reg, dut.conflict)
            if ready and len(taken) < slots:
                taken.append(cycle)
            samples.append(tuple(sample))

    simulate(dut, bench, clock=1e-8)
    return taken, samples


def source(reg: int | None = None, wide: int = 0, value: int = 0) -> dict:
    return {"vgpr": int(reg is not None), "reg": reg or 0, "wide": wide, "value": value}


@pytest.mark.parametrize("lanes", [16, 8])
def test_a_conflict_free_instruction_every_pass_count_cycles(lanes):
    passes = 64 // lanes
    # v_add_i32 v4, v1, v2 on every slot: sources and destination in different banks
    ins = {"name": "v_add_i32", "dst": 4, "dst_write": 1, "dst_wide": 0, "exec": M64,
           "cin": 0, "srcs": [source(1), source(2), source()]}
    taken, samples = issue_on_every_slot(ins, lanes, 8 * passes + 40)
    done = [cycle for cycle, (d, _, _, _) in enumerate(samples) if d]
    assert not any(conflict for *_, conflict in samples)
    assert taken == [i * passes for i in range(8)]
    assert len(done) == 8
    assert [b - a for a, b in zip(done, done[1:], strict=False)] == [passes] * 7
    # issue to done: the sequencer's register, the passes, the request FIFO (a cycle), the
    # VGPR file's schedule, read, bank register and collect stages after the last turn, the
    # lanes (from their input registers, the operand stage), the done register
    assert done[0] - taken[0] == 1 + passes + 1 + 4 + LATENCY + 1


@pytest.mark.parametrize(("name", "order"), [("v_lshl_b64", [4, 5]), ("v_ashr_i64", [5, 4])])
def test_a_64_bit_result_takes_every_other_cycle(name, order):
    passes = 4
    # v_lshl_b64 v[4:5], v[0:1], 3 on every slot
    ins = {"name": name, "dst": 4, "dst_write": 1, "dst_wide": 1, "exec": M64,
           "cin": 0, "srcs": [source(0, wide=1), source(value=3), source()]}
    taken, samples = issue_on_every_slot(ins, 16, 8 * 2 * passes + 40)
    writes = [(cycle, reg) for cycle, (_, w, reg, _) in enumerate(samples) if w]
    # an instruction every 2 x passes cycles (the first is taken as the sequencer starts)
    assert [b - a for a, b in zip(taken[1:], taken[2:], strict=False)] == [2 * passes] * 6
    # a write every cycle: the two words of each pass in turn, the high one first for a right
    # shift
    assert [r for _, r in writes] == order * (8 * passes)
    assert [c for c, _ in writes] == list(range(writes[0][0], writes[0][0] + len(writes)))


def test_refuses_bad_lane_counts():
    with pytest.raises(ValueError, match="lanes must be one of 4, 8, 16, 32, 64"):
        VectorSlice(lanes=2)
