"""The ``"verilator"`` backend: launches run on the compute unit's RTL under Verilator/cocotb.

The device memory lives on the host (the same :class:`~gpgpu_hdl.emu.memory.Memory` the
emulator uses); each launch copies the used part into the simulated RAM of
:class:`~gpgpu_hdl.cu.harness.SimTop`, runs the dispatch to completion, and copies it back. The
Verilator model is built once per configuration and cached under ``build/verilator`` by the
hash of its Verilog.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..config import ConfigError, CuConfig
from ..dispatch import Dispatch
from ..emu import Memory
from ..emu.trace import per_wave
from ..cu.salu import CONDITIONAL_WRITES
from ..errors import GpgpuError
from ..isa.decoder import decode_one
from ..isa.disasm import format_instruction

__all__ = ["VerilatorBackend", "RtlTrap", "IllegalInstruction", "decode_trace",
           "compare_traces", "TraceMismatch"]

def _cause_text(cause: int) -> str:
    from ..cu.core import TrapCause
    return {TrapCause.ILLEGAL: "illegal instruction", TrapCause.S_TRAP: "s_trap",
            TrapCause.HALT: "s_sethalt", TrapCause.PC_RANGE: "PC outside the code",
            TrapCause.SGPR_RANGE: "SGPR index out of range",
            TrapCause.RESOURCES: "the workgroup does not fit the compute unit",
            TrapCause.ABORT: "aborted"}.get(cause, "trap")


def _trap_error(kernel: Any, cause: int, pc: int, inst: int, where: str) -> RtlTrap:
    """The exception for a trap record: the cause, the PC, where and the disassembly."""
    from ..cu.core import TrapCause
    words = [inst & 0xFFFFFFFF, inst >> 32]
    try:
        text = format_instruction(decode_one(b"".join(w.to_bytes(4, "little") for w in words)))
    except GpgpuError:
        text = f"{words[0]:#010x} {words[1]:#010x}"
    cls = IllegalInstruction if cause == TrapCause.ILLEGAL else RtlTrap
    return cls(f"kernel {kernel.name}: {_cause_text(cause)} at pc {pc:#x} ({where}): {text}",
               pc=int(pc))


class RtlTrap(GpgpuError):
    """The compute unit stopped a launch: a trap, a memory error or a timeout. ``pc`` is the
    byte offset of the trapping instruction in the kernel's code, when there is one."""

    def __init__(self, message: str, *, pc: int | None = None,
                 trace: list[dict] | None = None) -> None:
        super().__init__(message)
        self.pc = pc
        #: the commit records retired before the stop, when the launch was traced
        self.trace = trace


class IllegalInstruction(RtlTrap):
    """The kernel executed an instruction the compute unit was not built for."""


def decode_trace(records: list[int], loads: list[int] | None = None) -> list[dict]:
    """RTL commit records as dicts in the emulator's trace format (values after, see
    :mod:`gpgpu_hdl.emu.trace`); vector values are given for the lanes in ``exec`` only.

    A buffer load retires before its data lands; ``loads`` are the packed
    :data:`~gpgpu_hdl.cu.core.LoadTraceLayout` events that bring it, in the order they were
    written. Each wave slot's events belong to its loads in commit order, one per lane in
    ``exec`` and dword (an out-of-range lane's 0 is an event too). An event for a register the
    load does not write, or one left over after a slot's last load, goes into that record's
    ``"stray"`` list (``(register, lane, value)``), which :func:`compare_traces` reports.

    Fields are cut out of each packed record by the offsets of
    :data:`~gpgpu_hdl.cu.core.TraceLayout` (a record is over 9000 bits; going through
    ``Layout.from_bits`` costs milliseconds a record)."""
    from ..cu.core import TraceLayout
    from ..isa.decoder import SCALAR_NAMES

    scalars = _field_masks(TraceLayout, ("slot", "wave", "pc", "inst", "exec", "s_code",
                                         "s_count", "v_reg", "v_count", "v_late", "scc", "mode",
                                         "exec_after", "vcc_after"))
    group_at = TraceLayout["group"].offset
    s_at = TraceLayout["s_data"].offset
    v_at = TraceLayout["v_data"].offset
    lanes = TraceLayout["v_data"].shape.elem_shape.length
    landed = _landed_loads(loads or [])
    out = []
    last_load: dict[int, dict] = {}         # per wave slot, its latest load record
    for value in records:
        t = {n: (value >> off) & mask for n, (off, mask) in scalars.items()}
        rec: dict[str, Any] = {"wg": [(value >> (group_at + 32 * k)) & 0xFFFFFFFF
                                      for k in range(3)],
                               "wave": t["wave"], "pc": t["pc"],
                               "words": [t["inst"] & 0xFFFFFFFF, t["inst"] >> 32],
                               "exec": t["exec"], "scc": t["scc"], "mode": t["mode"],
                               "exec_after": t["exec_after"], "vcc_after": t["vcc_after"]}
        code = t["s_code"]
        rec["sgpr"] = {SCALAR_NAMES.get(code + k, f"s{code + k}"):
                       (value >> (s_at + 32 * k)) & 0xFFFFFFFF for k in range(t["s_count"])}
        vgpr = {}
        if t["v_count"]:
            nbits = 32 * lanes * t["v_count"]
            raw = ((value >> v_at) & ((1 << nbits) - 1)).to_bytes(nbits // 8, "little")
            words = np.frombuffer(raw, dtype="<u4").reshape(t["v_count"], lanes)
            for k in range(t["v_count"]):
                vgpr[f"v{t['v_reg'] + k}"] = words[k].tolist()
        rec["vgpr"] = vgpr
        if t["v_late"]:
            last_load[t["slot"]] = rec
            events = landed.get(t["slot"], [])
            for _ in range(t["exec"].bit_count() * t["v_count"]):
                if not events:
                    break           # the launch stopped before the data landed
                reg, lane, word = events.pop()
                if reg in vgpr:
                    vgpr[reg][lane] = word
                else:
                    rec.setdefault("stray", []).append((reg, lane, word))
        out.append(rec)
    for slot, events in landed.items():       # events no load of their slot claimed
        owner = last_load.get(slot, out[-1] if out else None)
        if events and owner is not None:
            owner.setdefault("stray", []).extend(reversed(events))
    return out


def _field_masks(layout: Any, names: Sequence[str]) -> dict[str, tuple[int, int]]:
    """(bit offset, mask) of each named field of a struct layout, to cut packed ints."""
    from amaranth.hdl import Shape
    return {n: (layout[n].offset, (1 << Shape.cast(layout[n].shape).width) - 1) for n in names}


def _landed_loads(loads: list[int]) -> dict[int, list[tuple[str, int, int]]]:
    """Load events per wave slot, as (register, lane, value), the first last (to pop)."""
    from ..cu.core import LoadTraceLayout

    at = _field_masks(LoadTraceLayout, ("slot", "reg", "lane", "value"))
    per_slot: dict[int, list[tuple[str, int, int]]] = {}
    for value in loads:
        f = {n: (value >> off) & mask for n, (off, mask) in at.items()}
        per_slot.setdefault(f["slot"], []).append((f"v{f['reg']}", f["lane"], f["value"]))
    for events in per_slot.values():
        events.reverse()
    return per_slot


class TraceMismatch(NamedTuple):
    """One difference between two commit traces; ``pc`` is None for whole-wave problems."""

    wave: tuple
    index: int | None
    pc: int | None
    text: str

    def __str__(self) -> str:
        return self.text


def compare_traces(emu: list[dict], rtl: list[dict], limit: int = 20) -> list[TraceMismatch]:
    """Differences between an emulator trace and an RTL trace, wave by wave, instruction by
    instruction (empty when they agree). Vector registers are compared on the lanes that ran
    (EXEC before the instruction); scalar destinations, EXEC and VCC after each instruction.
    A wave's comparison stops at its first differing instruction."""
    problems: list[TraceMismatch] = []
    ew, rw = per_wave(emu), per_wave(rtl)
    if set(ew) != set(rw):
        problems.append(TraceMismatch((), None, None, f"waves differ: emulator "
                                      f"{sorted(ew)[:4]}..., RTL {sorted(rw)[:4]}..."))
    for key in sorted(set(ew) & set(rw)):
        a, b = ew[key], rw[key]
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = _record_differences(x, y)
            if found:
                where = f"wave {key} instruction {i} (pc {x['pc']:#x} {x.get('op', '')})"
                problems += [TraceMismatch(key, i, x["pc"], f"{where}: {t}") for t in found]
                break
        else:
            if len(a) != len(b):
                problems.append(TraceMismatch(key, None, None, f"wave {key}: emulator "
                                              f"retired {len(a)} instructions, RTL {len(b)}"))
        if len(problems) >= limit:
            break
    return problems


def _last_pcs(records: list[dict] | None, show: int = 4) -> str:
    """Where the waves of a stopped launch were: the last pc each retired (traced runs)."""
    if not records:
        return ""
    last = {key: stream[-1]["pc"] for key, stream in per_wave(records).items()}
    shown = ", ".join(f"wave {k} at pc {pc:#x}" for k, pc in list(last.items())[-show:])
    return f"; last retired: {shown}"


def _mnemonic(record: dict) -> str:
    raw = b"".join(w.to_bytes(4, "little") for w in record["words"][:2])
    try:
        return decode_one(raw + bytes(8 - len(raw))).info.mnemonic
    except GpgpuError:
        return ""


def _record_differences(x: dict, y: dict) -> list[str]:
    """How RTL record ``y`` differs from emulator record ``x`` of the same instruction."""
    if x["pc"] != y["pc"]:
        return [f"RTL is at pc {y['pc']:#x}"]
    out = []
    lanes = x["exec"]
    if lanes != y["exec"]:
        out.append(f"EXEC before: emulator {lanes:#x} RTL {y['exec']:#x}")
    for reg, values in x.get("vgpr", {}).items():
        got = y["vgpr"].get(reg)
        if got is None:
            out.append(f"RTL did not write {reg}")
            continue
        bad = [n for n in range(64) if lanes >> n & 1 and values[n] != got[n]]
        if bad:
            n = bad[0]
            out.append(f"{reg} lane {n} emulator {values[n]:#x} RTL {got[n]:#x} "
                       f"({len(bad)} lanes differ)")
    for reg, value in x.get("sgpr", {}).items():
        if reg in ("exec_lo", "exec_hi", "vcc_lo", "vcc_hi"):
            full = y["exec_after"] if reg.startswith("exec") else y["vcc_after"]
            got = full & 0xFFFFFFFF if reg.endswith("lo") else full >> 32
        else:
            got = y["sgpr"].get(reg)
        if got is None:
            if not (y["scc"] == 0 and _mnemonic(x) in CONDITIONAL_WRITES):
                out.append(f"RTL did not write {reg}")
        elif got != value:
            out.append(f"{reg} emulator {value:#x} RTL {got:#x}")
    if "scc" in x and x["scc"] != y["scc"]:
        out.append(f"SCC emulator {x['scc']} RTL {y['scc']}")
    for reg, lane, value in y.get("stray", [])[:4]:
        out.append(f"RTL load data {value:#x} for {reg} lane {lane} matches no register of "
                   f"this wave's loads")
    return out


#: Verilator arguments of the compute unit's model (built with ``visibility="top"``, so that
#: Verilator may optimise everything below the harness's ports). On the 2-lane unit (2-core
#: machine, loaded): -O1 compiled in 23-52 s and simulated 36-92 thousand cycles/s;
#: -O0 with every signal public, as before, 53 s and 1.8 thousand cycles/s; -O2 88 s and no
#: faster than -O1. ``--output-split`` lets make compile the C++ files in parallel.
MODEL_ARGS: tuple[str, ...] = ("-CFLAGS", "-O1", "--output-split", "20000")


def _gateware_digest(*parameters: Any):
    """A hash standing for the Verilog a configuration converts to: the parameters and every
    source the gateware is generated from (the generator package but its runtime and
    simulation layers, and the instruction table), so a cached model is never stale."""
    import hashlib
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(repr(parameters).encode())
    for f in sorted(package.rglob("*")):
        rel = f.relative_to(package)
        if (f.suffix in (".py", ".tsv") and rel.parts[0] not in ("runtime", "sim")
                and "__pycache__" not in rel.parts):
            digest.update(str(rel).encode() + b"\0" + f.read_bytes())
    return digest


class VerilatorBackend:
    """Owns the device memory image and the (cached) Verilator build of one configuration."""

    def __init__(self, config: CuConfig | None = None, *, memory_limit: int = 1 << 21,
                 max_cycles: int = 20_000_000, mem_latency: int = 2,
                 build_root: Path | str = Path("build/verilator")) -> None:
        self.config = config if config is not None else CuConfig()
        self.memory = Memory(memory_limit)
        self.mem_words = memory_limit // 4
        self.max_cycles = max_cycles
        self.mem_latency = mem_latency
        self.build_root = Path(build_root)
        self._build = None

    def _model(self) -> tuple[str, Any, tuple, dict]:
        """The simulated top: its name, a function making it, the parameters that (with the
        gateware's sources) identify its Verilog, and the build options."""
        from ..cu.harness import SimTop
        return ("sim_top", lambda: SimTop(self.config, mem_words=self.mem_words,
                                          latency=self.mem_latency),
                (self.config.key(), self.mem_words, self.mem_latency),
                {"memories": ["memory.ram"], "clock": "clk"})

    def build(self):
        """Build (or reuse) the Verilator model; returns the helper's build handle."""
        if self._build is None:
            from amaranth.back import verilog

            from .. import __version__
            from ..sim.verilator import build

            name, make, params, options = self._model()

            def text() -> str:
                return verilog.convert(make(), name=name, emit_src=False,
                                       strip_internal_attrs=True)
            digest = _gateware_digest(*params, __version__)
            self._build = build(text, name, build_root=self.build_root, visibility="top",
                                extra_args=MODEL_ARGS, key=digest.hexdigest()[:16],
                                **options)
        return self._build

    def _check(self, kernel: Any, d: Dispatch) -> int:
        cfg = self.config
        info = kernel.info
        h = d.header
        code_bytes = len(info.code)
        if code_bytes > cfg.imem_bytes:
            raise ConfigError(f"kernel {kernel.name} has {code_bytes} bytes of code; the "
                              f"compute unit's instruction memory holds {cfg.imem_bytes}")
        cfg.check_kernel(kernel.name, h.workitem_vgpr_count, h.wavefront_sgpr_count,
                         d.lds_bytes)
        if d.waves_per_group > cfg.wave_slots:
            raise ConfigError(f"a workgroup of {int(np.prod(d.local))} work-items needs "
                              f"{d.waves_per_group} waves; the compute unit has "
                              f"{cfg.wave_slots} wave slots")
        lds = -(-d.lds_bytes // 4) * 4
        limit = cfg.wave_slots // d.waves_per_group
        if lds:
            limit = min(limit, cfg.lds_bytes // lds)
        if d.scratch_bytes:
            limit = 1          # scratch areas are per wave-in-group (shared ABI with emu)
        return max(1, min(limit, 15))

    def _fields(self, kernel: Any, d: Dispatch) -> dict:
        """The dispatch field values of a launch (checked to fit the unit first)."""
        from ..cu.core import dispatch_fields
        fields = dispatch_fields(d, len(kernel.info.code) // 4, self._check(kernel, d))
        fields["lds_bytes"] = -(-d.lds_bytes // 4) * 4
        return fields

    def _image(self) -> np.ndarray:
        """Device memory from address 0 to its top, as words for the simulated memory."""
        mem = self.memory
        if mem.top > self.mem_words * 4:
            raise ConfigError(f"device memory in use ({mem.top} bytes) exceeds the simulated "
                              f"RAM ({self.mem_words * 4} bytes)")
        image = np.zeros(-(-mem.top // 4), dtype=np.uint32)
        used = mem.data[:mem.top - mem.base]
        image[mem.base // 4:] = np.frombuffer(used.tobytes() + bytes(-len(used) % 4),
                                              dtype=np.uint32)
        return image

    def _write_back(self, words: Any) -> None:
        """Copy the simulated memory (words from address 0) back into device memory."""
        mem = self.memory
        data = np.asarray(words, dtype=np.uint32).view(np.uint8)
        mem.data[:mem.top - mem.base] = data[mem.base:mem.top]

    def launch(self, kernel: Any, d: Dispatch, trace: Any) -> Any:
        from ..cu.core import CountersLayout, DispatchLayout, TrapLayout
        from .device import KernelResult
        packed = DispatchLayout.const(self._fields(kernel, d)).as_value().value
        image = self._image()
        start = time.perf_counter()
        res = self.build().run("gpgpu_hdl.sim.cu_tb", {
            "memory": image, "dispatch": packed, "max_cycles": self.max_cycles,
            "trace": bool(trace), "readback": len(image)}, timeout=3600)
        seconds = time.perf_counter() - start
        self._write_back(res["memory"])
        counters = CountersLayout.from_bits(int(res["counters"]))
        trap = TrapLayout.from_bits(int(res["trap"]))
        records = decode_trace(res["trace"], res.get("loads")) if trace else None
        if res["timeout"]:
            raise RtlTrap(f"kernel {kernel.name} did not finish within {self.max_cycles} "
                          f"cycles ({counters.instructions} instructions retired"
                          f"{_last_pcs(records)})", trace=records)
        if res["mem_error"]:
            raise RtlTrap(f"kernel {kernel.name} accessed memory beyond the simulated RAM")
        if trap.cause:
            raise _trap_error(kernel, trap.cause, trap.pc, trap.inst,
                              f"wave slot {trap.slot}")
        result = KernelResult(kernel.name, counters.instructions, {}, {}, {}, 0, 0,
                              seconds, counters.cycles, records)
        result.extra.update({name: counters[name] for name, _ in CountersLayout})
        return result


#: Default size of the prefetch buffer for ``prefetch=True`` (16 of the LFE5U-85F's 208 EBR).
DEFAULT_PREFETCH_BYTES = 32768


class SocBackend(VerilatorBackend):
    """Launches on the whole SoC (:class:`~gpgpu_hdl.soc.top.SocTop`) under Verilator: the
    host drives the AXI4-Lite registers and global memory is an AXI RAM model with
    ``mem_latency`` bus cycles of latency (both cocotbext-axi, :mod:`gpgpu_hdl.sim.soc_tb`).

    The prefetch window covers the start of device memory (code, kernel arguments and the
    first buffers allocated); the host loads it over AXI4-Lite before each launch and reads it
    back after. ``cycles`` counts compute-unit cycles from start to done, not those transfers.
    """

    def __init__(self, config: CuConfig | None = None, *, cus: int = 1,
                 clocks: tuple[float, float] = (50, 50), prefetch: bool | int = False,
                 mem_latency: int = 10, **kwargs: Any) -> None:
        super().__init__(config, mem_latency=mem_latency, **kwargs)
        if not isinstance(cus, int) or isinstance(cus, bool) or not 1 <= cus <= 8:
            raise ConfigError(f"cus must be an integer from 1 to 8, not {cus!r}")
        try:
            cu_mhz, bus_mhz = (float(c) for c in clocks)
        except (TypeError, ValueError):
            raise ConfigError(f"clocks must be (cu_mhz, bus_mhz), not {clocks!r}") from None
        if not (0.1 <= cu_mhz <= 1000 and 0.1 <= bus_mhz <= 1000):
            raise ConfigError(f"clock frequencies must be 0.1 to 1000 MHz, not {clocks!r}")
        if prefetch is True:
            size = DEFAULT_PREFETCH_BYTES
        elif prefetch is False or prefetch is None:
            size = 0
        elif isinstance(prefetch, int) and (prefetch == 0 or (
                256 <= prefetch <= 1 << 18 and not prefetch & (prefetch - 1))):
            size = prefetch
        else:
            raise ConfigError(f"prefetch must be True, False or a power of two from 256 to "
                              f"262144 bytes, not {prefetch!r}")
        if not isinstance(mem_latency, int) or not 0 <= mem_latency <= 10_000:
            raise ConfigError(f"mem_latency must be 0 to 10000 bus cycles, not {mem_latency!r}")
        self.cus = cus
        #: scratch areas the runtime allocates per launch (one per compute unit)
        self.scratch_units = cus
        #: launches of the same dispatch, back to back in one simulation (tests use 2+)
        self.repeat = 1
        #: write CONTROL.abort this many ns after each start (tests of the abort path)
        self.abort_after_ns: float | None = None
        #: first run the launch once more and soft-reset it (CONTROL.reset) this many ns after
        #: its start; its register reads go to ``extra["reset_reads"]`` (tests of the reset)
        self.reset_after_ns: float | None = None
        self.clocks = (cu_mhz, bus_mhz)
        self.prefetch_bytes = size
        from ..soc.regmap import soc_register_map
        self.regmap = soc_register_map(self.config, cus=cus, prefetch_bytes=size)

    def _model(self) -> tuple[str, Any, tuple, dict]:
        from ..soc.top import SocTop
        return ("soc_top", lambda: SocTop(self.config, cus=self.cus,
                                          prefetch_bytes=self.prefetch_bytes),
                (self.config.key(), self.cus, self.prefetch_bytes), {})

    def _window(self, top: int) -> list[int] | None:
        """``[host offset, global base, words]`` of the prefetch window's used part."""
        from ..emu.memory import GLOBAL_BASE
        size = self.prefetch_bytes
        if not size:
            return None
        base = GLOBAL_BASE & ~(size - 1)
        words = max(0, min(size, top - base)) // 4
        return [self.regmap.offset("prefetch"), base, words] if words else None

    def launch(self, kernel: Any, d: Dispatch, trace: Any) -> Any:
        from ..soc.regmap import dispatch_writes
        from .device import KernelResult
        if trace:
            raise ConfigError("commit traces come from the bare compute unit: use "
                              "Device('verilator') without SoC arguments to trace")
        r = self.regmap
        fields = self._fields(kernel, d)
        image = self._image()
        window = self._window(4 * len(image))
        writes = [*dispatch_writes(r, fields)]
        writes.append((r.offset("PREFETCH_BASE"), window[1] if window else 0))
        # a kernel with scratch runs one workgroup at a time per unit (_check): one area each
        writes.append((r.offset("SCRATCH_STRIDE"), d.scratch_bytes))
        writes.append((r.offset("CONTROL"), r.encode("CONTROL", start=1, irq_enable=1)))
        names = ["STATUS", "TRAP_CAUSE", "TRAP_CU", "TRAP_SLOT", "TRAP_PC", "TRAP_INST_LO",
                 "TRAP_INST_HI", "MEM_ERROR_ADDR"]
        names += [reg.name for reg in r.registers if reg.name.startswith("COUNTERS_")]
        one = {"writes": writes, "window": window, "reads": [[n, r.offset(n)] for n in names],
               "clear": [r.offset("STATUS"), r.encode("STATUS", done=1, mem_error=1)]}
        if self.abort_after_ns is not None:
            one["abort"] = [r.offset("CONTROL"), r.encode("CONTROL", abort=1, irq_enable=1),
                            self.abort_after_ns]
        launches = [one] * self.repeat
        if self.reset_after_ns is not None:
            launches.insert(0, {**one, "clear": None, "idle": [r.offset("STATUS"),
                                                               r.encode("STATUS", busy=1)],
                                "abort": [r.offset("CONTROL"),
                                          r.encode("CONTROL", reset=1, irq_enable=1),
                                          self.reset_after_ns]})
        start = time.perf_counter()
        res = self._run(image, launches=launches, readback=len(image))
        seconds = time.perf_counter() - start
        self._write_back(res["memory"])
        first = len(launches) - self.repeat
        if first and res["launches"][0]["timeout"]:
            raise RtlTrap(f"kernel {kernel.name}: the soft reset left the SoC busy")
        runs = [self._outcome(kernel, got) for got in res["launches"][first:]]
        counters, got = runs[-1]
        result = KernelResult(kernel.name, counters["instructions"], {}, {}, {}, 0, 0,
                              seconds, counters["cycles"], None)
        result.extra.update(counters)
        result.extra["host_ns"] = got["host_ns"]
        result.extra["bursts"] = got["bursts"]
        result.extra["launches"] = [c for c, _ in runs]
        if first:
            result.extra["reset_reads"] = res["launches"][0]
        return result

    def _run(self, image: np.ndarray, **params: Any) -> dict:
        return self.build().run("gpgpu_hdl.sim.soc_tb", {
            "image": image, "ram_bytes": self.mem_words * 4, "mem_latency": self.mem_latency,
            "clocks": list(self.clocks), "max_cycles": self.max_cycles, **params},
            timeout=3600)

    def probe(self, names: list[str], *, rom: str | None = None) -> dict:
        """Read registers (and a ROM, as ``"rom"``) over the host bus right after reset."""
        r = self.regmap
        params: dict[str, Any] = {"launches": [], "readback": 0,
                                  "reads": [[n, r.offset(n)] for n in names]}
        if rom is not None:
            words = len(next(x for x in r.roms if x.name == rom).words)
            params["rom"] = [r.offset(rom), words]
        res = self._run(np.zeros(1, dtype=np.uint32), **params)
        out = dict(res["reads"])
        if rom is not None:
            out["rom"] = [int(w) for w in res["rom"]]
        return out

    def _outcome(self, kernel: Any, got: dict) -> tuple[dict, dict]:
        """The counters of one launch's register reads, or the error it ended with."""
        from ..cu.core import CountersLayout
        r = self.regmap
        if got["timeout"]:          # the testbench read no registers then
            raise RtlTrap(f"kernel {kernel.name} did not finish within {self.max_cycles} "
                          f"compute-unit cycles")
        counters = {}
        for name, _ in CountersLayout:
            counters[name] = (got[f"COUNTERS_{name.upper()}_LO"]
                              | got[f"COUNTERS_{name.upper()}_HI"] << 32)
        status = r.decode("STATUS", got["STATUS"])
        if status["mem_error"]:
            raise RtlTrap(f"kernel {kernel.name}: a global memory access failed (AXI error "
                          f"response) at address {got['MEM_ERROR_ADDR']:#x}")
        if got["TRAP_CAUSE"]:
            raise _trap_error(kernel, got["TRAP_CAUSE"], got["TRAP_PC"],
                              got["TRAP_INST_LO"] | got["TRAP_INST_HI"] << 32,
                              f"compute unit {got['TRAP_CU']}, wave slot {got['TRAP_SLOT']}")
        return counters, got
