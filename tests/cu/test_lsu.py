# amaranth: UnusedElaboratable=no
"""The buffer load/store unit (:mod:`gpgpu_hdl.cu.lsu`) with a VGPR file and a memory model,
against a Python model of SI's MUBUF semantics that takes its addresses and range checks from
the golden model (``gpgpu_hdl/emu/lsu.py``): random loads and stores of every size and dword
count on random wave slots, with random EXEC, addr64, offen/idxen, ADD_TID, swizzled and raw
buffers, out-of-range lanes and lanes at or above 4 GiB; random memory latency and
back-pressure on ``req`` and ``fill``. Every request (in order, with its lock bit), every load
dword written (the load trace, in order), the VGPRs read back, ``sent``/``trap``/``landed``
must be the model's; and a dword load of a full wave sends a request every cycle.

Buffer atomics (every operation the decoder implements, with and without glc) run among the
loads and stores on a few addresses that the lanes share, so that the lane order shows; the
model applies the golden model's ``ATOMIC_OPS`` lane by lane. Each lane's locked read must be
the first request after every earlier one has been answered, and its write the next request.
"""

from __future__ import annotations

import random
from collections import deque

import numpy as np
import pytest
from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from gpgpu_hdl.cu.decode import DecodedLayout, MemKind, control
from gpgpu_hdl.cu.lsu import BUFFER_ATOMICS, BufferUnit, issue_control
from gpgpu_hdl.cu.vgpr_file import VgprFile
from gpgpu_hdl.emu.lsu import _BUF_ATOMIC, ATOMIC_OPS, _buffer_addresses, _extend
from gpgpu_hdl.emu.wave import Wave
from gpgpu_hdl.isa.decoder import decode_one
from gpgpu_hdl.isa.formats import ENCODING_OF, Format
from gpgpu_hdl.isa.table import TABLE
from tests.bits import M32, M64
from tests.simulation import simulate

LOADS = ["buffer_load_ubyte", "buffer_load_sbyte", "buffer_load_ushort", "buffer_load_sshort",
         "buffer_load_dword", "buffer_load_dwordx2", "buffer_load_dwordx3",
         "buffer_load_dwordx4"]
STORES = ["buffer_store_byte", "buffer_store_short", "buffer_store_dword",
          "buffer_store_dwordx2", "buffer_store_dwordx3", "buffer_store_dwordx4"]
ATOMICS = [f"buffer_atomic_{op}" for op in ("swap", "cmpswap", "add", "sub", "smin", "umin",
                                             "smax", "umax", "and", "or", "xor", "inc", "dec")]
#: registers: addresses in v0-v31 (a pair of its own for each instruction), store data in
#: v32-v47, load results in v48-v63 (so that no instruction reads a register an earlier load of
#: its slot may not have written yet); with 128 VGPRs, an atomic's VDATA pair (data, and
#: cmpswap's compare value, where glc returns the old value) in v64-v127, its own
ADDR_REGS, DATA_REGS, LOAD_REGS, ATOMIC_REGS = (0, 32), (32, 48), (48, 64), (64, 128)
SRSRC, SOFFSET = 8, 16          # the V# in s[8:11], SOFFSET in s16
#: the addresses buffer atomics share (a raw buffer's dwords from :data:`POOL_BASE`)
POOL_BASE, POOL = 0x10000, (0, 4, 8, 64)
#: data values that make the atomics' conditions go both ways (and the shared dwords' first)
SMALL = (0, 1, 2, 3, 7, M32, 0x80000000, 0x7FFFFFFF)


class Bench(wiring.Component):
    """A :class:`BufferUnit` with its VGPR file; the testbench preloads and reads back the
    registers through ports of its own, and holds ``fill`` back with ``fill_hold``. The
    issue's ``kind``/``dwords``/``size``/``signed`` come from a decoder control word through
    :func:`issue_control`."""

    def __init__(self, lanes: int, slots: int, vgprs: int, depth: int = 32,
                 atomics: frozenset = BUFFER_ATOMICS):
        self.unit = BufferUnit(lanes=lanes, slots=slots, vgprs=vgprs, depth=depth,
                               atomics=atomics)
        self.file = VgprFile(lanes=lanes, slots=slots, vgprs=vgprs, sources=self.unit.sources)
        sig = self.unit.signature.members
        super().__init__({
            "issue": sig["issue"], "ctl": In(DecodedLayout),
            "req": sig["req"], "rsp": sig["rsp"],
            "sent": sig["sent"], "trap": sig["trap"], "landed": sig["landed"],
            "load_trace": sig["load_trace"], "busy": sig["busy"],
            "fill_hold": In(1),
            "fills": Out(1),
            "tb_mode": In(1),
            "tb_write": In(stream.Signature(self.file.write_layout, always_ready=True)),
            "tb_read": In(stream.Signature(self.file.read_layout)),
            "tb_operands": Out(stream.Signature(self.file.operand_layout, always_ready=True)),
        })

    def elaborate(self, platform):  # noqa: ARG002
        m = Module()
        m.submodules.unit = unit = self.unit
        m.submodules.file = file = self.file
        wiring.connect(m, unit.req, wiring.flipped(self.req))
        wiring.connect(m, wiring.flipped(self.rsp), unit.rsp)
        for name in ("sent", "trap", "landed"):
            wiring.connect(m, getattr(unit, name), wiring.flipped(getattr(self, name)))
        m.d.comb += [self.load_trace.eq(unit.load_trace), self.busy.eq(unit.busy)]
        # the issue, with the control fields from the decoder's word
        m.d.comb += [unit.issue.valid.eq(self.issue.valid), self.issue.ready.eq(unit.issue.ready)]
        for name in ("slot", "offen", "idxen", "addr64", "offset", "vaddr", "vdata", "glc",
                     "vsharp", "soffset", "exec"):
            m.d.comb += getattr(unit.issue.payload, name).eq(getattr(self.issue.payload, name))
        m.d.comb += issue_control(unit.issue.payload, self.ctl)
        # the VGPR file's read port: the unit's, or the testbench's
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
        # the write port: the load answers, or the testbench's preload
        m.d.comb += [unit.fill.ready.eq(~self.fill_hold & ~self.tb_write.valid),
                     file.write.valid.eq(self.tb_write.valid
                                         | (unit.fill.valid & ~self.fill_hold)),
                     file.write.payload.eq(self.tb_write.payload)]
        with m.If(~self.tb_write.valid):
            m.d.comb += file.write.payload.eq(unit.fill.payload)
        m.d.comb += self.fills.eq(unit.fill.valid & unit.fill.ready)
        return m


# --- the model -------------------------------------------------------------------------------

def initial_word(addr: int) -> int:
    """A memory dword nobody wrote (the atomics' shared dwords: small values)."""
    if POOL_BASE <= addr < POOL_BASE + 4 * len(SMALL) * 4:
        return SMALL[addr >> 2 & 7]
    return (addr * 2654435761 + 0x9E3779B9) & M32


def byte_mask(size: int, lo: int) -> int:
    """The byte lanes of an access of ``size`` bytes at byte ``lo`` of its dword; a short at
    byte 3 (an odd stride) keeps byte 3 only, as the multi-cycle unit does."""
    return {1: 1 << lo, 2: 3 << lo & 0xF}.get(size, 0xF)


def merge(old: int, new: int, mask: int) -> int:
    bits = sum(0xFF << 8 * b for b in range(4) if mask >> b & 1)
    return (old & ~bits | new & bits) & M32


def fields(name: str) -> dict:
    """The decoder's control word of ``name`` (kind, size, signed, dwords among others)."""
    return control(TABLE.by_mnemonic(name))


def golden_addresses(ins: dict, regs: list) -> tuple[list[int], list[bool]]:
    """The golden model's 48-bit address and range check of each EXEC lane."""
    info = TABLE.by_mnemonic(ins["name"])
    word = ENCODING_OF[Format.MUBUF].pack(
        op=info.opcode, offen=ins["offen"], idxen=ins["idxen"], addr64=ins["addr64"],
        offset=ins["offset"], vaddr=ins["vaddr"], vdata=ins["vdata"], srsrc=SRSRC // 4,
        soffset=SOFFSET, glc=ins.get("glc", 0))
    inst = decode_one(word.to_bytes(8, "little"))
    wave = Wave(None, None, (0, 0, 0), 0)
    for i in range(4):
        wave.s[SRSRC + i] = ins["vsharp"] >> 32 * i & M32
    wave.s[SOFFSET] = ins["soffset"]
    for r in (ins["vaddr"], ins["vaddr"] + 1):
        wave.v[r] = np.array(regs[ins["slot"]][r], dtype=np.uint32)
    lanes = np.array([ins["exec"] >> lane & 1 for lane in range(64)], dtype=bool)
    f = fields(ins["name"])
    size = 4 * f["dwords"] if f["size"] == 4 else f["size"]
    addrs, ok = _buffer_addresses(inst)(wave, lanes, size)
    return [int(a) for a in addrs], [True] * len(addrs) if ok is None else [bool(o) for o in ok]


class Model:
    """The VGPRs, the memory, and what the unit must do for each instruction."""

    def __init__(self, slots: int, vgprs: int, rng: random.Random, lanes: int = 16):
        self.lanes = lanes                  # lanes a pass: a load's lanes share requests
        self.shared = 0                     # load lanes that shared another lane's request
        self.twinned = 0                    # of those, lanes served with their twin
        self.repeated = 0                   # of those, lanes that kept their pass before's
        self.regs = [[[rng.getrandbits(32) if DATA_REGS[0] <= reg < DATA_REGS[1] else 0
                       for _ in range(64)] for reg in range(vgprs)] for _ in range(slots)]
        self.mem: dict[int, int] = {}
        self.free = [list(range(*ADDR_REGS, 2)) for _ in range(slots)]   # address pairs
        self.free_data = [list(range(*ATOMIC_REGS, 2)) if vgprs >= ATOMIC_REGS[1] else []
                          for _ in range(slots)]                        # atomics' VDATA pairs
        self.cmpswaps = 0                   # cmpswap lanes that stored
        self.atomics = 0                    # atomics made
        self.zeros = 0                      # atomic lanes out of range that return 0

    def word(self, addr: int) -> int:
        return self.mem.get(addr, initial_word(addr))

    def execute(self, ins: dict) -> tuple[list, list, bool]:
        """Apply ``ins``; return its requests, its load writes and whether it traps."""
        f = fields(ins["name"])
        store, dwords, size = f["mem"] == MemKind.STORE, f["dwords"], f["size"]
        slot, regs = ins["slot"], self.regs[ins["slot"]]
        addrs, oks = golden_addresses(ins, self.regs)
        active = [lane for lane in range(64) if ins["exec"] >> lane & 1]
        requests, writes, trap = [], [], False
        if f["mem"] == MemKind.ATOMIC:
            return self.atomic(ins, active, addrs, oks)
        followers, repeats = (set(), set()) if store or ins["vsharp"] >> 119 & 1 else \
            self.followers(ins, active, dwords)
        self.shared += len(followers)
        # a repeating lane writes the word its pass before gave it, unless a dword trapped
        # before its pass's first op (an earlier pass's, or that op's own): then nothing
        L = self.lanes
        far = {lane for lane, a48, ok in zip(active, addrs, oks, strict=True)
               if ok and any((a48 + 4 * k) >> 32 for k in range(dwords))}
        firsts = {min(lane for lane in active if lane // L == p)
                  for p in {lane // L for lane in active}}
        kept = {lane for lane in repeats
                if not any(t // L < lane // L for t in far)
                and min(x for x in firsts if x // L == lane // L) not in far}
        for lane, a48, ok in zip(active, addrs, oks, strict=True):
            if lane in repeats and lane not in kept:
                continue
            for k in range(dwords):
                reg = ins["vdata"] + k
                if not ok:                         # out of range: a load reads 0
                    if not store:
                        regs[reg][lane] = 0
                        writes.append((slot, reg, lane, 0))
                    continue
                a = a48 + 4 * k
                if a >> 32:                         # at or above 4 GiB: MEM_RANGE
                    trap = True
                    continue
                lo, waddr, mask = a & 3, a & ~3, byte_mask(size, a & 3)
                if store:
                    value = regs[reg][lane] << 8 * lo & M32
                    requests.append((waddr, 1, value, mask, 0))
                    self.mem[waddr] = merge(self.word(waddr), value, mask)
                else:
                    if lane not in followers:
                        requests.append((waddr, 0, None, mask, 0))
                    got = self.word(waddr)
                    if size < 4:
                        got = int(_extend(np.array([got >> 8 * lo & (1 << 8 * size) - 1],
                                                   dtype=np.uint32), size, bool(f["signed"]))[0])
                    regs[reg][lane] = got
                    writes.append((slot, reg, lane, got))
        return requests, writes, trap

    def followers(self, ins: dict, active: list, dwords: int) -> tuple[set, set]:
        """The active lanes of a load (without ADD_TID) that send no request of their own,
        their address registers (those the instruction reads; the others count as 0) being
        another's they are served with, and of those the repeating ones:

        * a lane that *repeats*: of a dword load that reads address registers, in a pass
          after the first with an active lane, not the pass's lowest active lane, with the
          registers the same lane had in the pass before with an active lane, where it was
          active (it keeps that pass's word);
        * of the others, a lane of the pass's upper half whose twin (the lane half a pass
          below) has the same registers and is active and does not repeat;
        * of the others, a lane whose registers equal those of the lane before it in its
          pass, with such a lane below it in such a run (the runs as the registers make
          them, whether or not their lanes are active, twins or repeating)."""
        regs = self.regs[ins["slot"]]
        used = (ins["offen"] | ins["idxen"] | ins["addr64"],
                ins["addr64"] | (ins["offen"] & ins["idxen"]))
        half = self.lanes // 2

        def words(lane):
            return tuple(regs[ins["vaddr"] + i][lane] if used[i] else 0 for i in range(2))

        def in_runs(lanes: set) -> set:
            """The lanes (of any) with one of ``lanes`` below them in their run."""
            out, seen = set(), False
            for lane in range(64):
                if lane % self.lanes == 0 or words(lane) != words(lane - 1):
                    seen = False            # a run starts
                if seen:
                    out.add(lane)
                seen |= lane in lanes
            return out

        active = set(active)
        L, repeats, before = self.lanes, set(), None
        if dwords == 1 and any(used):
            for p in range(64 // L):
                lanes = [lane for lane in range(p * L, p * L + L) if lane in active]
                if not lanes:
                    continue
                if before is not None:
                    repeats |= {lane for lane in lanes[1:]
                                if before * L + lane % L in active
                                and words(lane) == words(before * L + lane % L)}
                before = p
        self.repeated += len(repeats)
        live = active - repeats
        twinned = {lane for lane in live if lane % self.lanes >= half
                   and words(lane) == words(lane - half) and lane - half in live}
        self.twinned += len(twinned)
        rest = live - twinned
        return twinned | (in_runs(rest) & rest) | repeats, repeats

    def atomic(self, ins: dict, active: list, addrs: list, oks: list) -> tuple[list, list, bool]:
        """A buffer atomic, lane by lane: a locked read and the write of the golden model's
        new value; with glc the old value (0 out of range) into VDATA."""
        op = ins["name"][len("buffer_atomic_"):]
        apply = ATOMIC_OPS[_BUF_ATOMIC[op]]
        slot, regs, vdata, glc = ins["slot"], self.regs[ins["slot"]], ins["vdata"], ins["glc"]
        requests, writes, trap = [], [], False
        for lane, a48, ok in zip(active, addrs, oks, strict=True):
            old = 0
            if ok and a48 >> 32:                   # at or above 4 GiB: MEM_RANGE
                trap = True
                continue
            if ok:
                waddr = a48 & ~3
                old = self.word(waddr)
                data, cmp = regs[vdata][lane], regs[vdata + 1][lane]
                new = apply(old, data, cmp if op == "cmpswap" else 0, 32)
                self.cmpswaps += op == "cmpswap" and old == cmp
                requests += [(waddr, 0, None, 0xF, 1), (waddr, 1, new, 0xF, 0)]
                self.mem[waddr] = new
            if glc:
                self.zeros += not ok
                regs[vdata][lane] = old
                writes.append((slot, vdata, lane, old))
        return requests, writes, trap


def random_vsharp(rng: random.Random, *, swizzle: bool, stride: int, records: int,
                  base: int) -> int:
    dw1 = (base >> 32) | stride << 16 | swizzle << 31
    dw3 = rng.randrange(4) << 19 | rng.randrange(4) << 21 | (rng.random() < 0.3) << 23
    return (base & M32) | dw1 << 32 | records << 64 | dw3 << 96


def random_instruction(rng: random.Random, model: Model) -> dict:
    """A load or store with its V#, SOFFSET and EXEC; its address registers (a pair of its
    slot's not used before) are set here, to values on which the hardware's 32-bit index and
    offset arithmetic agrees with the golden model's integers (index + lane id < 2**32, buffer
    offset < 2**32)."""
    store = rng.random() < 0.45
    name = rng.choice(STORES if store else LOADS)
    slot = rng.choice([s for s, free in enumerate(model.free) if free])
    addr64 = rng.random() < 0.35
    offen = idxen = 0
    if not addr64:
        offen, idxen = rng.choice([(0, 0), (1, 0), (0, 1), (1, 1), (1, 0)])
    vaddr = model.free[slot].pop(rng.randrange(len(model.free[slot])))
    f = fields(name)
    dwords = f["dwords"]
    vdata = rng.randrange(DATA_REGS[0], DATA_REGS[1] - dwords + 1) if store else \
        rng.randrange(LOAD_REGS[0], LOAD_REGS[1] - dwords + 1)
    align = 4 if f["size"] == 4 else f["size"]
    r = model.regs[slot]
    far = rng.random() < 0.1                # some lanes at or above 4 GiB
    exec_mask = rng.choice((M64, rng.getrandbits(64), rng.getrandbits(64) & rng.getrandbits(64),
                            M32 << 32, 1 << rng.randrange(64), 0))
    if addr64:
        base = rng.choice((rng.randrange(0, 1 << 31, 256), (1 << 48) - 4096))
        v0 = [(rng.randrange(0, 1 << 20) * align + (4096 if base >> 32 else 0)) for _ in range(64)]
        v1 = [0] * 64
        if far:
            for lane in rng.sample(range(64), 3):
                v1[lane] = rng.choice((1, 0xFFFF, 0x10000))
                v0[lane] = rng.choice((v0[lane], M32 - 3, M32 & ~3))
        r[vaddr], r[vaddr + 1] = v0, v1
        vsharp = random_vsharp(rng, swizzle=False, stride=rng.randrange(1 << 14), records=0,
                               base=base)
        soffset = rng.randrange(0, 4096, 4)
        offset = rng.randrange(0, 4096, align)
    else:
        swizzle = rng.random() < 0.25
        stride = rng.choice((0, 0, rng.randrange(1 << 14), 16, 4))
        if swizzle and stride == 0:
            stride = rng.randrange(1, 64)
        top = 1 << (10 if swizzle else 16)
        index = [rng.randrange(top) for _ in range(64)]
        offsets = [rng.randrange(0, 1 << (12 if swizzle else 20)) * align for _ in range(64)]
        if idxen and offen:
            r[vaddr], r[vaddr + 1] = index, offsets
        elif idxen:
            r[vaddr] = index
        elif offen:
            r[vaddr] = offsets
        span = 1 << 30
        records = rng.choice((M32, rng.randrange(1 << 22), rng.randrange(top), 0))
        base = rng.randrange(0, (1 << 32) - span - 8192, 4)
        if far:
            base = (1 << 32) - rng.randrange(0, 1 << 16, 4)
        vsharp = random_vsharp(rng, swizzle=swizzle, stride=stride, records=records, base=base)
        soffset = rng.choice((0, rng.randrange(0, 1 << 16, 4), M32 & ~3))
        offset = rng.randrange(0, 4096, align)
    if not store and rng.random() < 0.5:
        # runs of lanes with the same address registers (a load's lanes then share requests)
        for lane in range(1, 64):
            if rng.random() < 0.7:
                for reg in (vaddr, vaddr + 1):
                    r[reg][lane] = r[reg][lane - 1]
    if not store and rng.random() < 0.5:
        # upper-half lanes with their twin's address registers (two rows of a workgroup)
        half = model.lanes // 2
        for lane in range(64):
            if lane % model.lanes >= half and rng.random() < 0.7:
                for reg in (vaddr, vaddr + 1):
                    r[reg][lane] = r[reg][lane - half]
    # lanes with the address registers the same lane had a pass before (a matrix row that
    # every row of a workgroup reads: each pass reads the same words), drawn from a stream of
    # their own (so that the other draws, and the runs' coverage, are what they were)
    again = random.Random(hash((vaddr, slot, exec_mask, offset)))
    if not store and again.random() < 0.6:
        for lane in range(model.lanes, 64):
            if again.random() < 0.9:
                for reg in (vaddr, vaddr + 1):
                    r[reg][lane] = r[reg][lane - model.lanes]
    return {"name": name, "slot": slot, "addr64": int(addr64), "offen": offen, "idxen": idxen,
            "offset": offset, "vaddr": vaddr, "vdata": vdata, "vsharp": vsharp,
            "soffset": soffset, "exec": exec_mask}


def random_atomic(rng: random.Random, model: Model) -> dict:
    """A buffer atomic whose lanes share a few dwords (:data:`POOL`), sometimes out of range
    (NUM_RECORDS), at or above 4 GiB, addr64 or idxen; glc or not; data (and compare) values
    small, random or a dword's initial value. Its address and VDATA pairs are its own. The
    operations take turns."""
    name = ATOMICS[model.atomics % len(ATOMICS)]
    model.atomics += 1
    slot = rng.choice([s for s in range(len(model.free))
                       if model.free[s] and model.free_data[s]])
    vaddr = model.free[slot].pop(rng.randrange(len(model.free[slot])))
    vdata = model.free_data[slot].pop(rng.randrange(len(model.free_data[slot])))
    r = model.regs[slot]

    def value():
        pick = rng.random()
        if pick < 0.4:
            return rng.choice(SMALL)
        if pick < 0.6:
            return initial_word(POOL_BASE + rng.choice(POOL))
        return rng.getrandbits(32)
    r[vdata] = [value() for _ in range(64)]
    r[vdata + 1] = [value() for _ in range(64)]
    far = rng.random() < 0.1
    base = (1 << 32) - 8 if far else POOL_BASE
    offsets = [rng.choice(POOL) for _ in range(64)]
    exec_mask = rng.choice((M64, rng.getrandbits(64), rng.getrandbits(64) & rng.getrandbits(64),
                            1 << rng.randrange(64), 0xF << 4 * rng.randrange(16), 0))
    ins = {"name": name, "slot": slot, "addr64": 0, "offen": 1, "idxen": 0, "offset": 0,
           "vaddr": vaddr, "vdata": vdata, "glc": int(rng.random() < 0.5), "soffset": 0,
           "exec": exec_mask}
    mode = rng.random()
    if mode < 0.2:                          # addr64: vaddr pair + base + offset + soffset
        ins.update(addr64=1, offen=0, offset=rng.choice((0, 4)), soffset=4 * far)
        addrs = [base + o - ins["offset"] - ins["soffset"] for o in offsets]
        r[vaddr], r[vaddr + 1] = [a & M32 for a in addrs], [a >> 32 for a in addrs]
        ins["vsharp"] = random_vsharp(rng, swizzle=False, stride=0, records=0, base=0)
    elif mode < 0.4:                        # structured: index * 4, index < NUM_RECORDS
        ins.update(offen=0, idxen=1)
        r[vaddr] = [o // 4 for o in offsets]
        ins["vsharp"] = random_vsharp(rng, swizzle=False, stride=4, base=base,
                                      records=rng.choice((M32, 3))) & ~(1 << 119)
    else:                                   # raw: offset < NUM_RECORDS - SOFFSET
        ins.update(offset=rng.choice((0, 4)), soffset=rng.choice((0, 4)))
        r[vaddr] = [o - ins["offset"] - ins["soffset"] if o >= 8 else o for o in offsets]
        ins["vsharp"] = random_vsharp(rng, swizzle=False, stride=0, base=base,
                                      records=rng.choice((M32, M32, 16, 64))) & ~(1 << 119)
    return ins


def random_mixed(rng: random.Random, model: Model) -> dict:
    """A buffer atomic (60 % of the time, while a slot has VDATA pairs) or a load or store."""
    if rng.random() < 0.6 and any(f and d for f, d in zip(model.free, model.free_data,
                                                          strict=True)):
        return random_atomic(rng, model)
    return random_instruction(rng, model)


def issue_payload(ins: dict) -> dict:
    return {"glc": ins.get("glc", 0),
            **{k: ins[k] for k in ("slot", "offen", "idxen", "addr64", "offset", "vaddr",
                                   "vdata", "vsharp", "soffset", "exec")}}


def control_word(name: str):
    f = fields(name)
    return DecodedLayout.const({k: f[k] for k in ("unit", "mem", "size", "signed", "dwords",
                                                  "atomic") if k in f})


# --- the run ---------------------------------------------------------------------------------

class Memory:
    """In-order memory: random accept back-pressure, random latency, random answer gaps; the
    requests it took, in order."""

    def __init__(self, dut, rng, model_mem: dict, *, latency=(1, 12), accept=0.7, answer=0.8):
        self.dut, self.rng, self.mem = dut, rng, model_mem
        self.latency, self.accept, self.answer = latency, accept, answer
        self.log: list[tuple[int, tuple]] = []        # (cycle, request)
        self.before: list[int] = []     # of each request, the answers given before it
        self.cycle = 0

    async def process(self, ctx):
        req, rsp = self.dut.req, self.dut.rsp
        pending, cycle, answered = deque(), 0, 0
        ctx.set(req.ready, self.rng.random() < self.accept)
        async for _, _, qv, qr, q, sv, sr in ctx.tick().sample(
                req.valid, req.ready, req.payload, rsp.valid, rsp.ready):
            cycle += 1
            self.cycle = cycle
            if sv and sr:
                pending.popleft()
                answered += 1
            if qv and qr:
                word = self.mem.get(q.addr, initial_word(q.addr))
                if q.write:
                    self.mem[q.addr] = merge(word, q.data, q.mask)
                self.log.append((cycle, (q.addr, q.write, q.data if q.write else None, q.mask,
                                         q.lock)))
                self.before.append(answered)
                pending.append((cycle + self.rng.randint(*self.latency) - 1, word))
            ctx.set(req.ready, self.rng.random() < self.accept)
            if pending and pending[0][0] <= cycle and self.rng.random() < self.answer:
                ctx.set(rsp.valid, 1)
                ctx.set(rsp.payload.data, pending[0][1])
            else:
                ctx.set(rsp.valid, 0)


async def preload(ctx, dut: Bench, regs: list, lanes: int) -> None:
    for slot, slot_regs in enumerate(regs):
        for reg, values in enumerate(slot_regs):
            if not any(values):
                continue                    # the file starts at 0
            for p in range(64 // lanes):
                ctx.set(dut.tb_write.payload, {
                    "slot": slot, "pass_": p, "reg": reg,
                    "data": values[p * lanes:(p + 1) * lanes], "mask": (1 << lanes) - 1})
                ctx.set(dut.tb_write.valid, 1)
                await ctx.tick()
    ctx.set(dut.tb_write.valid, 0)


async def read_back(ctx, dut: Bench, slots: int, vgprs: int, lanes: int) -> list:
    """Every VGPR of every slot, through the testbench's read port."""
    got = [[[None] * 64 for _ in range(vgprs)] for _ in range(slots)]
    asks = deque((slot, p, reg) for slot in range(slots) for p in range(64 // lanes)
                 for reg in range(0, vgprs, 3))
    sent = deque()
    ctx.set(dut.tb_mode, 1)
    while asks or sent:
        if asks:
            slot, p, reg = asks[0]
            ctx.set(dut.tb_read.payload, {"slot": slot, "pass_": p, "regs": [
                {"reg": min(reg + i, vgprs - 1), "valid": reg + i < vgprs} for i in range(3)]})
        ctx.set(dut.tb_read.valid, bool(asks))
        _, _, ready, ov, op = await ctx.tick().sample(
            dut.tb_read.ready, dut.tb_operands.valid, dut.tb_operands.payload)
        if asks and ready:
            sent.append(asks.popleft())
        if ov:
            slot, p, reg = sent.popleft()
            assert (op.slot, op.pass_) == (slot, p)
            for i in range(3):
                if reg + i < vgprs:
                    for lane in range(lanes):
                        got[slot][reg + i][p * lanes + lane] = op.data[i][lane]
    ctx.set(dut.tb_mode, 0)
    return got


def run(lanes: int, count: int, seed: int, *, slots: int = 4, vgprs: int = 64, depth: int = 32,
        fill_hold: float = 0.3, memory: dict | None = None, make=random_instruction,
        atomics: frozenset = BUFFER_ATOMICS) -> dict:
    """Run ``count`` instructions from ``make(rng, model)`` (which sets their address
    registers in the model) and check everything against the model; return the program, the
    model's expectations, what was seen (with cycles) and the requests."""
    rng = random.Random(seed)
    dut = Bench(lanes, slots, vgprs, depth, atomics)
    model = Model(slots, vgprs, rng, lanes)
    program = [make(rng, model) for _ in range(count)]
    # an atomic takes a few dozen cycles a lane
    limit = 400 * count + 2000 + sum(
        150 * bin(ins["exec"]).count("1") for ins in program if "atomic" in ins["name"])
    initial = [[list(r) for r in slot] for slot in model.regs]
    mem = Memory(dut, rng, {}, **(memory or {}))
    expected = [model.execute(ins) for ins in program]
    seen = {"sent": [], "trap": [], "landed": [], "trace": [], "cycles": 0, "fills": 0}

    async def bench(ctx):
        await preload(ctx, dut, initial, lanes)
        seen["start"] = mem.cycle + 1             # the memory's count of the first issue cycle
        queue = deque(enumerate(program))
        cycle = 0
        while len(seen["landed"]) < count:
            cycle += 1
            assert cycle < limit, "the unit stopped"
            head = queue[0][1] if queue else None
            if head is not None:
                ctx.set(dut.issue.payload, issue_payload(head))
                ctx.set(dut.ctl, control_word(head["name"]))
            ctx.set(dut.issue.valid, head is not None)
            ctx.set(dut.fill_hold, rng.random() < fill_hold)
            _, _, ready, sv, s, tv, t, lv, lslot, lt, fills = await ctx.tick().sample(
                dut.issue.ready, dut.sent.valid, dut.sent.payload.slot, dut.trap.valid,
                dut.trap.payload.slot, dut.landed.valid, dut.landed.payload.slot,
                dut.load_trace, dut.fills)
            seen["fills"] += fills
            if head is not None and ready:
                queue.popleft()
            if sv:
                seen["sent"].append((cycle, s))
            if tv:
                assert sv and t == s
                seen["trap"].append(len(seen["sent"]) - 1)
            if lv:
                seen["landed"].append((cycle, lslot))
            if lt.valid:
                seen["trace"] += [(cycle, (lt.slot, lt.reg, lane, lt.value))
                                  for lane in range(64) if lt.lanes >> lane & 1]
                seen["trace"] += [(cycle, (lt.slot, lt.reg, lane, lt.values[lane % 16]))
                                  for lane in range(64) if lt.copied >> lane & 1]
        seen["cycles"] = cycle
        ctx.set(dut.fill_hold, 0)
        for _ in range(5):
            _, _, busy = await ctx.tick().sample(dut.busy)
        assert not busy
        seen["regs"] = await read_back(ctx, dut, slots, vgprs, lanes)

    simulate(dut, bench, processes=[mem.process], clock=1e-8)
    slots_in_order = [ins["slot"] for ins in program]
    assert [s for _, s in seen["sent"]] == slots_in_order
    assert [s for _, s in seen["landed"]] == slots_in_order
    assert seen["trap"] == [i for i, (_, _, trap) in enumerate(expected) if trap]
    assert all(sc < lc for (sc, _), (lc, _) in zip(seen["sent"], seen["landed"], strict=True))
    want_requests = [r for reqs, _, _ in expected for r in reqs]
    got_requests = [r for _, r in mem.log]
    assert len(got_requests) == len(want_requests)
    for i, (got, want) in enumerate(zip(got_requests, want_requests, strict=True)):
        assert got == want, (i, got, want)
    assert mem.mem == model.mem
    # an atomic lane: its locked read once every earlier request is answered, its write next
    for i, (_, (addr, write, _, _, lock)) in enumerate(mem.log):
        if lock:
            assert not write and mem.before[i] == i, (i, mem.before[i])
            _, (waddr, wwrite, _, _, wlock) = mem.log[i + 1]
            assert (waddr, wwrite, wlock) == (addr, 1, 0) and mem.before[i + 1] == i + 1
    # each instruction's writes (in order of instructions; lanes that shared a request are
    # written together, so an x2-x4 load's may come in another order)
    got_trace = [w for _, w in seen["trace"]]
    end = 0
    for _, writes, _ in expected:
        assert sorted(got_trace[end:end + len(writes)]) == sorted(writes)
        end += len(writes)
    assert end == len(got_trace)
    # each instruction lands after its last write
    writes_of = [len(w) for _, w, _ in expected]
    end = 0
    for i, n in enumerate(writes_of):
        end += n
        if n:
            assert seen["trace"][end - 1][0] <= seen["landed"][i][0]
    for slot, (got_regs, want_regs) in enumerate(zip(seen["regs"], model.regs, strict=True)):
        for reg, (got, want) in enumerate(zip(got_regs, want_regs, strict=True)):
            assert got == want, (slot, reg, [(lane, hex(g), hex(w)) for lane, (g, w)
                                             in enumerate(zip(got, want, strict=True))
                                             if g != w])
    seen["requests"] = mem.log
    return {"program": program, "expected": expected, "seen": seen, "requests": got_requests,
            "model": model}


@pytest.mark.parametrize(("lanes", "seed"), [(4, 2), (8, 2), (16, 3)])
def test_random_loads_and_stores_match_the_model(lanes, seed):
    out = run(lanes, 50, seed)
    expected = out["expected"]
    # the run covered what it is meant to
    names = {ins["name"] for ins in out["program"]}
    assert len(names) >= 10
    assert any(trap for _, _, trap in expected)
    assert any(w[3] == 0 for _, writes, _ in expected for w in writes)
    assert len(out["requests"]) > 500
    assert out["model"].shared > 100            # load lanes that shared a request
    assert out["model"].twinned > 20            # of those, served with their twin
    assert out["model"].repeated > 20           # of those, kept their pass before's word


def repeated_rows(far: tuple = ()):
    """A ``make`` for :func:`run`: ``buffer_load_dword`` (addr64) on a full wave whose every
    pass reads the words the first reads (a row every row of a workgroup reads), the lanes
    of a pass apart; the ``n``-th instruction's lane ``far[n]`` of every pass, if any, at
    4 GiB (MEM_RANGE)."""
    made = []

    def make(rng: random.Random, model: Model) -> dict:
        lanes, slot = model.lanes, 0
        vaddr = model.free[slot].pop(0)
        regs = model.regs[slot]
        regs[vaddr] = [lane % lanes * 4 for lane in range(64)]
        regs[vaddr + 1] = [0] * 64
        if len(made) < len(far) and far[len(made)] is not None:
            for p in range(64 // lanes):
                regs[vaddr + 1][p * lanes + far[len(made)]] = 1
        made.append(vaddr)
        return {"name": "buffer_load_dword", "slot": slot, "addr64": 1, "offen": 0,
                "idxen": 0, "offset": 0, "vaddr": vaddr, "vdata": LOAD_REGS[0] + len(made),
                "soffset": 0, "exec": M64,
                "vsharp": random_vsharp(rng, swizzle=False, stride=0, records=0,
                                        base=0x1000) & ~(1 << 119)}
    return make


@pytest.mark.parametrize("lanes", [16, 4])
def test_lanes_repeat_the_pass_before(lanes):
    """A load whose passes read the words its first pass reads sends that pass's requests and
    one a pass after it (its lowest lane's): the other lanes keep the first pass's words. With
    a lane at 4 GiB in every pass (lane 1, a repeating lane after the first pass; lane 0, the
    pass's lowest), the instruction traps and its later passes' repeating lanes write nothing;
    the load after it repeats again."""
    out = run(lanes, 3, 5, make=repeated_rows(far=(1, 0, None)),
              memory={"latency": (4, 4), "accept": 1.0, "answer": 1.0})
    passes = 64 // lanes
    expected = out["expected"]
    assert [trap for _, _, trap in expected] == [True, True, False]
    assert len(expected[2][0]) == lanes + passes - 1
    # every lane of the last written; of the trapping ones, the first pass's lanes in range
    # and (the first's) the later passes' lowest lanes
    assert len(expected[2][1]) == 64
    assert [len(writes) for _, writes, _ in expected[:2]] == [lanes + passes - 2, lanes - 1]
    assert out["model"].repeated == 3 * (passes - 1) * (lanes - 1)


def test_few_dwords_in_flight_and_slow_answers():
    """4 dwords in flight, answers after up to 40 cycles, ``fill`` held most of the time: the
    credits hold the walker back, nothing is lost or reordered."""
    run(8, 12, 4, depth=4, fill_hold=0.7, memory={"latency": (1, 40), "accept": 0.5})


def dword_stream(name: str, slot: int = 0):
    """A ``make`` for :func:`run`: ``name`` on a full wave, offen, each lane at its own
    element of a raw buffer, on slot ``slot``."""
    def make(rng: random.Random, model: Model) -> dict:
        f = fields(name)
        vaddr = model.free[slot].pop(0)
        model.regs[slot][vaddr] = [lane * 4 * f["dwords"] for lane in range(64)]
        vdata = DATA_REGS[0] if f["mem"] == MemKind.STORE else LOAD_REGS[0]
        return {"name": name, "slot": slot, "addr64": 0, "offen": 1, "idxen": 0, "offset": 0,
                "vaddr": vaddr, "vdata": vdata, "soffset": 0, "exec": M64,
                "vsharp": random_vsharp(rng, swizzle=False, stride=0, records=M32,
                                        base=0x1000) & ~(1 << 119)}
    return make


@pytest.mark.parametrize(("lanes", "name"), [(16, "buffer_load_dword"),
                                             (4, "buffer_load_dword"),
                                             (16, "buffer_store_dwordx4"),
                                             (8, "buffer_load_dwordx2")])
def test_a_full_wave_sends_a_request_every_cycle(lanes, name):
    """Memory always ready with a latency of 8 cycles, ``fill`` always ready: the dwords of a
    full wave go out on consecutive cycles, and two instructions follow each other without a
    gap (the second's VGPR reads and constants overlap the first's requests); a dword load
    writes its VGPR once a pass."""
    latency = 8
    out = run(lanes, 2, 1, fill_hold=0, make=dword_stream(name),
              memory={"latency": (latency, latency), "accept": 1.0, "answer": 1.0})
    dwords = fields(name)["dwords"]
    cycles = [cycle for cycle, _ in out["seen"]["requests"]]
    assert len(cycles) == 2 * 64 * dwords
    assert cycles == list(range(cycles[0], cycles[0] + len(cycles)))
    # the first request: the sequencer, two cycles of constants, the VGPR reads, the landing
    # (its compares registered), the walker and the address pipeline; the last instruction
    # lands the memory's latency and a few cycles after its last request
    start = out["seen"]["start"]
    assert cycles[0] - start <= 27, cycles[0] - start
    # the testbench counts cycles from the first issue
    landed = out["seen"]["landed"][-1][0] + start - 1
    assert landed - cycles[-1] <= latency + 6, landed - cycles[-1]
    # a load's lanes of a pass and register are one VGPR write: one a pass for a dword load,
    # one a dword for x2-x4 (each lane's dwords come back together)
    loads = 0 if fields(name)["mem"] == MemKind.STORE else 2 * 64 * dwords
    assert out["seen"]["fills"] == (loads // lanes if dwords == 1 else loads)


# (16 lanes, the default unit's, in the default run, about 47 s of a CI worker; 4 and 8 lanes
# only with -m slow: the 4-lane unit's atomics run in tests/cu/test_pipelined.py)
@pytest.mark.parametrize(("lanes", "seed"), [pytest.param(4, 12, marks=pytest.mark.slow),
                                             pytest.param(8, 15, marks=pytest.mark.slow),
                                             (16, 19)])
def test_random_atomics_among_loads_and_stores_match_the_model(lanes, seed):
    """Atomics (every operation, glc or not) on dwords the lanes share, among random loads
    and stores: the requests (the lanes' locked reads and writes in lane order, after every
    earlier request's answer), the memory, the old values returned, traps and ``landed``."""
    out = run(lanes, 40, seed, slots=3, vgprs=128, make=random_mixed)
    program, expected = out["program"], out["expected"]
    atomics = [(ins, exp) for ins, exp in zip(program, expected, strict=True)
               if "atomic" in ins["name"]]
    # the run covered what it is meant to
    assert len({ins["name"] for ins, _ in atomics}) == len(ATOMICS)
    assert {ins["glc"] for ins, _ in atomics} == {0, 1}
    assert any(trap for _, (_, _, trap) in atomics)
    assert any(lock for _, (*_, lock) in out["seen"]["requests"])
    # lanes out of range return 0; lanes collide on a dword
    assert out["model"].zeros > 0
    addrs = [r[0] for _, (reqs, _, _) in atomics for r in reqs if r[4]]
    assert len(addrs) > 3 * len(set(addrs))
    assert out["model"].cmpswaps > 0


def test_atomics_with_few_credits_and_slow_answers():
    """The fewest credits (3), slow answers, ``fill`` held most of the time."""
    run(8, 16, 14, slots=2, vgprs=128, depth=3, fill_hold=0.7, make=random_mixed,
        memory={"latency": (1, 30), "accept": 0.5})


def test_loads_and_stores_without_the_atomic_engine():
    """``atomics`` empty: no atomic engine, loads and stores as before."""
    run(8, 20, 15, atomics=frozenset())
