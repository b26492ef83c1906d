"""The longest register-to-register paths of a mapped ECP5 netlist, estimated before placement.

nextpnr reports one critical path per clock, after an hour of placing and routing the whole
compute unit; closing timing one path an hour is slow. :func:`worst_paths` reads the netlist
Yosys wrote for :func:`~gpgpu_hdl.synth.place_and_route` (``synth_ecp5``'s cells: ``LUT4``,
``CCU2C``, ``TRELLIS_FF``, ``TRELLIS_DPR16X4``, ``DP16KD``, ``MULT18X18D``) and gives, in
seconds, every timing endpoint's estimated arrival time and the worst paths with their named
nets, so that the paths over a budget can be cut together.

The estimate is a static sum along the combinational cells, with the delays of
:data:`DELAYS`: a cell's intrinsic delay (about ECP5 speed grade 6) and, for every net between
two cells, a routing delay that grows with the net's fanout (:func:`route_delay`); the carry
chain (``COUT`` to ``CIN``) is not routed. It knows nothing of placement, so it ranks paths by
their depth and fanout and does not predict nextpnr's figure: on the 4-lane unit it put first
the path nextpnr had routed as critical (21.6 ns estimated, 18.3 ns routed; docs/synth.md).

Typical use::

    area = synthesize(text, "compute_unit", "ecp5")
    for path in worst_paths(area.netlist, "compute_unit", count=20):
        print(path.arrival_ns, path.start, "->", path.end, path.levels)

:func:`luts_by_signal` reads the same netlist for where its LUT4s go, by the signals they
feed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import GpgpuError

__all__ = ["DELAYS", "TimingPath", "PathAnalysis", "route_delay", "endpoint_arrivals",
           "endpoints_over", "worst_paths", "luts_by_signal"]

#: intrinsic delays in ns (ECP5, speed 6, rounded): a LUT4 input to its output; a CCU2C data
#: input to its sum or to the carry out, the carry in to a sum or through the cell; a
#: flip-flop's clock to Q and its setup; a distributed RAM's read address to its data; a block
#: RAM's clock to its output, unregistered and through its output register (``REGMODE``
#: ``OUTREG``); a multiplier without registers, inputs to product; the setup of a block RAM's
#: or a multiplier's registered inputs; a slice's ``PFUMX`` from its two LUT4s' outputs and
#: from its select
DELAYS = {
    "lut": 0.45, "ccu_data_sum": 0.55, "ccu_data_cout": 0.50, "ccu_cin_sum": 0.35,
    "ccu_cin_cout": 0.06,
    "ff_clk_q": 0.40, "ff_setup": 0.10, "ff_ctrl_setup": 0.20,
    "dpram_read": 0.50, "dpram_setup": 0.20,
    "bram_clk_q": 3.50, "bram_clk_q_reg": 1.00, "bram_setup": 0.20,
    "mult": 4.00, "mult_clk_q": 0.60, "mult_setup": 0.20,
    "pfumx": 0.15, "pfumx_sel": 0.25,
}


def route_delay(fanout: int) -> float:
    """A routed net's delay in ns by its fanout: 0.85 for one load, about 1.3 for 16, 2.2 for a
    thousand (nextpnr routes a high-fanout enable across the chip)."""
    return min(2.5, 0.70 + 0.15 * math.log2(1 + max(fanout, 1)))


@dataclass(frozen=True)
class TimingPath:
    """One estimated path: where it starts (a register, a memory, an input port), where it
    ends, its arrival time at the end in ns, its LUT4 levels and carry cells, and the named
    nets along it (start first) with the arrival time at each."""

    arrival_ns: float
    start: str
    end: str
    levels: int
    carries: int
    nets: tuple[tuple[str, float], ...]


_PORT = re.compile(r"^([A-Z]+?)(\d*)$")
_GENERATED = re.compile(r"_(LUT4|TRELLIS_FF|TRELLIS_DPR16X4|CCU2C|DP16KD|MULT18X18D|PFUMX)_")


class _Graph:
    """The netlist's combinational graph: for every bit its driver, its fanout and a name."""

    def __init__(self, module: dict):
        self.driver: dict[int, tuple[str, str]] = {}      # bit -> (cell, port)
        self.fanout: dict[int, int] = {}
        self.cells = module["cells"]
        for name, cell in self.cells.items():
            for port, bits in cell["connections"].items():
                direction = cell["port_directions"].get(port)
                for bit in bits:
                    if not isinstance(bit, int):
                        continue
                    if direction == "output":
                        self.driver[bit] = (name, port)
                    else:
                        self.fanout[bit] = self.fanout.get(bit, 0) + 1
        self.name: dict[int, str] = {}
        for net, info in sorted(module["netnames"].items(),
                                key=lambda item: (_GENERATED.search(item[0]) is not None,
                                                  item[0].startswith(("$", "\\$")),
                                                  len(item[0]))):
            for i, bit in enumerate(info["bits"]):
                if isinstance(bit, int) and bit not in self.name:
                    self.name[bit] = net if len(info["bits"]) == 1 else f"{net}[{i}]"
        self.ports = {bit for port in module["ports"].values()
                      for bit in port["bits"] if isinstance(bit, int)}

    def bit(self, cell: str, port: str) -> int | None:
        bits = self.cells[cell]["connections"].get(port, [])
        return bits[0] if bits and isinstance(bits[0], int) else None


def _mult_registered(cell: dict) -> tuple[bool, bool]:
    p = cell.get("parameters", {})
    ins = all(str(p.get(f"REG_INPUT{x}_CLK", "NONE")).upper() != "NONE" for x in "AB")
    out = str(p.get("REG_OUTPUT_CLK", "NONE")).upper() != "NONE"
    return ins, out


class _Arrivals:
    """Arrival times of every bit (memoized, iterative: the chains are thousands deep)."""

    def __init__(self, graph: _Graph):
        self.g = graph
        self.at: dict[int, float] = {}
        self.via: dict[int, int | None] = {}   # the input bit the worst arrival came through

    def _inputs(self, bit: int) -> tuple[list[tuple[int, float]], float | None]:
        """The input bits of ``bit``'s driver with the delay each adds (route and cell), or
        the bit's own arrival if it starts a path."""
        g = self.g
        if bit not in g.driver:
            return [], 0.0                     # an input port or an undriven bit
        cell_name, port = g.driver[bit]
        cell = g.cells[cell_name]
        kind = cell["type"]
        conn = cell["connections"]

        def routed(b: int) -> float:
            return route_delay(g.fanout.get(b, 1))

        if kind == "LUT4":
            return [(b, routed(b) + DELAYS["lut"]) for p in "ABCD" for b in conn.get(p, [])
                    if isinstance(b, int)], None
        if kind == "CCU2C":
            # S0 from the first half's inputs, S1 from both halves' (the second through the
            # cell's inner carry), COUT from all; CIN through the chain, not routed
            half = {"S0": 0, "S1": 1}.get(port, 1)
            inner = DELAYS["ccu_cin_cout"]
            out = []
            for p in ("A", "B", "C", "D"):
                for i in range(half + 1):
                    d = DELAYS["ccu_data_cout"] if port == "COUT" else \
                        DELAYS["ccu_data_sum"] + inner * (half - i)
                    out += [(b, routed(b) + d) for b in conn.get(f"{p}{i}", [])
                            if isinstance(b, int)]
            d = DELAYS["ccu_cin_cout"] if port == "COUT" else DELAYS["ccu_cin_sum"] + inner * half
            out += [(b, d) for b in conn.get("CIN", []) if isinstance(b, int)]
            return out, None
        if kind == "PFUMX":
            # its two LUT4s are the slice's own (no route between them), its select routed
            return ([(b, DELAYS["pfumx"]) for p in ("ALUT", "BLUT") for b in conn.get(p, [])
                     if isinstance(b, int)]
                    + [(b, routed(b) + DELAYS["pfumx_sel"]) for b in conn.get("C0", [])
                       if isinstance(b, int)]), None
        if kind == "TRELLIS_DPR16X4" and port.startswith("DO"):
            return [(b, routed(b) + DELAYS["dpram_read"]) for b in conn.get("RAD", [])
                    if isinstance(b, int)], None
        if kind == "MULT18X18D":
            ins, out = _mult_registered(cell)
            if ins or out:
                return [], DELAYS["mult_clk_q"] + (0 if out else DELAYS["mult"])
            return [(b, routed(b) + DELAYS["mult"]) for p, bits in conn.items()
                    if _PORT.match(p) and _PORT.match(p).group(1) in ("A", "B")
                    for b in bits if isinstance(b, int)], None
        if kind == "DP16KD":
            side = port[2] if port.startswith("DO") else "A"
            registered = cell.get("parameters", {}).get(f"REGMODE_{side}") == "OUTREG"
            return [], DELAYS["bram_clk_q_reg" if registered else "bram_clk_q"]
        if kind == "TRELLIS_FF":
            return [], DELAYS["ff_clk_q"]
        return [], 0.0                         # anything else starts a path

    def of(self, bit: int) -> float:
        if bit in self.at:
            return self.at[bit]
        stack = [bit]
        pending: dict[int, list[tuple[int, float]]] = {}
        while stack:
            b = stack[-1]
            if b in self.at:
                stack.pop()
                continue
            if b not in pending:
                inputs, start = self._inputs(b)
                if start is not None:
                    self.at[b], self.via[b] = start, None
                    stack.pop()
                    continue
                pending[b] = inputs
                stack.extend(i for i, _ in inputs if i not in self.at and i not in pending)
                continue
            inputs = pending.pop(b)
            best, via = 0.0, None
            for i, d in inputs:
                t = self.at.get(i, 0.0) + d        # a loop (none in a good netlist) adds 0
                if t > best:
                    best, via = t, i
            self.at[b], self.via[b] = best, via
            stack.pop()
        return self.at[bit]


def _setup(cell: dict, port: str) -> str | None:
    """The setup delay (a :data:`DELAYS` name) of ``port`` of ``cell`` if it is a timing
    endpoint: a flip-flop's data, enable and reset; every input of a block RAM but its clocks;
    a distributed RAM's write side; a registered multiplier's operands."""
    kind = cell["type"]
    if cell["port_directions"].get(port) != "input":
        return None
    if kind == "TRELLIS_FF":
        return {"DI": "ff_setup", "CE": "ff_ctrl_setup", "LSR": "ff_ctrl_setup"}.get(port)
    if kind == "DP16KD":
        return None if port.startswith("CLK") else "bram_setup"
    if kind == "TRELLIS_DPR16X4":
        return "dpram_setup" if port in ("DI", "WAD", "WRE") else None
    if kind == "MULT18X18D" and _mult_registered(cell)[0]:
        m = _PORT.match(port)
        return "mult_setup" if m and m.group(1) in ("A", "B") else None
    return None


def _load(netlist: Path | str, top: str) -> dict:
    try:
        with open(netlist) as f:
            design = json.load(f)
    except (OSError, ValueError) as exc:
        raise GpgpuError(f"cannot read the netlist {netlist}: {exc}") from None
    module = design.get("modules", {}).get(top)
    if module is None:
        raise GpgpuError(f"the netlist {netlist} has no module {top!r}")
    return module


class PathAnalysis:
    """One netlist read and its endpoints' arrivals worked out once, for :meth:`worst` and
    :meth:`over` (the bench prints both; each reading of the 4-lane unit's netlist takes
    about ten seconds)."""

    def __init__(self, netlist: Path | str, top: str):
        self._graph = _Graph(_load(netlist, top))
        self._arrivals = _Arrivals(self._graph)
        #: every endpoint as ``(cell, input bit, arrival in ns with setup)``, worst first
        self.endpoints = sorted(_endpoints(self._graph, self._arrivals), key=lambda e: -e[2])

    def over(self, thresholds: tuple[float, ...] = (10, 12, 14, 16, 18, 20)
             ) -> dict[float, int]:
        """How many endpoints arrive later than each threshold (ns)."""
        return {th: sum(t > th for _, _, t in self.endpoints) for th in thresholds}

    def worst(self, count: int = 20) -> list[TimingPath]:
        """The ``count`` worst paths, one per pair of start and end register (see
        :func:`worst_paths`), worst first."""
        graph, arrivals = self._graph, self._arrivals
        seen: set[tuple[str, str]] = set()
        out: list[TimingPath] = []
        for cell, bit, arrival in self.endpoints:
            chain = [bit]
            while arrivals.via.get(chain[-1]) is not None:
                chain.append(arrivals.via[chain[-1]])
            chain.reverse()
            start = graph.name.get(chain[0], "?")
            if cell == "<port>":
                end = graph.name.get(bit, cell)
            else:
                q = graph.bit(cell, "Q")
                end = cell if q is None else graph.name.get(q, cell)
            key = (_base(start), _base(end))
            if key in seen:
                continue
            seen.add(key)
            kinds = [graph.cells[graph.driver[b][0]]["type"] for b in chain[1:]
                     if b in graph.driver]
            nets = tuple((graph.name.get(b, "?"), round(arrivals.at[b], 2)) for b in chain)
            out.append(TimingPath(round(arrival, 2), start, end, kinds.count("LUT4"),
                                  kinds.count("CCU2C"), nets))
            if len(out) == count:
                break
        return out


def endpoint_arrivals(netlist: Path | str, top: str) -> Iterator[tuple[str, int, float]]:
    """Every timing endpoint of ``top`` as ``(cell, input bit, arrival in ns with setup)``."""
    graph = _Graph(_load(netlist, top))
    yield from _endpoints(graph, _Arrivals(graph))


def endpoints_over(netlist: Path | str, top: str,
                   thresholds: tuple[float, ...] = (10, 12, 14, 16, 18, 20)) -> dict[float, int]:
    """How many endpoints of ``top`` arrive later than each threshold (ns): how much of the
    design a clock period leaves to cut, not only its worst path."""
    return PathAnalysis(netlist, top).over(thresholds)


def _endpoints(graph: _Graph, arrivals: _Arrivals) -> Iterator[tuple[str, int, float]]:
    for name, cell in graph.cells.items():
        for port, bits in cell["connections"].items():
            setup = _setup(cell, port)
            if setup is None:
                continue
            for bit in bits:
                if isinstance(bit, int):
                    t = arrivals.of(bit) + route_delay(graph.fanout.get(bit, 1))
                    yield name, bit, t + DELAYS[setup]
    for bit in graph.ports:                     # output ports
        if bit in graph.driver:
            yield "<port>", bit, arrivals.of(bit)


def _base(name: str) -> str:
    """A register's name without Yosys' suffixes and with its numbers (bit indices, wave slots,
    lanes) left out, to tell paths apart: ``w_busy3`` and ``w_busy5[0]`` are one register."""
    return re.sub(r"\d+", "#", _GENERATED.split(name)[0].lstrip("\\"))


def worst_paths(netlist: Path | str, top: str, count: int = 20) -> list[TimingPath]:
    """The ``count`` worst estimated paths of ``top``, one per pair of start and end register
    (a bus's bits are one register, and so are the copies of a register that differ only in a
    number: a wave slot's, a lane's), worst first."""
    return PathAnalysis(netlist, top).worst(count)


def luts_by_signal(netlist: Path | str, top: str, depth: int | None = None) -> dict[str, int]:
    """The LUT4s of ``top``'s flattened netlist counted by the signal each feeds, most first.

    Yosys names a LUT4's output after the named signal it was mapped for (``lsu.c_last``'s
    logic is ``lsu.c_last_LUT4_D_1_Z...``), so the name with the generated suffix, a bit
    index and Yosys' ``$NN`` taken off, and numbers (lanes, slots) written ``#``, groups a
    flattened unit's LUT4s by the logic they belong to: ``valu.lane#.s#_logic``,
    ``vgprs.bank#...``. ``depth`` keeps that many levels of the hierarchical name
    (``depth=1``: by top-level part). It splits what ``area_by_module`` cannot, the flattened
    figure itself, but only as well as the names go: a LUT4 that feeds several signals
    counts for the one it was named after."""
    graph = _Graph(_load(netlist, top))
    counts: dict[str, int] = {}
    for cell in graph.cells.values():
        if cell["type"] != "LUT4":
            continue
        bits = cell["connections"].get("Z", [])
        name = graph.name.get(bits[0], "?") if bits and isinstance(bits[0], int) else "?"
        name = _GENERATED.split(name.lstrip("\\"))[0]
        name = re.sub(r"\d+", "#", re.sub(r"\$\d+", "", re.sub(r"\[\d+\]$", "", name)))
        if depth is not None:
            name = ".".join(name.split(".")[:depth])
        counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
