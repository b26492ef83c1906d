"""The ``"emu"`` backend: launches run on the golden-model emulator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..dispatch import Dispatch
from ..emu import CommitTrace, Emulator, Memory, Program
from ..emu.machine import MAX_INSTRUCTIONS
from .result import KernelResult

__all__ = ["EmuBackend", "open_emu"]


def open_emu(*, memory_limit: int | None = None, max_instructions: int | None = None,
             check_bounds: bool = False, **_timing: Any) -> EmuBackend:
    """The backend of ``Device("emu", ...)``: 1 GiB of device memory unless ``memory_limit``
    says otherwise, every access checked against the allocations with ``check_bounds``. The
    options that describe simulated hardware (``config``, ``max_cycles``, ``mem_latency``)
    mean nothing to the emulator, which has no timing, and are ignored."""
    return EmuBackend(memory_limit or 1 << 30, max_instructions, check_bounds=check_bounds)


class EmuBackend:
    """Owns the device memory and one compiled :class:`Program` per kernel."""

    def __init__(self, memory_limit: int, max_instructions: int | None, *,
                 check_bounds: bool = False) -> None:
        self.memory = Memory(memory_limit, check_bounds=check_bounds)
        self.emulator = Emulator(self.memory, max_instructions or MAX_INSTRUCTIONS)

    def launch(self, kernel: Any, d: Dispatch, trace: Any) -> Any:
        if kernel._compiled is None:
            prog = kernel.program
            start = kernel.info.code_offset
            code = prog.text_image[start:start + len(kernel.info.code)]
            text_base = kernel.code_address - start
            callees = [(text_base + f.offset, prog.text_image[f.offset:f.offset + f.size])
                       for f in prog.code.functions]
            kernel._compiled = Program(code, kernel.code_address,
                                       f"{Path(prog.path).name}:{kernel.name}", callees)
        recorder = None
        if trace is True:
            recorder = CommitTrace()
        elif trace:
            recorder = CommitTrace(trace)
        try:
            stats = self.emulator.run(kernel._compiled, d, recorder)
        finally:
            if recorder is not None:
                recorder.close()
        return KernelResult(kernel.name, stats.instructions, stats.by_class, stats.by_unit,
                            stats.by_mnemonic, stats.workgroups, stats.waves, stats.seconds,
                            None, recorder)
