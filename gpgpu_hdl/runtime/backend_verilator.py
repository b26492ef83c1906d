"""The ``"verilator"`` backend: launches run on the compute unit's RTL under Verilator/cocotb.

The device memory lives on the host (the same :class:`~gpgpu_hdl.emu.memory.Memory` the
emulator uses); each launch copies the used part into the simulated RAM of
:class:`~gpgpu_hdl.cu.harness.SimTop`, runs the dispatch to completion, and copies it back. The
Verilator model is built once per configuration and cached under ``build/verilator`` by the
hash of its Verilog.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from ..config import ConfigError, CuConfig
from ..dispatch import Dispatch
from ..emu import Memory
from ..emu.trace import per_wave
from ..errors import GpgpuError
from ..isa.decoder import decode_one
from ..isa.disasm import format_instruction

__all__ = ["VerilatorBackend", "RtlTrap", "IllegalInstruction", "decode_trace"]

def _cause_text(cause: int) -> str:
    from ..cu.core import TrapCause
    return {TrapCause.ILLEGAL: "illegal instruction", TrapCause.S_TRAP: "s_trap",
            TrapCause.HALT: "s_sethalt", TrapCause.PC_RANGE: "PC outside the code",
            TrapCause.SGPR_RANGE: "SGPR index out of range",
            TrapCause.RESOURCES: "the workgroup does not fit the compute unit"}.get(cause, "trap")


class RtlTrap(GpgpuError):
    """The compute unit stopped a launch: a trap, a memory error or a timeout."""


class IllegalInstruction(RtlTrap):
    """The kernel executed an instruction the compute unit was not built for."""


def decode_trace(records: list[int]) -> list[dict]:
    """RTL commit records as dicts in the emulator's trace format (values after, see
    :mod:`gpgpu_hdl.emu.trace`); vector values are given for the lanes in ``exec`` only."""
    from ..cu.core import TraceLayout
    from ..emu.wave import SCALAR_NAMES
    out = []
    for value in records:
        t = TraceLayout.from_bits(value)
        rec: dict[str, Any] = {"wg": list(t.group), "wave": t.wave, "pc": t.pc,
                               "words": [t.inst & 0xFFFFFFFF, t.inst >> 32],
                               "exec": t.exec, "scc": t.scc, "mode": t.mode,
                               "exec_after": t.exec_after, "vcc_after": t.vcc_after}
        rec["sgpr"] = {SCALAR_NAMES.get(t.s_code + k, f"s{t.s_code + k}"): t.s_data[k]
                       for k in range(t.s_count)}
        rec["vgpr"] = {f"v{t.v_reg + k}": list(t.v_data[k]) for k in range(t.v_count)}
        out.append(rec)
    return out


def compare_traces(emu: list[dict], rtl: list[dict]) -> list[str]:
    """Differences between an emulator trace and an RTL trace, wave by wave, instruction by
    instruction (empty when they agree). Vector registers are compared on the lanes that ran
    (EXEC before the instruction); scalar destinations, EXEC and VCC after each instruction."""
    problems = []
    ew, rw = per_wave(emu), per_wave(rtl)
    if set(ew) != set(rw):
        problems.append(f"waves differ: emulator {sorted(ew)[:4]}..., RTL {sorted(rw)[:4]}...")
    for key in sorted(set(ew) & set(rw)):
        a, b = ew[key], rw[key]
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            where = f"wave {key} instruction {i} (pc {x['pc']:#x} {x.get('op', '')})"
            if x["pc"] != y["pc"]:
                problems.append(f"{where}: RTL is at pc {y['pc']:#x}")
                break
            lanes = x["exec"]
            for reg, values in x.get("vgpr", {}).items():
                got = y["vgpr"].get(reg)
                if got is None:
                    problems.append(f"{where}: RTL did not write {reg}")
                    continue
                bad = [n for n in range(64) if lanes >> n & 1 and values[n] != got[n]]
                if bad:
                    n = bad[0]
                    problems.append(f"{where}: {reg} lane {n} emulator {values[n]:#x} "
                                    f"RTL {got[n]:#x} ({len(bad)} lanes differ)")
            for reg, value in x.get("sgpr", {}).items():
                if reg in ("exec_lo", "exec_hi", "vcc_lo", "vcc_hi"):
                    full = y["exec_after"] if reg.startswith("exec") else y["vcc_after"]
                    got = full & 0xFFFFFFFF if reg.endswith("lo") else full >> 32
                else:
                    got = y["sgpr"].get(reg)
                if got is not None and got != value:
                    problems.append(f"{where}: {reg} emulator {value:#x} RTL {got:#x}")
                elif got is None:
                    problems.append(f"{where}: RTL did not write {reg}")
            if "scc" in x and x["scc"] != y["scc"]:
                problems.append(f"{where}: SCC emulator {x['scc']} RTL {y['scc']}")
            if len(problems) > 20:
                return problems
        if len(a) != len(b):
            problems.append(f"wave {key}: emulator retired {len(a)} instructions, RTL {len(b)}")
    return problems


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

    def build(self):
        """Build (or reuse) the Verilator model; returns the helper's build handle."""
        if self._build is None:
            import hashlib

            from amaranth.back import verilog

            from .. import __version__
            from ..cu.harness import SimTop
            from ..sim.verilator import build

            def text() -> str:
                top = SimTop(self.config, mem_words=self.mem_words, latency=self.mem_latency)
                return verilog.convert(top, name="sim_top", emit_src=False,
                                       strip_internal_attrs=True)
            # the generator's sources and the configuration identify the Verilog; -O0: the
            # C++ of the full unit takes over 10 minutes to compile at -O1, 100 s at -O0
            src = Path(__file__).resolve().parent.parent / "cu"
            digest = hashlib.sha256(repr((self.config, self.mem_words, self.mem_latency,
                                          __version__)).encode())
            for f in sorted(src.glob("*.py")) + sorted((src.parent / "isa").glob("*.tsv")):
                digest.update(f.read_bytes())
            self._build = build(text, "sim_top", build_root=self.build_root,
                                memories=["memory.ram"], clock="clk",
                                extra_args=("-CFLAGS", "-O0"),
                                key=digest.hexdigest()[:16])
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

    def launch(self, kernel: Any, d: Dispatch, trace: Any) -> Any:
        from ..cu.core import CountersLayout, DispatchLayout, TrapCause, TrapLayout
        from ..cu.core import dispatch_fields
        from .device import KernelResult
        group_limit = self._check(kernel, d)
        fields = dispatch_fields(d, len(kernel.info.code) // 4, group_limit)
        fields["lds_bytes"] = -(-d.lds_bytes // 4) * 4
        packed = DispatchLayout.const(fields).as_value().value
        mem = self.memory
        top = mem.top
        if top > self.mem_words * 4:
            raise ConfigError(f"device memory in use ({top} bytes) exceeds the simulated "
                              f"RAM ({self.mem_words * 4} bytes)")
        image = np.zeros(-(-top // 4), dtype=np.uint32)
        used = mem.data[:top - mem.base]
        image[mem.base // 4:] = np.frombuffer(used.tobytes() + bytes(-len(used) % 4),
                                              dtype=np.uint32)
        start = time.perf_counter()
        res = self.build().run("gpgpu_hdl.sim.cu_tb", {
            "memory": image, "dispatch": packed, "max_cycles": self.max_cycles,
            "trace": bool(trace), "readback": len(image)}, timeout=3600)
        seconds = time.perf_counter() - start
        words = np.asarray(res["memory"], dtype=np.uint32)
        mem.data[:top - mem.base] = words.view(np.uint8)[mem.base:top]
        counters = CountersLayout.from_bits(int(res["counters"]))
        trap = TrapLayout.from_bits(int(res["trap"]))
        if res["timeout"]:
            raise RtlTrap(f"kernel {kernel.name} did not finish within {self.max_cycles} "
                          f"cycles")
        if res["mem_error"]:
            raise RtlTrap(f"kernel {kernel.name} accessed memory beyond the simulated RAM")
        if trap.cause:
            words_ = [trap.inst & 0xFFFFFFFF, trap.inst >> 32]
            raw = b"".join(w.to_bytes(4, "little") for w in words_)
            try:
                text = format_instruction(decode_one(raw))
            except GpgpuError:
                text = f"{words_[0]:#010x} {words_[1]:#010x}"
            cls = IllegalInstruction if trap.cause == TrapCause.ILLEGAL else RtlTrap
            raise cls(f"kernel {kernel.name}: {_cause_text(trap.cause)} at pc "
                      f"{trap.pc:#x} (wave slot {trap.slot}): {text}")
        records = decode_trace(res["trace"]) if trace else None
        result = KernelResult(kernel.name, counters.instructions, {}, {}, {}, 0, 0,
                              seconds, counters.cycles, records)
        result.extra.update({name: counters[name] for name, _ in CountersLayout})
        return result
