# amaranth: UnusedElaboratable=no
"""The register files' block RAM (:mod:`gpgpu_hdl.cu.bram`): the generic model against a
Python model of the rows (the data of a row presented in cycle ``t`` on the output in cycle
``t + 2``, as a ``DP16KD`` with its output register gives it; a write visible to reads
presented from the next cycle on); the ECP5 style as ``DP16KD`` instances with their output
registers on, as many as Yosys maps the generic memory to, also inside the VGPR and SGPR
files."""

from __future__ import annotations

import random
import re

import pytest
from amaranth.back import verilog

from gpgpu_hdl.cu.bram import LATENCY, RegisteredRam, ecp5_mode
from gpgpu_hdl.cu.sgpr_file import SgprFile
from gpgpu_hdl.cu.vgpr_file import VgprFile
from gpgpu_hdl.synth import Registered
from tests.simulation import simulate


def run(dut: RegisteredRam, cycles: int, seed: int, latency: int = LATENCY) -> list[tuple]:
    """Random writes (random enables) and a random read every cycle, on few rows so that
    reads hit recent writes; the mismatches (cycle, row, got, want) of the data read
    ``latency`` cycles after each address."""
    rng = random.Random(seed)
    rows = [rng.randrange(dut.depth) for _ in range(6)]
    words = dut.width // len(dut.write_en)
    model: dict[int, int] = {}
    failures = []

    async def testbench(ctx):
        due = []            # (cycle, row, want)
        for cycle in range(cycles + latency):
            row = rng.choice(rows)
            ctx.set(dut.read_addr, row)
            due.append((cycle + latency, row, model.get(row, 0)))
            wrow, data = rng.choice(rows), rng.getrandbits(dut.width)
            en = rng.getrandbits(len(dut.write_en)) if rng.random() < 0.7 else 0
            ctx.set(dut.write_addr, wrow)
            ctx.set(dut.write_data, data)
            ctx.set(dut.write_en, en)
            await ctx.tick()
            for k in range(len(dut.write_en)):      # visible from the next cycle's reads
                if en >> k & 1:
                    mask = ((1 << words) - 1) << (k * words)
                    model[wrow] = model.get(wrow, 0) & ~mask | data & mask
            for entry in [e for e in due if e[0] == cycle + 1]:
                due.remove(entry)
                got = ctx.get(dut.read_data)
                if got != entry[2]:
                    failures.append((cycle + 1, entry[1], hex(got), hex(entry[2])))

    simulate(dut, testbench, clock=1e-8)
    return failures


@pytest.mark.parametrize(("width", "depth", "granularity"),
                         [(64, 512, 32), (128, 2048, 32), (32, 100, 32)])
def test_generic_reads_two_cycles_after_the_address(width, depth, granularity):
    dut = RegisteredRam(width=width, depth=depth, granularity=granularity)
    assert dut.latency == LATENCY == 2
    failures = run(dut, 600, seed=width + depth)
    assert not failures, failures[:5]


@pytest.mark.parametrize("latency", [LATENCY - 1, LATENCY + 1])
def test_generic_data_is_not_there_a_cycle_early_or_late(latency):
    failures = run(RegisteredRam(width=64, depth=512, granularity=32), 300, seed=3,
                   latency=latency)
    assert len(failures) > 100


def _instances(text: str) -> list[tuple[str, str]]:
    return re.findall(r"DP16KD #\((.*?)\) \w+ \((.*?)\);", text, re.S)


@pytest.mark.parametrize(("depth", "mode", "per_word"),
                         [(512, 36, 1), (1024, 18, 2), (2048, 9, 4), (4096, 4, 8)])
def test_ecp5_instances_have_their_output_registers_on(depth, mode, per_word):
    dut = RegisteredRam(width=64, depth=depth, granularity=32, style="ecp5")
    assert ecp5_mode(depth)[0] == mode and dut.block_rams == 2 * per_word
    text = verilog.convert(dut, name="ram", emit_src=False)
    cells = _instances(text)
    assert len(cells) == dut.block_rams, text
    for params, ports in cells:
        assert re.search(r"\.REGMODE_B\(\"OUTREG\"\)", params)
        # in the 36-bit mode port A's data outputs carry the low half of the read word
        regmode_a = "OUTREG" if mode == 36 else "NOREG"
        assert re.search(rf"\.REGMODE_A\(\"{regmode_a}\"\)", params)
        assert re.search(rf"\.DATA_WIDTH_A\((32'd)?{mode}\)", params)
        assert re.search(rf"\.DATA_WIDTH_B\((32'd)?{mode}\)", params)
        for pin, value in (("OCEB", "1'h1"), ("CEB", "1'h1"), ("RSTB", "1'h0"),
                           ("WEB", "1'h0")):
            assert re.search(rf"\.{pin}\({re.escape(value)}\)", ports), pin
        assert re.search(r"\.CLKA\(clk\)", ports) and re.search(r"\.CLKB\(clk\)", ports)
        if mode == 36:      # the 36-bit mode's byte enables, then the row from ADA5 on
            for i in range(4):
                assert re.search(rf"\.ADA{i}\(write_en\[[01]\]\)", ports), i
            assert re.search(r"\.ADA4\(1'h0\)", ports)
            assert re.search(r"\.ADA5\(w_row\[0\]\)", ports)


def test_files_build_as_many_block_rams_as_yosys_infers():
    # 16 lanes: a 512-row bank, one DP16KD (36-bit mode) per lane per bank; 4 lanes: 2,048
    # rows, four (9-bit mode) per lane per bank; the SGPR file: two per copy
    for lanes in (16, 4):
        text = verilog.convert(Registered(VgprFile(lanes=lanes, slots=8, vgprs=64, ram="ecp5")),
                               name="vgprs", emit_src=False)
        assert len(_instances(text)) == 64, lanes
    text = verilog.convert(Registered(SgprFile(slots=8, ports=2, ram="ecp5")), name="sgprs",
                           emit_src=False)
    assert len(_instances(text)) == 4
    assert "DP16KD" not in verilog.convert(Registered(SgprFile(slots=8)), name="sgprs",
                                           emit_src=False)


@pytest.mark.parametrize("make", [
    lambda: RegisteredRam(width=32, depth=16, style="x"),
    lambda: VgprFile(ram="x"),
    lambda: SgprFile(ram="x"),
])
def test_refuses_unknown_styles(make):
    with pytest.raises(ValueError, match=r"ram style must be one of 'generic', 'ecp5', not 'x'"):
        make()


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"width": 32, "depth": 16385}, r"depth must be from 1 to 16384, not 16385"),
    ({"width": 33, "depth": 16, "granularity": 32},
     r"width must be a positive multiple of granularity, not 33 and 32"),
])
def test_rejects_bad_shapes(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RegisteredRam(**kwargs)
