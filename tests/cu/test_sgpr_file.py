# amaranth: UnusedElaboratable=no
"""The pipelined unit's SGPR file (:mod:`gpgpu_hdl.cu.sgpr_file`) against a Python model of
the registers: random 32- and 64-bit writes and two random reads every cycle, each read's data
checked ``LATENCY`` cycles later against the model's registers as the writes of the earlier
cycles left them, and every slot's VCCZ flag checked every cycle against the model's VCC as the
reads of the cycle before see it."""

from __future__ import annotations

import random
import warnings

import pytest
from amaranth.back import verilog

from gpgpu_hdl.cu.sgpr_file import LATENCY, VCC, SgprFile
from gpgpu_hdl.synth import Registered
from tests.bits import M32
from tests.simulation import simulate


class Model:
    """The registers of every wave slot (0 at power-on, like the block RAM)."""

    def __init__(self):
        self.regs: dict[tuple[int, int], int] = {}

    def write(self, slot: int, reg: int, value: int, wide: bool) -> None:
        self.regs[slot, reg] = value & M32
        if wide:
            self.regs[slot, reg + 1] = value >> 32 & M32

    def read(self, slot: int, reg: int) -> tuple[int, int | None]:
        """The register and, for an even one, the next (the pair)."""
        return self.regs.get((slot, reg), 0), (self.regs.get((slot, reg + 1), 0)
                                               if reg % 2 == 0 else None)

    def vccz(self, slots: int) -> int:
        """Bit ``i``: slot ``i``'s VCC is zero."""
        return sum((self.read(slot, VCC) == (0, 0)) << slot for slot in range(slots))


def codes(sgprs: int) -> list[int]:
    return [*range(sgprs), VCC, VCC + 1]


def value64(rng: random.Random) -> int:
    """A random write value, now and then zero in either half or both, or one bit (VCCZ's
    cases)."""
    return rng.choice((rng.getrandbits(64), rng.getrandbits(64), 0, rng.getrandbits(32),
                       rng.getrandbits(32) << 32, 1 << rng.randrange(64)))


def run(dut: SgprFile, cycles: int, seed: int, write_rate: float = 0.6,
        latency: int = LATENCY, prefill: bool = False) -> list[tuple]:
    """Random traffic for ``cycles`` cycles (after a write of every register pair of every
    slot with ``prefill``); return the mismatches (port, cycle, request, got, want) with the
    data read ``latency`` cycles after each request, and ("vccz", cycle, got, want) with the
    VCCZ flags of each cycle against the registers as the reads of the cycle before see
    them."""
    rng = random.Random(seed)
    regs = codes(dut.sgprs)
    model = Model()
    failures = []

    async def testbench(ctx):
        if prefill:
            ctx.set(dut.write.valid, 1)
            for slot in range(dut.slots):
                for reg in regs[::2]:
                    value = value64(rng)
                    ctx.set(dut.write.payload, {"slot": slot, "reg": reg, "data": value,
                                                "wide": 1})
                    await ctx.tick()
                    model.write(slot, reg, value, True)
        due = []        # (cycle, port, request, want)
        seen = model.vccz(dut.slots)    # as the reads presented in this cycle see VCC
        for cycle in range(cycles + latency):
            for port in range(dut.ports):
                slot, reg = rng.randrange(dut.slots), rng.choice(regs)
                ctx.set(dut.read[port], {"slot": slot, "reg": reg})
                due.append((cycle + latency, port, (slot, reg), model.read(slot, reg)))
            write = rng.random() < write_rate
            slot, reg = rng.randrange(dut.slots), rng.choice(regs)
            wide = reg % 2 == 0 and rng.random() < 0.5
            value = value64(rng)
            ctx.set(dut.write.valid, write)
            ctx.set(dut.write.payload, {"slot": slot, "reg": reg, "data": value, "wide": wide})
            await ctx.tick()
            if write:           # visible from the next cycle's reads
                model.write(slot, reg, value, wide)
            if ctx.get(dut.vccz) != seen:
                failures.append(("vccz", cycle + 1, bin(ctx.get(dut.vccz)), bin(seen)))
            seen = model.vccz(dut.slots)
            for entry in [e for e in due if e[0] == cycle + 1]:
                due.remove(entry)
                _, port, request, (low, high) = entry
                got = ctx.get(dut.data[port])
                if got & M32 != low or (high is not None and got >> 32 != high):
                    failures.append((port, cycle + 1, request, hex(got), (low, high)))

    simulate(dut, testbench, clock=1e-8)
    return failures


@pytest.mark.parametrize(("slots", "sgprs", "ports"), [(8, 104, 2), (3, 16, 1), (2, 8, 3)])
def test_reads_see_the_earlier_writes(slots, sgprs, ports):
    dut = SgprFile(slots=slots, sgprs=sgprs, ports=ports)
    assert dut.latency == LATENCY and dut.rows == slots * 64
    failures = run(dut, 2000, seed=slots * 100 + sgprs, prefill=True)
    assert not failures, failures[:5]


def test_write_of_every_cycle_and_reads_of_every_cycle():
    # one write and two reads every cycle, few registers so that reads hit the writes
    dut = SgprFile(slots=2, sgprs=4)
    failures = run(dut, 1000, seed=5, write_rate=1.0)
    assert not failures, failures[:5]


@pytest.mark.parametrize("latency", [LATENCY - 1, LATENCY + 1])
def test_data_is_not_there_a_cycle_early_or_late(latency):
    failures = run(SgprFile(slots=8), 200, seed=9, latency=latency, prefill=True)
    reads = [f for f in failures if f[0] != "vccz"]
    assert len(reads) > 300      # of 2 x 200 reads (a zero half can match by chance)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"slots": 0}, r"slots must be an integer from 1 to 64, not 0"),
    ({"slots": 65}, r"slots must be an integer from 1 to 64, not 65"),
    ({"sgprs": 105}, r"sgprs must be an even integer from 2 to 104, not 105"),
    ({"sgprs": 7}, r"sgprs must be an even integer from 2 to 104, not 7"),
    ({"ports": 0}, r"ports must be an integer from 1 to 4, not 0"),
    ({"ports": "2"}, r"ports must be an integer from 1 to 4, not '2'"),
])
def test_rejects_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SgprFile(**kwargs)


def test_converts_to_verilog_without_warnings():
    # (inside the bench's wrapper: the always-ready write stream's constant ready is no port)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = verilog.convert(Registered(SgprFile()), name="sgprs", emit_src=False)
        again = verilog.convert(Registered(SgprFile()), name="sgprs", emit_src=False)
    assert "module sgprs" in text and text == again
