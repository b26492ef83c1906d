"""A Python model of what the SoC does at its host port, for tests of the host side (the launch
driver, the board backend): the registers of docs/regmap.md with their documented behaviour,
the prefetch window as the only memory (as on a board), and a launch executed by the golden
model when ``CONTROL.start`` is written.

It reads the launch from the ``DISPATCH_*`` registers and global memory alone (the kernel's
``amd_kernel_code_t`` 256 bytes before ``DISPATCH_CODE_ADDRESS``, as the hardware dispatcher
takes it), so a driver that wrote a wrong register, base or window computes wrong results.
The counters hold the golden model's wave-instructions; ``cycles`` is a nominal figure
(instructions times passes), not a timing model.

:func:`board` puts it behind :class:`boards.bridge_model.BridgeModel`, as ``BoardSoc`` puts the
real SoC behind the bridge gateware.
"""

from __future__ import annotations

from dataclasses import dataclass

from boards.bridge_model import BridgeModel, Registers
from boards.top import profile_digest
from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.cu.core import TrapCause
from gpgpu_hdl.dispatch import Dispatch
from gpgpu_hdl.emu import Emulator, Memory, MemoryFault, Program, UnsupportedInstruction
from gpgpu_hdl.emu.memory import GLOBAL_BASE
from gpgpu_hdl.isa.codeobj import KernelCodeHeader
from gpgpu_hdl.soc.regmap import soc_register_map

__all__ = ["SocModel", "Injected", "board"]


@dataclass(frozen=True)
class Injected:
    """A trap the next launch ends with instead of running (cause, pc, instruction)."""

    cause: int
    pc: int = 0
    inst: int = 0


class SocModel:
    """The SoC's registers and launch behaviour; ``memory`` is the prefetch window's bytes
    (``bytearray``, shared with whoever serves the window). ``hang``: launches never finish
    until aborted."""

    def __init__(self, config: CuConfig, *, cus: int = 1, prefetch_bytes: int,
                 memory: bytearray | None = None) -> None:
        self.config = config
        self.rm = rm = soc_register_map(config, cus=cus, prefetch_bytes=prefetch_bytes)
        self.memory = memory if memory is not None else bytearray(prefetch_bytes)
        values = {reg.offset: reg.reset for reg in rm.registers}
        for rom in rm.roms:
            for i, word in enumerate(rom.words):
                values[rom.offset + 4 * i] = word
        self._shadow = dict(values)        # what the hardware drives, for read-only words
        self.registers = Registers(values, on_write=self._written)
        self.status = 0
        self.hang = False
        self.inject: Injected | None = None
        #: launches started, and their dispatch register values by name
        self.launches: list[dict[str, int]] = []

    # --- registers --------------------------------------------------------------------------

    def _off(self, name: str) -> int:
        return self.rm.offset(name)

    def get(self, name: str) -> int:
        return self.registers.values[self._off(name)]

    def _set(self, name: str, value: int) -> None:
        offset = self._off(name)
        self.registers.values[offset] = self._shadow[offset] = value & 0xFFFF_FFFF

    def _set64(self, name: str, value: int) -> None:
        self._set(f"{name}_LO", value)
        self._set(f"{name}_HI", value >> 32)

    def _bit(self, register: str, field: str) -> int:
        return self.rm.encode(register, **{field: 1})

    def _show_status(self) -> None:
        irq = self._bit("STATUS", "irq") if (self.status & self._bit("STATUS", "done")
                                              and self.get("CONTROL")
                                              & self._bit("CONTROL", "irq_enable")) else 0
        self._set("STATUS", self.status | irq)

    def _written(self, address: int, value: int) -> None:
        placed = self.rm.at(address)
        name = placed.name if hasattr(placed, "name") else None
        if name == "STATUS":        # done and mem_error are write-1-to-clear
            self.status &= ~(value & self.rm.encode("STATUS", done=1, mem_error=1))
        elif name == "CONTROL":     # start, abort and reset are pulses: they read 0
            self._set("CONTROL", value & self._bit("CONTROL", "irq_enable"))
            if value & self._bit("CONTROL", "reset"):
                self._soft_reset()
            elif value & self._bit("CONTROL", "abort"):
                if self.status & self._bit("STATUS", "busy"):
                    self._finish(trap=Injected(TrapCause.ABORT))
            elif value & self._bit("CONTROL", "start"):
                self._start()
        elif name is None or not placed.writable:    # a ROM or read-only register: no change
            self.registers.values[address] = self._shadow[address]
        self._show_status()

    # --- a launch ---------------------------------------------------------------------------

    def _soft_reset(self) -> None:
        self.status = 0
        for reg in self.rm.registers:
            if reg.name.startswith(("TRAP_", "COUNTERS_")) or reg.name == "MEM_ERROR_ADDR":
                self._set(reg.name, 0)

    def _start(self) -> None:
        d = {reg.name: self.registers.values[reg.offset] for reg in self.rm.registers
             if reg.name.startswith("DISPATCH_")}
        self.launches.append(d)
        self.status = self._bit("STATUS", "busy")
        for reg in self.rm.registers:
            if reg.name.startswith(("TRAP_", "COUNTERS_")) or reg.name == "MEM_ERROR_ADDR":
                self._set(reg.name, 0)
        if self.hang:
            return
        if self.inject is not None:
            trap, self.inject = self.inject, None
            self._finish(trap=trap)
            return
        self._finish(*self._execute(d))

    def _execute(self, d: dict[str, int]) -> tuple[int, Injected | None, int | None]:
        """Run the launch on the golden model over the window: (instructions, trap, failed
        address)."""
        size = len(self.memory)
        base = self.get("PREFETCH_BASE")
        mem = Memory(base + size - GLOBAL_BASE)
        mem.alloc(base + size - GLOBAL_BASE, 4)
        skip = GLOBAL_BASE - base
        mem.write(GLOBAL_BASE, bytes(self.memory[skip:]))
        code_address = d["DISPATCH_CODE_ADDRESS"]
        try:
            header = KernelCodeHeader.from_bytes(mem.read(code_address - 256, 256))
            code = mem.read(code_address, 4 * d["DISPATCH_CODE_DWORDS"])
            dispatch = Dispatch(header, code_address, d["DISPATCH_KERNARG_ADDRESS"],
                                d["DISPATCH_PACKET_ADDRESS"],
                                tuple(d[f"DISPATCH_GRID_{a}"] for a in "XYZ"),
                                tuple(d[f"DISPATCH_LOCAL_{a}"] for a in "XYZ"),
                                d["DISPATCH_LDS_BYTES"], d["DISPATCH_SCRATCH_ADDRESS"])
            stats = Emulator(mem).run(Program(code, code_address, "model"), dispatch)
        except UnsupportedInstruction:
            return 0, Injected(TrapCause.ILLEGAL), None
        except MemoryFault:         # beyond the window: the board's memory answers DECERR
            return 0, None, base + size
        finally:
            self.memory[skip:] = mem.read(GLOBAL_BASE, base + size - GLOBAL_BASE)
        return stats.instructions, None, None

    def _finish(self, instructions: int = 0, trap: Injected | None = None,
                failed: int | None = None) -> None:
        self._set64("COUNTERS_INSTRUCTIONS", instructions)
        self._set64("COUNTERS_CYCLES", instructions * self.config.passes)
        status = self._bit("STATUS", "done")
        if trap is not None:
            self._set("TRAP_CAUSE", trap.cause)
            self._set("TRAP_PC", trap.pc)
            self._set64("TRAP_INST", trap.inst)
            status |= self._bit("STATUS", "trap")
        if failed is not None:
            self._set("MEM_ERROR_ADDR", failed)
            status |= self._bit("STATUS", "mem_error")
        self.status = status
        self._show_status()


def board(config: CuConfig, memory_bytes: int, *, cu_hz: int = 25_000_000,
          bus_hz: int = 50_000_000, **kw) -> tuple[BridgeModel, SocModel]:
    """The bridge model in front of a :class:`SocModel` whose window is the board memory (as
    ``BoardSoc`` builds it); ``kw`` go to the bridge (``max_words``, ``profile``)."""
    soc = SocModel(config, prefetch_bytes=memory_bytes)
    (window,) = [w for w in soc.rm.windows if w.name == "prefetch"]
    kw.setdefault("profile", profile_digest(config))
    bridge = BridgeModel(soc.registers, memory_bytes, memory_base=window.offset, cu_hz=cu_hz,
                         bus_hz=bus_hz, **kw)
    soc.memory = bridge.memory
    return bridge, soc
