"""The path estimate (gpgpu_hdl.synth_paths) on designs whose depth is known from their
construction: a 64-input XOR needs at least three levels of 4-input LUTs, a 2-input one a
single level, and a 32-bit sum's top bit comes out of a chain of 16 two-bit carry cells."""

import json
import math

import pytest
from amaranth.back import verilog
from amaranth.hdl import Module, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from gpgpu_hdl.cu.mux4 import Mux4
from gpgpu_hdl.errors import GpgpuError
from gpgpu_hdl.synth import synthesize
from gpgpu_hdl.synth_paths import (DELAYS, endpoint_arrivals, endpoints_over,
                                   luts_by_signal, route_delay, worst_paths)


class Depths(wiring.Component):
    """Registered inputs; a 64-input XOR, a 2-input XOR and a 32-bit sum, each registered; a
    1024 x 32 block RAM written at the sum's low bits."""

    a: In(64)
    b: In(32)
    wide: Out(1)
    narrow: Out(1)
    total: Out(32)
    read: Out(32)

    def elaborate(self, platform):  # noqa: ARG002 (Amaranth's fixed signature)
        m = Module()
        ra, rb = (Signal.like(sig, name=f"r_{n}") for n, sig in (("a", self.a), ("b", self.b)))
        m.d.sync += [ra.eq(self.a), rb.eq(self.b), self.wide.eq(ra.xor()),
                     self.narrow.eq(ra[0] ^ ra[1]), self.total.eq(ra[:32] + rb)]
        m.submodules.mem = mem = memory.Memory(shape=32, depth=1024, init=[])
        wp, rp = mem.write_port(), mem.read_port(transparent_for=())
        m.d.comb += [wp.addr.eq(ra[:10] + rb[:10]), wp.data.eq(rb), wp.en.eq(ra[63]),
                     rp.addr.eq(rb[10:20]), self.read.eq(rp.data)]
        return m


@pytest.fixture(scope="module")
def netlist(tmp_path_factory):
    text = verilog.convert(Depths(), name="depths", emit_src=False, strip_internal_attrs=True)
    area = synthesize(text, "depths", "ecp5", cache_dir=tmp_path_factory.mktemp("synth"))
    return area.netlist


def _ending(paths, name):
    return [p for p in paths if p.end.lstrip("\\").startswith(name)]


def test_levels_and_carries_follow_the_construction(netlist):
    paths = worst_paths(netlist, "depths", count=100)
    wide, narrow, total = (_ending(paths, n) for n in ("wide", "narrow", "total"))
    assert wide and narrow and total
    assert wide[0].levels >= math.ceil(math.log(64, 4))          # 3
    assert narrow[0].levels == 1 and narrow[0].carries == 0
    assert 16 <= total[0].carries <= 17                          # 2 bits a cell, plus the top
    assert all(p[0].start.startswith(("r_a", "r_b")) for p in (wide, narrow, total))
    # the arrival is the path's own sum: a flip-flop's clock to Q, a routed net and a LUT a
    # level, then the route to the register and its setup
    lut_path = DELAYS["ff_clk_q"] + narrow[0].levels * (DELAYS["lut"] + route_delay(1))
    assert narrow[0].arrival_ns >= lut_path + route_delay(1) + DELAYS["ff_setup"] - 1e-6
    assert wide[0].arrival_ns > narrow[0].arrival_ns
    # worst first, each (start, end) register pair once, nets in order of arrival
    assert [p.arrival_ns for p in paths] == sorted((p.arrival_ns for p in paths), reverse=True)
    assert len({(p.start, p.end) for p in paths}) == len(paths)
    for p in paths:
        times = [t for _, t in p.nets]
        assert times == sorted(times) and p.nets[-1][1] <= p.arrival_ns


def test_every_flip_flop_input_is_an_endpoint(netlist):
    with open(netlist) as f:
        cells = json.load(f)["modules"]["depths"]["cells"]
    data_inputs = {(name, c["connections"]["DI"][0]) for name, c in cells.items()
                   if c["type"] == "TRELLIS_FF"}
    ends = list(endpoint_arrivals(netlist, "depths"))
    assert data_inputs and data_inputs <= {(cell, bit) for cell, bit, _ in ends}
    # the block RAM's write address, data and enable are endpoints too, its clocks are not
    brams = {name: c for name, c in cells.items() if c["type"] == "DP16KD"}
    ram_ends = {bit for cell, bit, _ in ends if cell in brams}
    addresses = {b for c in brams.values() for p, bits in c["connections"].items()
                 if p.startswith("AD") for b in bits if isinstance(b, int)}
    clocks = {b for c in brams.values() for p, bits in c["connections"].items()
              if p.startswith("CLK") for b in bits}
    assert brams and addresses <= ram_ends and not clocks & ram_ends
    assert all(t > 0 for _, _, t in ends)
    # the counts over thresholds are of the same endpoints
    over = endpoints_over(netlist, "depths", (0, 1, 2, 100))
    assert over[0] == len(ends) and over[100] == 0
    assert over[1] == sum(t > 1 for _, _, t in ends) >= over[2]


class Picked(wiring.Component):
    """Registered words and select, the ECP5 style of :class:`Mux4` between them and a
    register: a LUT4 level and a slice's PFUMX."""

    words: In(32)
    sel: In(2)
    out: Out(8)

    def elaborate(self, platform):  # noqa: ARG002 (Amaranth's fixed signature)
        m = Module()
        m.submodules.pick = pick = Mux4(8, style="ecp5")
        words, sel = Signal(32, name="r_words"), Signal(2, name="r_sel")
        m.d.sync += [words.eq(self.words), sel.eq(self.sel), self.out.eq(pick.out)]
        m.d.comb += [pick.data.as_value().eq(words), pick.sel.eq(sel)]
        return m


def test_a_pfumx_adds_its_delay_to_the_path_through_it(tmp_path):
    text = verilog.convert(Picked(), name="picked", emit_src=False, strip_internal_attrs=True)
    area = synthesize(text, "picked", "ecp5", cache_dir=tmp_path)
    assert area.cells.get("PFUMX") == 8
    out = _ending(worst_paths(area.netlist, "picked", count=100), "out")
    assert out and out[0].levels == 1
    # through a LUT4 and the PFUMX, or from the select to the PFUMX, the later
    through_lut = DELAYS["ff_clk_q"] + route_delay(1) + DELAYS["lut"] + DELAYS["pfumx"]
    through_sel = DELAYS["ff_clk_q"] + route_delay(8) + DELAYS["pfumx_sel"]
    want = max(through_lut, through_sel) + route_delay(1) + DELAYS["ff_setup"]
    assert out[0].arrival_ns >= want - 0.02


def test_luts_by_signal_count_every_lut4_once_by_what_it_feeds(netlist):
    with open(netlist) as f:
        cells = json.load(f)["modules"]["depths"]["cells"]
    luts = sum(c["type"] == "LUT4" for c in cells.values())
    groups = luts_by_signal(netlist, "depths")
    assert sum(groups.values()) == luts == sum(luts_by_signal(netlist, "depths", 1).values())
    # the 2-input XOR is one LUT4; the 64-input one 21 at least (16 + 4 + 1), most of them
    # named after it (ABC names a few after other nets of the design)
    assert groups.get("narrow") == 1 and groups.get("wide", 0) >= 16
    assert list(groups.values()) == sorted(groups.values(), reverse=True)


def test_bad_netlists_are_clear_errors(tmp_path):
    with pytest.raises(GpgpuError, match="cannot read the netlist"):
        worst_paths(tmp_path / "missing.json", "depths")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(GpgpuError, match="cannot read the netlist"):
        worst_paths(tmp_path / "bad.json", "depths")
    (tmp_path / "other.json").write_text(json.dumps({"modules": {"x": {}}}))
    with pytest.raises(GpgpuError, match="has no module 'depths'"):
        worst_paths(tmp_path / "other.json", "depths")
    with pytest.raises(GpgpuError, match="cannot read the netlist"):
        luts_by_signal(tmp_path / "missing.json", "depths")
