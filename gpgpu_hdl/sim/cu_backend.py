"""The bare compute unit under Verilator: ``Device("verilator")`` launches run on its RTL.

The device memory lives on the host (the same :class:`~gpgpu_hdl.emu.memory.Memory` the
emulator uses); each launch copies the used part into the simulated RAM of
:class:`~gpgpu_hdl.sim.harness.SimTop`, runs the dispatch to completion with the testbench
:data:`CU_TESTBENCH`, and copies it back. The Verilator model is built once per configuration
and cached under ``build/verilator`` by the hash of its sources.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from ..config import ConfigError, CuConfig
from ..dispatch import Dispatch, dispatch_fields
from ..emu import Memory
from ..errors import GpgpuError
from ..isa.decoder import decode_one
from ..isa.disasm import format_instruction
from ..runtime.errors import IllegalInstruction, RtlTrap
from ..runtime.result import KernelResult
from .trace import decode_trace, last_pcs

__all__ = ["VerilatorBackend", "trap_error", "group_limit", "launch_fields", "CU_TESTBENCH",
           "MODEL_ARGS"]

#: the cocotb test module that runs one launch on the bare unit (``cocotb_tests/cu_tb.py``)
CU_TESTBENCH = "cocotb_tests.cu_tb"

_HARNESS = Path("sim", "harness.py")
#: parts of the package above the gateware (host side, tools): they never change its Verilog
_NOT_GATEWARE = frozenset({"runtime", "sim", "fuzz", "cli.py", "cliutil.py", "__main__.py"})


def _cause_text(cause: int) -> str:
    from ..cu.core import TrapCause
    return {TrapCause.ILLEGAL: "illegal instruction", TrapCause.S_TRAP: "s_trap",
            TrapCause.HALT: "s_sethalt", TrapCause.PC_RANGE: "PC outside the code",
            TrapCause.SGPR_RANGE: "SGPR index out of range",
            TrapCause.RESOURCES: "the workgroup does not fit the compute unit",
            TrapCause.ABORT: "aborted",
            TrapCause.MEM_RANGE: "an address beyond the 4 GiB physical memory"}.get(cause, "trap")


def trap_error(kernel: Any, cause: int, pc: int, inst: int, where: str) -> RtlTrap:
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


def group_limit(config: CuConfig, kernel: Any, d: Dispatch) -> int:
    """How many workgroups of launch ``d`` of ``kernel`` a unit of ``config`` runs at once;
    :class:`ConfigError` when the kernel does not fit the unit."""
    info = kernel.info
    h = d.header
    code_bytes = len(info.code)
    if code_bytes > config.imem_bytes:
        raise ConfigError(f"kernel {kernel.name} has {code_bytes} bytes of code; the "
                          f"compute unit's instruction memory holds {config.imem_bytes}")
    config.check_kernel(kernel.name, h.workitem_vgpr_count, h.wavefront_sgpr_count,
                     d.lds_bytes)
    if d.waves_per_group > config.wave_slots:
        raise ConfigError(f"a workgroup of {int(np.prod(d.local))} work-items needs "
                          f"{d.waves_per_group} waves; the compute unit has "
                          f"{config.wave_slots} wave slots")
    lds = -(-d.lds_bytes // 4) * 4
    limit = config.wave_slots // d.waves_per_group
    if lds:
        limit = min(limit, config.lds_bytes // lds)
    if d.scratch_bytes:
        limit = 1          # scratch areas are per wave-in-group (shared ABI with emu)
    return max(1, min(limit, 15))


def launch_fields(config: CuConfig, kernel: Any, d: Dispatch) -> dict:
    """The dispatch field values of launch ``d`` of ``kernel`` on a unit of ``config`` (the
    :data:`~gpgpu_hdl.cu.core.DispatchLayout` fields, checked to fit the unit first)."""
    fields = dispatch_fields(d, len(kernel.info.code) // 4, group_limit(config, kernel, d))
    fields["lds_bytes"] = -(-d.lds_bytes // 4) * 4
    return fields


#: Verilator arguments of the compute unit's model (built with ``visibility="top"``, so that
#: Verilator may optimise everything below the harness's ports). On the 2-lane unit (2-core
#: machine, loaded): -O1 compiled in 23-52 s and simulated 36-92 thousand cycles/s;
#: -O0 with every signal public, as before, 53 s and 1.8 thousand cycles/s; -O2 88 s and no
#: faster than -O1. ``--output-split`` lets make compile the C++ files in parallel.
MODEL_ARGS: tuple[str, ...] = ("-CFLAGS", "-O1", "--output-split", "20000")


def _gateware_digest(*parameters: Any):
    """A hash standing for the Verilog a configuration converts to: the parameters and every
    source the gateware is generated from (the generator package but its runtime, simulation,
    fuzzing and command-line layers, with the simulation harness, and the instruction table),
    so a cached model is never stale."""
    import hashlib
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(repr(parameters).encode())
    for f in sorted(package.rglob("*")):
        rel = f.relative_to(package)
        gateware = rel.parts[0] not in _NOT_GATEWARE or rel == _HARNESS
        if f.suffix in (".py", ".tsv") and gateware and "__pycache__" not in rel.parts:
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
        from .harness import SimTop
        return ("sim_top", lambda: SimTop(self.config, mem_words=self.mem_words,
                                          latency=self.mem_latency),
                (self.config.key(), self.mem_words, self.mem_latency),
                {"memories": ["memory.ram"], "clock": "clk"})

    def build(self):
        """Build (or reuse) the Verilator model; returns the helper's build handle."""
        if self._build is None:
            from .. import __version__
            from .verilator import build
            from .verilog_edit import sim_verilog

            name, make, params, options = self._model()

            def text() -> str:
                return sim_verilog(make(), name)
            digest = _gateware_digest(*params, __version__)
            self._build = build(text, name, build_root=self.build_root, visibility="top",
                                extra_args=MODEL_ARGS, key=digest.hexdigest()[:16],
                                **options)
        return self._build

    def _check(self, kernel: Any, d: Dispatch) -> int:
        return group_limit(self.config, kernel, d)

    def _fields(self, kernel: Any, d: Dispatch) -> dict:
        """The dispatch field values of a launch (checked to fit the unit first)."""
        return launch_fields(self.config, kernel, d)

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
        packed = DispatchLayout.const(self._fields(kernel, d)).as_value().value
        image = self._image()
        start = time.perf_counter()
        res = self.build().run(CU_TESTBENCH, {
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
                          f"{last_pcs(records)})", trace=records)
        if res["mem_error"]:
            raise RtlTrap(f"kernel {kernel.name} accessed memory beyond the simulated RAM")
        if trap.cause:
            raise trap_error(kernel, trap.cause, trap.pc, trap.inst,
                              f"wave slot {trap.slot}")
        result = KernelResult(kernel.name, counters.instructions, {}, {}, {}, 0, 0,
                              seconds, counters.cycles, records)
        result.extra.update({name: counters[name] for name, _ in CountersLayout})
        return result
