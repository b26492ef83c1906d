# amaranth: UnusedElaboratable=no
"""The local data share (:mod:`gpgpu_hdl.cu.lds`) with a VGPR file, against the golden model's
own DS functions (``gpgpu_hdl/emu/lsu.py``, ``compile_ds``) run on a copy of the workgroup's
LDS, a pass of lanes at a time as the unit goes: random reads and writes of every size,
read2/write2 (st64 too), every atomic with and without return, on random wave slots with
random EXEC, workgroup bases and M0 limits, lanes out of range, in one bank, on one address;
random back-pressure on ``write``; at several schedule widths (the lanes of a pass served
per cycle). Every VGPR write (in order: slot, pass, register, mask and the masked lanes'
data), the ``done`` order, the VGPRs read back and the LDS (read back by ``ds_read_b32``
sweeps) must be the model's; and a full-wave ``ds_read_b32`` takes ``64 / width`` cycles of
the schedule without conflicts (one a cycle for each group of ``width`` lanes with an EXEC
bit), 64 when every lane hits one bank.
"""

from __future__ import annotations

import random
import re
from collections import deque

import numpy as np
import pytest
from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from gpgpu_hdl.cu.decode import DecodedLayout, MemKind, control
from gpgpu_hdl.cu.lds import LdsUnit, issue_control
from gpgpu_hdl.cu.vgpr_file import VgprFile
from gpgpu_hdl.emu.lsu import compile_ds
from gpgpu_hdl.emu.memory import Lds
from gpgpu_hdl.emu.wave import M0, Wave
from gpgpu_hdl.isa.decoder import decode_one
from gpgpu_hdl.isa.formats import ENCODING_OF, Format
from gpgpu_hdl.isa.table import TABLE
from tests.bits import M32, M64
from tests.simulation import simulate

READS = ["ds_read_b32", "ds_read_b64", "ds_read_u8", "ds_read_i8", "ds_read_u16",
         "ds_read_i16", "ds_read2_b32", "ds_read2st64_b32", "ds_read2_b64", "ds_read2st64_b64"]
WRITES = ["ds_write_b8", "ds_write_b16", "ds_write_b32", "ds_write_b64", "ds_write2_b32",
          "ds_write2st64_b32", "ds_write2_b64", "ds_write2st64_b64"]
ATOMICS = sorted(info.mnemonic for info in TABLE if info.mnemonic.startswith("ds_")
                 and (c := control(info)) is not None and c["mem"] == MemKind.ATOMIC)
#: registers of every slot: addresses in v0-v15 (preloaded patterns, never written), data in
#: v16-v31 (random, never written), results in v32-v63
ADDR_REGS, DATA_REGS, RESULT_REGS = (0, 16), (16, 32), (32, 64)
#: v15 of slot 0: 4 x lane, for the sweeps that read the LDS back
SWEEP_REG = 15
VGPRS = 64


def fields(name: str) -> dict:
    return control(TABLE.by_mnemonic(name))


def element_size(name: str) -> int:
    f = fields(name)
    return 8 if f["dwords"] == 2 else f["size"]


def result_regs(ins: dict) -> list[int]:
    """The VGPRs an instruction writes, in the order of its steps."""
    f = fields(ins["name"])
    if f["mem"] == MemKind.LOAD:
        return [ins["vdst"] + i for i in range((2 if f["two"] else 1) * f["dwords"])]
    if f["mem"] == MemKind.ATOMIC and f["rtn"]:
        return [ins["vdst"]]
    return []


class Bench(wiring.Component):
    """An :class:`LdsUnit` with its VGPR file; the testbench preloads and reads back the
    registers through ports of its own and holds ``write`` back with ``write_hold``; the
    issue's control fields come from a decoder control word through :func:`issue_control`."""

    def __init__(self, lanes: int, slots: int, lds_bytes: int, banks: int | None,
                 depth: int = 12, width: int = 4):
        self.unit = LdsUnit(lanes=lanes, width=width, slots=slots, vgprs=VGPRS,
                            lds_bytes=lds_bytes, banks=banks, depth=depth)
        self.file = VgprFile(lanes=lanes, slots=slots, vgprs=VGPRS, sources=self.unit.sources)
        sig = self.unit.signature.members
        super().__init__({
            "issue": sig["issue"], "ctl": In(DecodedLayout),
            "done": sig["done"], "conflict": sig["conflict"], "busy": sig["busy"],
            "write_hold": In(1),
            "written": Out(stream.Signature(self.file.write_layout, always_ready=True)),
            "tb_mode": In(1),
            "tb_write": In(stream.Signature(self.file.write_layout, always_ready=True)),
            "tb_read": In(stream.Signature(self.file.read_layout)),
            "tb_operands": Out(stream.Signature(self.file.operand_layout, always_ready=True)),
        })

    def elaborate(self, platform):  # noqa: ARG002
        m = Module()
        m.submodules.unit = unit = self.unit
        m.submodules.file = file = self.file
        wiring.connect(m, unit.done, wiring.flipped(self.done))
        m.d.comb += [self.conflict.eq(unit.conflict), self.busy.eq(unit.busy)]
        m.d.comb += [unit.issue.valid.eq(self.issue.valid), self.issue.ready.eq(unit.issue.ready)]
        for name in ("slot", "offset0", "offset1", "addr", "data0", "data1", "vdst", "base",
                     "limit", "exec"):
            m.d.comb += getattr(unit.issue.payload, name).eq(getattr(self.issue.payload, name))
        m.d.comb += issue_control(unit.issue.payload, self.ctl)
        with m.If(self.tb_mode):
            m.d.comb += [file.read[0].valid.eq(self.tb_read.valid),
                         file.read[0].payload.eq(self.tb_read.payload),
                         self.tb_read.ready.eq(file.read[0].ready)]
        with m.Else():
            m.d.comb += [file.read[0].valid.eq(unit.read.valid),
                         file.read[0].payload.eq(unit.read.payload),
                         unit.read.ready.eq(file.read[0].ready)]
        m.d.comb += [unit.operands.valid.eq(file.operands.valid & ~self.tb_mode),
                     unit.operands.payload.eq(file.operands.payload),
                     self.tb_operands.valid.eq(file.operands.valid & self.tb_mode),
                     self.tb_operands.payload.eq(file.operands.payload)]
        taken = unit.write.valid & ~self.write_hold & ~self.tb_write.valid
        m.d.comb += [unit.write.ready.eq(~self.write_hold & ~self.tb_write.valid),
                     file.write.valid.eq(self.tb_write.valid | taken),
                     file.write.payload.eq(self.tb_write.payload),
                     self.written.valid.eq(taken), self.written.payload.eq(unit.write.payload)]
        with m.If(~self.tb_write.valid):
            m.d.comb += file.write.payload.eq(unit.write.payload)
        return m


# --- the model -------------------------------------------------------------------------------

class Model:
    """The VGPRs of every slot and the whole LDS; each instruction runs the golden model's
    step on the slot's registers and a copy of its workgroup's LDS."""

    def __init__(self, slots: int, lds_bytes: int, rng: random.Random):
        self.regs = np.zeros((slots, 256, 64), dtype=np.uint32)
        for slot in range(slots):
            for reg in range(*DATA_REGS):
                self.regs[slot, reg] = [rng.getrandbits(32) for _ in range(64)]
        self.lds = np.zeros(lds_bytes, dtype=np.uint8)

    def execute(self, ins: dict, lanes: int) -> list[tuple]:
        """Apply ``ins``; return its VGPR writes (slot, pass, register, mask, masked data)."""
        info = TABLE.by_mnemonic(ins["name"])
        word = ENCODING_OF[Format.DS].pack(
            op=info.opcode, gds=0, offset0=ins["offset0"], offset1=ins["offset1"],
            addr=ins["addr"], data0=ins["data0"], data1=ins["data1"], vdst=ins["vdst"])
        step = compile_ds(decode_one(word.to_bytes(8, "little")))
        base, size = ins["base"], ins["size"]
        lds = Lds(size)
        lds.data[:size] = self.lds[base:base + size]
        wave = Wave(None, lds, (0, 0, 0), 0)
        wave.v[:] = self.regs[ins["slot"]]
        wave.s[M0] = ins["m0"]
        for p in range(64 // lanes):
            # pass by pass, as the unit (a write2 whose elements of lanes in different passes
            # overlap is a race; the golden model writes each element of the whole wave first)
            wave.exec = ins["exec"] & ((1 << lanes) - 1) << (p * lanes)
            step(wave)
        self.lds[base:base + size] = lds.data[:size]
        self.regs[ins["slot"]] = wave.v
        writes = []
        for p in range(64 // lanes):
            mask = ins["exec"] >> (p * lanes) & ((1 << lanes) - 1)
            if not mask:
                continue
            for reg in result_regs(ins):
                values = tuple(int(wave.v[reg, p * lanes + j]) if mask >> j & 1 else None
                               for j in range(lanes))
                writes.append((ins["slot"], p, reg, mask, values))
        return writes


#: workgroup LDS windows: (base, size) in bytes
def windows(lds_bytes: int) -> list[tuple[int, int]]:
    q = lds_bytes // 4
    return [(0, lds_bytes), (q, q), (2 * q, 2 * q - 36), (3 * q + 64, 300)]


def address_patterns(rng: random.Random, banks: int, span: int) -> list[list[int]]:
    """Sixteen per-lane address patterns (v0-v15 of a slot), all 8-byte aligned but the last
    few (4-, 2- and 1-byte aligned, for the smaller elements); v15 is the sweep's 4 x lane."""
    stride = 4 * banks
    pats = [
        [8 * lane for lane in range(64)],                        # consecutive b64
        [4 * lane * 2 for lane in range(64)],
        [rng.randrange(0, span, 8) for _ in range(64)],          # random
        [rng.randrange(0, span, 8) for _ in range(64)],
        [8 * rng.randrange(6) for _ in range(64)],               # a few addresses
        [rng.choice((0, 64, 8 * stride)) for _ in range(64)],
        [stride * 2 * lane % (span // 2) for lane in range(64)],  # one bank
        [(stride * lane + 8 * (lane % 3)) % span for lane in range(64)],  # few banks
        [rng.randrange(0, 2 * span, 8) for _ in range(64)],      # half out of range
        [rng.choice((rng.randrange(0, span, 8), M32 & ~7, (1 << 31) - 8, span - 8))
         for _ in range(64)],                                    # far out of range
        [rng.randrange(0, span, 8) if rng.random() < 0.5 else 16 for _ in range(64)],
        [rng.randrange(0, span // 4, 8) for _ in range(64)],
        [4 * lane for lane in range(64)],                        # 4-byte aligned
        [2 * lane + 2 * rng.randrange(3) for lane in range(64)],  # 2-byte aligned
        [lane + rng.randrange(4) for lane in range(64)],         # bytes
        [4 * lane for lane in range(64)],                        # the sweep register
    ]
    return pats


#: the alignment of each address pattern
ALIGN = [8] * 12 + [4, 2, 1, 4]


def random_instruction(rng: random.Random, slots: int, lds_bytes: int) -> dict:
    name = rng.choice(READS + WRITES + ATOMICS + rng.choice((READS, WRITES, ATOMICS)))
    f = fields(name)
    esize = element_size(name)
    addr = rng.choice([r for r in range(*ADDR_REGS) if ALIGN[r] >= esize])
    offset0 = offset1 = 0
    if f.get("two"):
        far = rng.random() < 0.15
        top = 256 if far else (4 if f.get("st64") else 48)
        offset0, offset1 = rng.randrange(top), rng.randrange(top)
    elif rng.random() < 0.8:
        offset = rng.randrange(0, 512, esize)
        if rng.random() < 0.1:
            offset = rng.randrange(0, 1 << 16, esize)
        offset0, offset1 = offset & 0xFF, offset >> 8
    base, size = rng.choice(windows(lds_bytes))
    m0 = rng.choice((M32, M32, size + rng.randrange(64), rng.randrange(size + 1), 0,
                     rng.randrange(0, size, 4)))
    exec_mask = rng.choice((M64, M64, rng.getrandbits(64),
                            rng.getrandbits(64) & rng.getrandbits(64), M32 << 32,
                            1 << rng.randrange(64), 0))
    n_res = len(result_regs({"name": name, "vdst": 0}))
    return {"name": name, "slot": rng.randrange(slots), "offset0": offset0, "offset1": offset1,
            "addr": addr, "data0": rng.randrange(DATA_REGS[0], DATA_REGS[1] - 1),
            "data1": rng.randrange(DATA_REGS[0], DATA_REGS[1] - 1),
            "vdst": rng.randrange(RESULT_REGS[0], RESULT_REGS[1] - max(n_res, 1) + 1),
            "base": base, "size": size, "m0": m0, "limit": min(m0, size), "exec": exec_mask}


def sweep(lds_bytes: int) -> list[dict]:
    """``ds_read_b32`` of the whole LDS into v32.. of slot 0 (256 bytes an instruction)."""
    return [{"name": "ds_read_b32", "slot": 0, "offset0": 0, "offset1": i, "addr": SWEEP_REG,
             "data0": 0, "data1": 0, "vdst": RESULT_REGS[0] + i, "base": 0, "size": lds_bytes,
             "m0": M32, "limit": lds_bytes, "exec": M64}
            for i in range(lds_bytes // 256)]


def issue_payload(ins: dict) -> dict:
    return {k: ins[k] for k in ("slot", "offset0", "offset1", "addr", "data0", "data1", "vdst",
                                "base", "limit", "exec")}


def control_word(name: str):
    f = fields(name)
    return DecodedLayout.const({k: v for k, v in f.items() if v is not None and k in (
        "unit", "mem", "atomic", "size", "signed", "dwords", "two", "st64", "rtn")})


# --- the run ---------------------------------------------------------------------------------

async def preload(ctx, dut: Bench, regs: np.ndarray, lanes: int) -> None:
    for slot in range(regs.shape[0]):
        for reg in range(VGPRS):
            if not regs[slot, reg].any():
                continue                    # the file starts at 0
            for p in range(64 // lanes):
                ctx.set(dut.tb_write.payload, {
                    "slot": slot, "pass_": p, "reg": reg,
                    "data": [int(v) for v in regs[slot, reg, p * lanes:(p + 1) * lanes]],
                    "mask": (1 << lanes) - 1})
                ctx.set(dut.tb_write.valid, 1)
                await ctx.tick()
    ctx.set(dut.tb_write.valid, 0)


async def read_back(ctx, dut: Bench, slots: int, lanes: int) -> np.ndarray:
    """Every VGPR of every slot, through the testbench's read port."""
    got = np.zeros((slots, VGPRS, 64), dtype=np.uint32)
    asks = deque((slot, p, reg) for slot in range(slots) for p in range(64 // lanes)
                 for reg in range(0, VGPRS, 3))
    sent = deque()
    ctx.set(dut.tb_mode, 1)
    while asks or sent:
        if asks:
            slot, p, reg = asks[0]
            ctx.set(dut.tb_read.payload, {"slot": slot, "pass_": p, "regs": [
                {"reg": min(reg + i, VGPRS - 1), "valid": reg + i < VGPRS} for i in range(3)]})
        ctx.set(dut.tb_read.valid, bool(asks))
        _, _, ready, ov, op = await ctx.tick().sample(
            dut.tb_read.ready, dut.tb_operands.valid, dut.tb_operands.payload)
        if asks and ready:
            sent.append(asks.popleft())
        if ov:
            slot, p, reg = sent.popleft()
            assert (op.slot, op.pass_) == (slot, p)
            for i in range(3):
                if reg + i < VGPRS:
                    for lane in range(lanes):
                        got[slot, reg + i, p * lanes + lane] = op.data[i][lane]
    ctx.set(dut.tb_mode, 0)
    return got


def run(lanes: int, program: list[dict], *, slots: int = 4, lds_bytes: int = 4096,
        banks: int | None = None, hold: float = 0.3, seed: int = 0,
        readback: bool = True, patterns: dict | None = None, depth: int = 12,
        width: int = 4) -> dict:
    """Run ``program`` (then the LDS sweeps unless not ``readback``) and check everything
    against the model; ``patterns`` replaces address registers (register -> 64 values) in
    every slot. Return what was seen (issue, ``done`` and write cycles, conflict cycles)."""
    rng = random.Random(seed)
    nb = width if banks is None else banks
    dut = Bench(lanes, slots, lds_bytes, banks, depth, width)
    model = Model(slots, lds_bytes, rng)
    span = lds_bytes // 2
    for slot in range(slots):
        model.regs[slot, ADDR_REGS[0]:ADDR_REGS[1]] = address_patterns(rng, nb, span)
    for reg, values in (patterns or {}).items():
        model.regs[:, reg] = values
    initial = model.regs[:, :VGPRS].copy()
    full = program + (sweep(lds_bytes) if readback else [])
    expected = [model.execute(ins, lanes) for ins in full]
    seen = {"done": [], "writes": [], "conflicts": 0, "issued": []}

    async def bench(ctx):
        await preload(ctx, dut, initial, lanes)
        queue = deque(full)
        cycle = 0
        while len(seen["done"]) < len(full):
            cycle += 1
            assert cycle < 300 * len(full) + 2000, ("the unit stopped", len(seen["done"]),
                                                    full[len(seen["done"])])
            head = queue[0] if queue else None
            if head is not None and head.get("alone") and len(seen["done"]) < len(seen["issued"]):
                head = None                 # issued once every instruction before it is done
            if head is not None:
                ctx.set(dut.issue.payload, issue_payload(head))
                ctx.set(dut.ctl, control_word(head["name"]))
            ctx.set(dut.issue.valid, head is not None)
            ctx.set(dut.write_hold, rng.random() < hold)
            _, _, ready, dv, ds, wv, w, conflict = await ctx.tick().sample(
                dut.issue.ready, dut.done.valid, dut.done.payload.slot, dut.written.valid,
                dut.written.payload, dut.conflict)
            if head is not None and ready:
                queue.popleft()
                seen["issued"].append(cycle)
            if dv:
                seen["done"].append((cycle, ds))
            if wv:
                seen["writes"].append((cycle, (w.slot, w.pass_, w.reg, w.mask,
                                               tuple(w.data[j] if w.mask >> j & 1 else None
                                                     for j in range(lanes)))))
            seen["conflicts"] += conflict
        ctx.set(dut.write_hold, 0)
        for _ in range(3):
            _, _, busy = await ctx.tick().sample(dut.busy)
        assert not busy
        seen["regs"] = await read_back(ctx, dut, slots, lanes)

    simulate(dut, bench, clock=1e-8)
    assert [s for _, s in seen["done"]] == [ins["slot"] for ins in full]
    want = [w for ws in expected for w in ws]
    got = [w for _, w in seen["writes"]]
    assert len(got) == len(want), (len(got), len(want))
    owner = [i for i, ws in enumerate(expected) for _ in ws]
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g == w, (full[owner[i]], g, w)
    # every instruction's done comes after its last write
    end = 0
    for i, ws in enumerate(expected):
        end += len(ws)
        if ws:
            assert seen["writes"][end - 1][0] < seen["done"][i][0]
    for slot in range(slots):
        for reg in range(VGPRS):
            assert (seen["regs"][slot, reg] == model.regs[slot, reg]).all(), (slot, reg)
    if readback:
        lds = np.concatenate([model.regs[0, RESULT_REGS[0] + i] for i in range(lds_bytes // 256)])
        assert (lds.view(np.uint8) == model.lds).all()
    seen["expected"] = expected
    return seen


@pytest.mark.parametrize(("lanes", "width", "banks", "seed"), [
    (8, 1, 2, 2), (16, 4, None, 3), (16, 16, None, 4),
    pytest.param(4, 4, None, 1, marks=pytest.mark.slow),
    pytest.param(4, 1, None, 5, marks=pytest.mark.slow),
    pytest.param(4, 2, 8, 6, marks=pytest.mark.slow),       # more banks than lanes served
    pytest.param(8, 4, 2, 7, marks=pytest.mark.slow),
    pytest.param(8, 8, None, 8, marks=pytest.mark.slow),
    pytest.param(16, 1, None, 9, marks=pytest.mark.slow),
    pytest.param(16, 8, 4, 10, marks=pytest.mark.slow)])
def test_random_instructions_match_the_golden_model(lanes, width, banks, seed):
    rng = random.Random(seed)
    program = [random_instruction(rng, 4, 4096) for _ in range(60)]
    seen = run(lanes, program, banks=banks, seed=seed, width=width)
    names = {ins["name"] for ins in program}
    assert len(names) >= 30
    assert seen["conflicts"] > 0 or width == 1     # one lane a cycle never conflicts


def test_three_results_in_the_fifo_and_write_held_most_of_the_time():
    """A result FIFO of three entries (the fewest), ``write`` held 70 % of the time: the
    credits stop the schedule between steps, nothing is lost, repeated or reordered."""
    rng = random.Random(4)
    program = [random_instruction(rng, 4, 2048) for _ in range(25)]
    run(8, program, lds_bytes=2048, hold=0.7, seed=4, depth=3)


def single_read(addr_reg: int, slot: int = 0, *, alone: bool = True,
                exec_mask: int = M64) -> dict:
    """A ``ds_read_b32`` addressed by ``addr_reg`` (v0-v15), issued ``alone`` (once every
    instruction before it is done) or as soon as the unit takes it."""
    return {"name": "ds_read_b32", "slot": slot, "offset0": 0, "offset1": 0, "addr": addr_reg,
            "data0": 16, "data1": 16, "vdst": 32 + slot, "base": 0, "size": 4096, "m0": M32,
            "limit": 4096, "exec": exec_mask, "alone": alone}


@pytest.mark.parametrize(("lanes", "width", "banks"), [
    (16, 4, None), (8, 4, 2), (16, 16, None),
    pytest.param(4, 4, None, marks=pytest.mark.slow),
    pytest.param(8, 1, None, marks=pytest.mark.slow),
    pytest.param(16, 8, 2, marks=pytest.mark.slow)])
def test_read_cycles(lanes, width, banks):
    """``write`` always ready. A full-wave ``ds_read_b32`` alone, whose lanes read one dword,
    or consecutive dwords with a bank each, is done ``64 / width`` cycles plus the pipeline's
    latency after its issue (consecutive dwords with fewer banks than ``width``: ``width /
    banks`` cycles a group); one whose lanes all hit one bank 64 cycles plus the same latency,
    with a conflict in every cycle but the last of each group. Four conflict-free ones issued
    back to back are done ``64 / width`` cycles apart."""
    nb = width if banks is None else banks
    patterns = {0: [4 * nb * 7 for _ in range(64)],               # one dword
                1: [4 * lane for lane in range(64)],               # consecutive dwords
                2: [4 * nb * lane for lane in range(64)]}          # one bank
    program = [single_read(reg) for reg in range(3)]
    program += [single_read(0, slot, alone=False) for slot in range(4)]
    program[3]["alone"] = True
    seen = run(lanes, program, banks=banks, hold=0, patterns=patterns, readback=False,
               slots=4, width=width)
    done = [cycle for cycle, _ in seen["done"]]
    took = [d - i for d, i in zip(done[:3], seen["issued"][:3], strict=True)]
    steps = 64 // width                        # groups of a wave
    per_group = max(1, width // nb)            # consecutive dwords: width / banks per bank
    latency = took[0] - steps
    assert latency <= 22, took
    assert took == [steps + latency, steps * per_group + latency, 64 + latency], took
    assert seen["conflicts"] == steps * (per_group - 1) + 64 - steps
    assert [b - a for a, b in zip(done[3:], done[4:], strict=False)] == [steps] * 3, done


@pytest.mark.parametrize(("lanes", "width"), [
    (16, 4), (8, 2), pytest.param(4, 1, marks=pytest.mark.slow),
    pytest.param(16, 1, marks=pytest.mark.slow)])
def test_groups_without_exec_take_no_cycle(lanes, width):
    """``write`` always ready; conflict-free ``ds_read_b32`` (every lane on one dword), each
    alone. The schedule spends a cycle on each group of ``width`` lanes with an EXEC bit and
    none on the others: full EXEC is done ``64 / width`` cycles plus the latency after its
    issue; one lane of one group in each pass (a different group from pass to pass),
    ``64 / lanes`` plus the latency; one lane of the last group of the first pass, 1 plus the
    latency. No conflicts."""
    passes, groups = 64 // lanes, lanes // width
    one_each = sum(1 << (p * lanes + (p % groups) * width + p % width) for p in range(passes))
    last_of_first = 1 << (lanes - 1)
    program = [single_read(0, exec_mask=e) for e in (M64, one_each, last_of_first, M64)]
    seen = run(lanes, program, hold=0, patterns={0: [4 * 9] * 64}, readback=False, slots=1,
               width=width)
    took = [d - i for (d, _), i in zip(seen["done"], seen["issued"], strict=True)]
    latency = took[0] - 64 // width
    assert latency <= 22, took
    assert took == [64 // width + latency, passes + latency, 1 + latency,
                    64 // width + latency], took
    assert seen["conflicts"] == 0


def test_parameters_are_checked():
    for kwargs, message in (({"lanes": 2}, "lanes must be one of 4, 8, 16, not 2"),
                            ({"width": 3}, "width must be one of 1, 2, 4, 8, 16 and at most "
                                           "lanes (16), not 3"),
                            ({"lanes": 4, "width": 8}, "width must be one of 1, 2, 4, 8, 16 "
                                                       "and at most lanes (4), not 8"),
                            ({"width": 32}, "at most lanes (16), not 32"),
                            ({"banks": 3}, "banks must be one of"),
                            ({"lds_bytes": 0}, "lds_bytes must be a power of two"),
                            ({"lds_bytes": 3000}, "lds_bytes must be a power of two"),
                            ({"width": 16, "lds_bytes": 32}, "from 64 (4 x banks)"),
                            ({"lds_bytes": 8}, "from 16 (4 x banks)"),
                            ({"depth": 2}, "depth >= 3"),
                            ({"atomics": {MemKind.LOAD}}, "atomics must be DS atomic")):
        with pytest.raises(ValueError, match=re.escape(message)):
            LdsUnit(**kwargs)
    unit = LdsUnit(lanes=8, lds_bytes=65536, banks=8)
    assert (unit.lanes, unit.width, unit.groups, unit.passes, unit.banks, unit.lds_bytes,
            unit.sources) == (8, 4, 2, 8, 8, 65536, 3)
    unit = LdsUnit(lanes=16, width=2)
    assert (unit.width, unit.groups, unit.banks) == (2, 8, 2)
