"""The host API: devices, buffers, loaded code objects and kernel calls.

Shaped like pyopencl::

    dev = Device("emu")
    prog = dev.load("examples/kernels/vecadd.bin")
    a = dev.array(np.arange(256, dtype=np.int32))
    res = prog.vecadd(a, b, c, np.int32(256), global_size=(256,), local_size=(64,))
    out = c.numpy()

A kernel call lays out the kernarg segment, builds the HSA dispatch packet and a
:class:`~gpgpu_hdl.dispatch.Dispatch`, and hands it to the device's backend.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..config import CuConfig
from ..dispatch import Dispatch, dispatch_packet
from ..errors import CodeObjectError
from ..isa.codeobj import CodeObject
from ..isa.codeobj import Kernel as KernelInfo
from .backends import BACKENDS, open_backend
from .errors import ArgumentError, BackendError, NDRangeError, UnknownKernelError
from .kernargs import layout_args, scalar_size_align
from .result import KernelResult

__all__ = ["Device", "Buffer", "LocalMemory", "LoadedProgram", "Kernel"]


@dataclass(frozen=True)
class LocalMemory:
    """A ``__local`` pointer argument with ``nbytes`` of dynamic LDS behind it."""

    nbytes: int

    def __post_init__(self) -> None:
        if not isinstance(self.nbytes, int | np.integer) or self.nbytes <= 0:
            raise ArgumentError(f"LocalMemory needs a positive byte count, not {self.nbytes!r}")


class Buffer:
    """A device buffer holding a numpy array's bytes (created by :meth:`Device.array`)."""

    def __init__(self, device: Device, address: int, shape: tuple[int, ...],
                 dtype: np.dtype) -> None:
        self.device = device
        self.address = address
        self.shape = shape
        self.dtype = dtype

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def numpy(self) -> np.ndarray:
        """A copy of the buffer's contents with the dtype and shape it was created with."""
        raw = bytearray(self.device.memory.read(self.address, self.nbytes))
        # a view of fresh bytes, not .copy(): that would drop a struct dtype's padding bytes
        return np.frombuffer(raw, dtype=self.dtype).reshape(self.shape)

    get = numpy

    def set(self, values: np.ndarray) -> None:
        """Overwrite the buffer with ``values`` (same number of bytes)."""
        data = np.ascontiguousarray(values, dtype=self.dtype)
        if data.nbytes != self.nbytes:
            raise ArgumentError(f"buffer holds {self.nbytes} bytes, the new data {data.nbytes}")
        self.device.memory.write(self.address, data)

    def __repr__(self) -> str:
        return f"<Buffer {self.dtype}{list(self.shape)} at {self.address:#x}>"


def _buffer_label(dtype: Any, shape: tuple[int, ...]) -> str:
    return f"a buffer of {np.dtype(dtype)}[{', '.join(map(str, shape))}]"


def _dims(value: Any, what: str) -> tuple[int, ...]:
    if isinstance(value, int | np.integer):
        value = (value,)
    try:
        dims = tuple(int(v) for v in value)
    except (TypeError, ValueError):
        raise NDRangeError(f"{what} must be 1 to 3 integers, not {value!r}") from None
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims) or any(
            int(v) != v for v in value):
        raise NDRangeError(f"{what} must be 1 to 3 positive integers, not {value!r}")
    return dims


class Kernel:
    """A kernel of a loaded program; call it with the kernel's arguments."""

    def __init__(self, program: LoadedProgram, info: KernelInfo, code_address: int) -> None:
        self.program = program
        self.info = info
        self.name = info.name
        self.code_address = code_address
        self._compiled: Any = None

    def _marshal(self, args: tuple) -> tuple[list[tuple[str, int, int]], list[Any]]:
        kinds, values = [], []
        for i, a in enumerate(args):
            if isinstance(a, Buffer):
                if a.device is not self.program.device:
                    raise ArgumentError(f"{self.name}: argument {i} is a buffer of another "
                                        f"device")
                kinds.append(("global", 8, 8))
                values.append(a.address.to_bytes(8, "little"))
            elif isinstance(a, LocalMemory):
                kinds.append(("local", 4, 4))
                values.append(a)
            elif isinstance(a, np.generic | np.ndarray) and np.ndim(a) == 0:
                size, align = scalar_size_align(a)
                raw = np.asarray(a).tobytes()
                kinds.append(("value", size, align))
                values.append(raw + bytes(size - len(raw)))
            else:
                hint = (" (pass numpy scalars such as np.int32(5) or np.float32(1.5), so the "
                        "size is explicit)" if isinstance(a, int | float | bool) else "")
                raise ArgumentError(f"{self.name}: argument {i} has unsupported type "
                                    f"{type(a).__name__}{hint}")
        return kinds, values

    def __call__(self, *args: Any, global_size: Any, local_size: Any = None,
                 global_offset: Any = None, trace: Any = None) -> KernelResult:
        """Launch the kernel over ``global_size`` work-items in groups of ``local_size``.

        ``trace``: ``True`` to collect the commit trace in ``result.trace``, or a path to
        write it as JSON lines.
        """
        header = self.info.header
        gdims = _dims(global_size, "global_size")
        ldims = _dims(local_size, "local_size") if local_size is not None else \
            (math.gcd(gdims[0], 64),) + (1,) * (len(gdims) - 1)
        if len(ldims) != len(gdims):
            raise NDRangeError(f"{self.name}: global_size has {len(gdims)} dimensions but "
                               f"local_size has {len(ldims)}")
        for d, (g, n) in enumerate(zip(gdims, ldims, strict=True)):
            if g % n:
                raise NDRangeError(f"{self.name}: local size {n} does not divide global size "
                                   f"{g} in dimension {d}")
        if math.prod(ldims) > 1024:
            raise NDRangeError(f"{self.name}: workgroup of {math.prod(ldims)} work-items "
                               f"exceeds the maximum of 1024")
        offsets = _dims(global_offset, "global_offset") if global_offset is not None else ()
        if offsets and len(offsets) != len(gdims):
            raise NDRangeError(f"{self.name}: global_offset needs {len(gdims)} values")
        kinds, values = self._marshal(args)
        memory = self.program.device.memory
        if getattr(memory, "check_bounds", False):
            for i, a in enumerate(args):
                if isinstance(a, Buffer):
                    memory.label(a.address, f"argument {i} of {self.name} "
                                 f"({_buffer_label(a.dtype, a.shape)})")
        layout = layout_args(kinds)
        if not layout.fits(header.kernarg_bytes):
            raise ArgumentError(
                f"{self.name}: {len(args)} arguments take {layout.explicit_bytes} bytes, but "
                f"the kernel's argument segment is {header.kernarg_bytes} bytes "
                f"(wrong number or types of arguments?)")
        # dynamic LDS: each __local argument gets its own window after the static area
        lds = header.workgroup_group_segment_byte_size
        raw = []
        for v in values:
            if isinstance(v, LocalMemory):
                lds = -(-lds // 16) * 16
                raw.append(lds.to_bytes(4, "little"))
                lds += int(v.nbytes)
            else:
                raw.append(v)
        if lds > 65536:
            raise NDRangeError(f"{self.name}: needs {lds} bytes of LDS per workgroup; the "
                               f"limit is 65536")
        grid = gdims + (1,) * (3 - len(gdims))
        local = ldims + (1,) * (3 - len(ldims))
        goff = (offsets + (0, 0, 0))[:3]
        kernarg = layout.pack(raw, len(gdims), goff)
        return self.program.device._launch(self, kernarg, grid, local, lds, trace)

    def __repr__(self) -> str:
        return f"<Kernel {self.name} of {self.program.path}>"


class LoadedProgram:
    """A code object placed in device memory; its kernels are attributes."""

    def __init__(self, device: Device, code: CodeObject, path: str) -> None:
        self.device = device
        self.code = code
        self.path = path
        mem = device.memory
        bases = {s.name: mem.alloc(len(s.data), max(s.align, 256), f"{path} {s.name}")
                 for s in code.sections}
        try:
            images = code.link(bases)
        except ValueError as exc:
            raise CodeObjectError(f"{path}: cannot place the code object: {exc}") from None
        for name, image in images.items():
            if image:
                mem.write(bases[name], image)
        self.bases = bases
        text = bases[".text"]
        self.kernels = {k.name: Kernel(self, k, text + k.code_offset) for k in code.kernels}
        self.text_image = images[".text"]

    @property
    def kernel_names(self) -> list[str]:
        return list(self.kernels)

    def kernel(self, name: str) -> Kernel:
        try:
            return self.kernels[name]
        except KeyError:
            raise UnknownKernelError(f"{self.path}: no kernel named {name!r}; kernels: "
                                     f"{', '.join(self.kernels)}") from None

    __getitem__ = kernel

    def __getattr__(self, name: str) -> Kernel:
        if name.startswith("__"):
            raise AttributeError(name)
        return self.kernel(name)

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *self.kernels]


class Device:
    """A compute device: ``Device("emu")`` is the golden-model emulator, ``Device("verilator")``
    the compute unit's RTL simulated by Verilator, ``Device("board", board=..., port=...)`` a
    flashed FPGA board over its serial link, ``Device("board-sim", board=...)`` the same host
    side against the board's gateware simulated by Verilator.

    Every backend has the same lifetime: :meth:`close` (or ``with Device(...) as dev:``)
    releases what it holds (a board's serial port, a simulated board's simulation).

    Parameters
    ----------
    backend : str
        ``"emu"``, ``"verilator"``, ``"board"`` or ``"board-sim"``
        (:mod:`gpgpu_hdl.runtime.backends`).
    memory_limit : int, optional
        Bytes of device memory (default 1 GiB on the emulator, 2 MiB of simulated RAM on
        Verilator).
    max_instructions : int, optional
        Emulator: wave-instructions after which a launch is stopped as an endless loop.
    config : CuConfig, optional
        Verilator: the compute unit to simulate (default ``CuConfig()``).
    max_cycles : int, optional
        Verilator: clock cycles after which a launch is stopped.
    mem_latency : int, optional
        Verilator: cycles from a memory request to its response (default 2); on the SoC, bus
        cycles of the DDR model from an address to its data (default 10).
    cus, clocks, prefetch : optional
        Verilator: simulate the whole SoC (:class:`~gpgpu_hdl.soc.top.SocTop`, host and DDR as
        cocotbext-axi models) instead of the bare compute unit. ``cus``: compute units (default
        1); ``clocks``: ``(cu_mhz, bus_mhz)`` (default ``(50, 50)``); ``prefetch``: the BRAM
        prefetch buffer, ``True`` (32 KiB), ``False`` (none, the default) or its size in
        bytes. Giving any of them selects the SoC; commit traces need the bare unit.
    check_bounds : bool
        Emulator: check every memory access of a kernel against the allocations, like a
        sanitizer. An access outside every buffer (and code object and launch area) the host
        allocated, or up to :data:`~gpgpu_hdl.emu.memory.REDZONE` bytes past the end of one,
        stops the launch with :class:`~gpgpu_hdl.emu.memory.BoundsError` naming the kernel,
        PC, instruction, lane, address and the buffer (the kernel argument) it ran past.
        Without it a kernel may read or write a neighbouring buffer, as on the hardware.
    board, port, baud : optional
        Board (``boards/device.py``): ``board`` names it (``"ulx3s-85f"``), ``port`` is its
        serial port (``"/dev/ttyUSB0"``; or a ``boards.link.Transport`` or ``HostLink``, for a
        simulated board), ``baud`` the line's speed (default 115200). The board reports its
        unit, memory and profile; a kernel outside the profile is refused before it runs, and
        a board that does not answer is a one-line ``LinkError``. ``max_cycles`` bounds a
        launch at the board's clock (default 60 s); ``memory_limit`` may shrink the board
        memory.

        Simulated board (``boards/sim.py``): ``Device("board-sim", board="ulx3s-85f",
        profile=...)`` builds the board's gateware below its PLL (UART, host link bridge and
        SoC, with the board's memory window and clocks) for the unit ``profile`` (or
        ``config``; default ``CuConfig()``) under Verilator, and runs the host side of
        ``"board"`` against it over a simulated serial line. ``max_cycles`` counts simulated
        compute-unit cycles (default 20 million); ``port`` and ``baud`` do not apply.
    profile : CuConfig, optional
        Verilator or a simulated board: simulate a unit trimmed for a set of kernels, as the
        trimmer builds it
        (``trimmer.trim_config(["vecadd.bin", "matmul.bin:matmul_int"], base)``, what ``trim``
        builds without ``--keep``/``--drop``). A kernel that uses an instruction outside the
        profile stops with :class:`~gpgpu_hdl.runtime.errors.IllegalInstruction` naming its PC
        and instruction.
    """

    def __init__(self, backend: str = "emu", *, memory_limit: int | None = None,
                 max_instructions: int | None = None, config: Any = None,
                 max_cycles: int | None = None, mem_latency: int | None = None,
                 profile: Any = None, cus: int | None = None, clocks: Any = None,
                 prefetch: bool | int | None = None, check_bounds: bool = False,
                 board: str | None = None, port: Any = None, baud: int | None = None) -> None:
        if backend not in BACKENDS:
            raise BackendError(f"unknown backend {backend!r}; choose one of "
                               f"{', '.join(BACKENDS)}")
        self.backend_name = backend
        link = {k: v for k, v in (("board", board), ("port", port), ("baud", baud))
                if v is not None}
        if link and backend not in ("board", "board-sim"):
            raise BackendError(f"{', '.join(link)} describe a board's link; the {backend!r} "
                               "backend has none (use Device('board', board=..., port=...))")
        soc = {k: v for k, v in (("cus", cus), ("clocks", clocks), ("prefetch", prefetch))
               if v is not None}
        if soc and backend != "verilator":
            raise BackendError(f"{', '.join(soc)} describe the simulated SoC; the {backend!r} "
                               "backend has none (use Device('verilator', ...))")
        if profile is not None:
            if backend not in ("verilator", "board-sim"):
                raise BackendError(f"profile= trims the compute unit; the {backend!r} backend "
                                   "has none (use Device('verilator', profile=...))")
            if not isinstance(profile, CuConfig):
                raise ArgumentError(
                    f"profile= takes the configuration the trimmer built for the kernels "
                    f"(trimmer.trim_config([...])), not {type(profile).__name__}")
            if config is not None:
                raise ArgumentError("give config= or profile=, not both (trim_config takes "
                                    "the base configuration)")
            config = profile
        if check_bounds and backend != "emu":
            raise BackendError(f"check_bounds= checks accesses on the emulator; the {backend!r} "
                               "backend has no such check (use Device('emu', "
                               "check_bounds=True))")
        options = {"check_bounds": check_bounds or None,
                   "memory_limit": memory_limit, "max_instructions": max_instructions,
                   "config": config, "max_cycles": max_cycles, "mem_latency": mem_latency,
                   **soc, **link}
        self.backend = open_backend(backend, **{k: v for k, v in options.items()
                                                if v is not None})
        self.memory = self.backend.memory
        self._launch_area = (0, 0)
        self.closed = False

    def __repr__(self) -> str:
        return f"<Device {self.backend_name}{' (closed)' * self.closed}>"

    # -- lifetime -----------------------------------------------------------------------------

    def close(self) -> None:
        """Release what the backend holds: a board's serial port (one the device opened, not
        a link it was given), a simulated board's simulation; nothing on the emulator and
        Verilator. Closing again does nothing. A closed device refuses new buffers, loads and
        launches (:class:`~gpgpu_hdl.runtime.errors.BackendError`); its buffers' contents
        stay readable. ``with Device(...) as dev:`` closes it at the end of the block."""
        if self.closed:
            return
        self.closed = True
        close = getattr(self.backend, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> Device:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _check_open(self, what: str) -> None:
        if self.closed:
            raise BackendError(f"the {self.backend_name!r} device is closed: cannot {what} "
                               f"(open a new Device)")

    # -- memory ------------------------------------------------------------------------------

    def array(self, values: Any, dtype: Any = None) -> Buffer:
        """A device buffer initialised from a numpy array (copied)."""
        self._check_open("make a buffer")
        data = np.ascontiguousarray(values, dtype=dtype)
        if data.dtype.hasobject:
            raise ArgumentError("device buffers hold plain numbers, not Python objects")
        buf = Buffer(self, self.memory.alloc(max(data.nbytes, 1), 256,
                                             _buffer_label(data.dtype, data.shape)),
                     data.shape, data.dtype)
        if data.nbytes:
            self.memory.write(buf.address, data)
        return buf

    def empty(self, shape: Any, dtype: Any = np.float32) -> Buffer:
        """A zero-filled device buffer."""
        self._check_open("make a buffer")
        shape = (shape,) if isinstance(shape, int | np.integer) else tuple(shape)
        dt = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        return Buffer(self, self.memory.alloc(max(nbytes, 1), 256, _buffer_label(dt, shape)),
                      shape, dt)

    zeros = empty

    # -- code ---------------------------------------------------------------------------------

    def load(self, path: str | Path) -> LoadedProgram:
        """Load a code object (``.bin``) and place it in device memory."""
        self._check_open("load a program")
        return LoadedProgram(self, CodeObject.load(path), str(path))

    def load_bytes(self, data: bytes, name: str = "<bytes>") -> LoadedProgram:
        self._check_open("load a program")
        return LoadedProgram(self, CodeObject.from_bytes(data, name), name)

    # -- launches -----------------------------------------------------------------------------

    def _scratch(self, nbytes: int) -> int:
        """A reusable per-device area for kernarg, dispatch packet and scratch."""
        addr, size = self._launch_area
        if nbytes > size:
            size = max(nbytes, 2 * size, 4096)
            addr = self.memory.alloc(size, 256, "the launch area (kernel arguments, dispatch "
                                                "packet, private scratch)")
            self._launch_area = (addr, size)
        return addr

    def _launch(self, kernel: Kernel, kernarg: bytes, grid: tuple[int, int, int],
                local: tuple[int, int, int], lds: int, trace: Any) -> KernelResult:
        self._check_open(f"launch {kernel.name}")
        header = kernel.info.header
        probe = Dispatch(header, kernel.code_address, 0, 0, grid, local, lds, 0)
        kernarg_off = 0
        packet_off = -(-len(kernarg) // 64) * 64
        scratch_off = packet_off + 64
        units = getattr(self.backend, "scratch_units", 1)     # the SoC's compute units
        base = self._scratch(scratch_off + units * probe.scratch_bytes)
        d = Dispatch(header, kernel.code_address, base + kernarg_off, base + packet_off, grid,
                     local, lds, base + scratch_off if probe.scratch_bytes else 0)
        self.memory.write(d.kernarg_address, kernarg)
        self.memory.write(d.packet_address,
                          dispatch_packet(d, kernel_object=kernel.code_address - 256))
        if probe.scratch_bytes:
            self.memory.write(d.scratch_address, bytes(units * probe.scratch_bytes))
        return self.backend.launch(kernel, d, trace)
