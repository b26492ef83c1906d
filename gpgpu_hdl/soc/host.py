"""The host's side of a launch on the SoC, written once for every way of reaching its registers.

A launch is a short conversation over the host port (docs/soc.md, "Launch"): load the prefetch
window, write the dispatch registers and ``CONTROL.start``, wait for ``STATUS.done``, read the
trap record and the counters, acknowledge ``done``, read the window back. :func:`launch` is
that conversation as a generator of bus operations (sans-IO): it yields :class:`Read`,
:class:`Write`, :class:`ReadRegisters`, :class:`ReadBlock`, :class:`WriteBlock`,
:class:`WaitDone` and :class:`Now` and is sent each one's result. A runner executes the
operations on a bus:

* :func:`run_async` in the cocotb testbench (``cocotb_tests/soc_tb.py``: cocotbext-axi's
  AXI4-Lite master, simulation time, the interrupt line);
* :func:`run` over the board's serial link (``boards/device.py``: ``HostLink``, wall-clock
  time, polling ``STATUS``).

What to write and read comes from the register map, as a :class:`LaunchPlan` of plain numbers
(:func:`launch_plan`) that crosses into the simulator as JSON; :func:`decode_outcome` turns the
registers read after a launch into counters, a trap record or a memory error, and
:func:`identify` reads what a device was built with (``ID``, ``VERSION``, ``CONFIG``, the
``PROFILE`` ROM).
"""

from __future__ import annotations

import inspect
from collections.abc import Generator, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from ..cu.core import CountersLayout
from ..isa.table import TABLE
from .registers import RegisterMap
from .regmap import SOC_ID, decode_profile, dispatch_writes

__all__ = [
    "Read", "Write", "ReadRegisters", "ReadBlock", "WriteBlock", "WaitDone", "Now", "Operation",
    "Bus",
    "LaunchPlan", "LaunchResult", "Trap", "Outcome", "Identity",
    "launch_plan", "launch", "read_registers", "identify", "decode_outcome", "poll_done",
    "run", "run_async", "COUNTER_REGISTERS", "OUTCOME_REGISTERS",
]


# --- the operations -------------------------------------------------------------------------

@dataclass(frozen=True)
class Read:
    """Read the register at byte ``offset``; the result is its value."""

    offset: int


@dataclass(frozen=True)
class Write:
    """Write ``value`` to the register at byte ``offset``."""

    offset: int
    value: int


@dataclass(frozen=True)
class ReadRegisters:
    """Read ``count`` consecutive registers from byte ``offset``; the result is their values,
    a list. A bus without ``read_regs`` reads them one at a time."""

    offset: int
    count: int


@dataclass(frozen=True)
class ReadBlock:
    """Read ``size`` bytes (whole words) of a window from ``offset``; the result is bytes."""

    offset: int
    size: int


@dataclass(frozen=True)
class WriteBlock:
    """Write ``data`` (whole words) into a window at ``offset``."""

    offset: int
    data: bytes


@dataclass(frozen=True)
class WaitDone:
    """Wait at most ``ns`` nanoseconds for the launch to be done: the bits ``done`` of the
    register at ``status`` set (or the interrupt they raise). The result is whether it was
    done in time."""

    ns: int
    status: int
    done: int


@dataclass(frozen=True)
class Now:
    """The bus's clock in nanoseconds (simulation time, or wall-clock time on a board)."""


Operation = Read | Write | ReadRegisters | ReadBlock | WriteBlock | WaitDone | Now


class Bus(Protocol):
    """What a runner needs; a method may be a coroutine under :func:`run_async`. A bus may
    also have ``read_regs(offset, count)``, consecutive registers at once (else
    :class:`ReadRegisters` reads them one at a time)."""

    def read_reg(self, offset: int) -> int: ...
    def write_reg(self, offset: int, value: int) -> None: ...
    def read_mem(self, offset: int, size: int) -> bytes: ...
    def write_mem(self, offset: int, data: bytes) -> None: ...
    def wait_done(self, op: WaitDone) -> bool: ...
    def now_ns(self) -> int: ...


def _call(bus: Any, op: Operation) -> Any:
    if isinstance(op, Read):
        return bus.read_reg(op.offset)
    if isinstance(op, Write):
        return bus.write_reg(op.offset, op.value)
    if isinstance(op, ReadRegisters):
        read_regs = getattr(bus, "read_regs", None)
        if read_regs is not None:
            return read_regs(op.offset, op.count)
        values = [bus.read_reg(op.offset + 4 * i) for i in range(op.count)]
        if values and inspect.isawaitable(values[0]):
            async def each() -> list[int]:     # one after the other, as awaited
                return [await v for v in values]
            return each()
        return values
    if isinstance(op, ReadBlock):
        return bus.read_mem(op.offset, op.size)
    if isinstance(op, WriteBlock):
        return bus.write_mem(op.offset, op.data)
    if isinstance(op, WaitDone):
        return bus.wait_done(op)
    if isinstance(op, Now):
        return bus.now_ns()
    raise TypeError(f"not a bus operation: {op!r}")


def run(steps: Generator[Operation, Any, Any], bus: Bus) -> Any:
    """Execute ``steps`` on a synchronous ``bus``; returns the generator's result."""
    try:
        op = next(steps)
        while True:
            op = steps.send(_call(bus, op))
    except StopIteration as stop:
        return stop.value


async def run_async(steps: Generator[Operation, Any, Any], bus: Any) -> Any:
    """Execute ``steps`` on a ``bus`` whose methods may be coroutines (awaited)."""
    try:
        op = next(steps)
        while True:
            result = _call(bus, op)
            if inspect.isawaitable(result):
                result = await result
            op = steps.send(result)
    except StopIteration as stop:
        return stop.value


def poll_done(bus: Any, op: WaitDone) -> bool:
    """:class:`WaitDone` on a synchronous bus without an interrupt: read the status register
    until its ``done`` bits are set or ``op.ns`` have passed (for ``Bus.wait_done``)."""
    deadline = bus.now_ns() + op.ns
    while True:
        if bus.read_reg(op.status) & op.done:
            return True
        if bus.now_ns() > deadline:
            return False


# --- a launch -------------------------------------------------------------------------------

#: the registers read after a launch, before the counters
OUTCOME_REGISTERS = ("STATUS", "TRAP_CAUSE", "TRAP_CU", "TRAP_SLOT", "TRAP_PC", "TRAP_INST_LO",
                     "TRAP_INST_HI", "MEM_ERROR_ADDR")
#: the counter registers, ``_LO`` before ``_HI`` (the read of ``_LO`` latches ``_HI``)
COUNTER_REGISTERS = tuple(f"COUNTERS_{name.upper()}_{half}" for name, _ in CountersLayout
                          for half in ("LO", "HI"))


@dataclass(frozen=True)
class LaunchPlan:
    """One launch as register offsets and values (plain numbers: it travels as JSON).

    Attributes
    ----------
    writes : tuple of (offset, value)
        Written in order; the last one starts the launch.
    reads : tuple of (name, offset)
        Registers read after the launch, in order.
    status, done : int
        The ``STATUS`` offset and its ``done`` bit, which end the wait.
    limit_ns : int
        How long the launch may take before it counts as hung.
    clear : (offset, value) or None
        Written after the reads (acknowledges ``done``).
    window : (offset, base, words) or None
        The prefetch window: loaded at host ``offset`` before the launch with ``words`` words
        of global memory from byte ``base``, and read back after it.
    abort : (offset, value, ns) or None
        Written ``ns`` nanoseconds after the start unless the launch is done by then (tests of
        the abort and the soft reset).
    idle : (offset, mask) or None
        Instead of waiting for ``done``, read that register until the ``mask`` bits are 0
        (a launch stopped by a soft reset raises no ``done``).
    stop : (offset, value) or None
        Written when the launch did not finish within ``limit_ns`` (``CONTROL.abort``, so that
        a hung kernel leaves the device idle); None leaves the units running.
    """

    writes: tuple[tuple[int, int], ...]
    reads: tuple[tuple[str, int], ...]
    status: int
    done: int
    limit_ns: int
    clear: tuple[int, int] | None = None
    window: tuple[int, int, int] | None = None
    abort: tuple[int, int, int] | None = None
    idle: tuple[int, int] | None = None
    stop: tuple[int, int] | None = None

    def to_json(self) -> dict:
        """The plan as JSON types (:meth:`from_json` reads it back)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LaunchPlan:
        def tup(value):
            return tuple(tup(v) for v in value) if isinstance(value, list | tuple) else value
        return cls(**{key: tup(value) for key, value in data.items()})


def launch_plan(regmap: RegisterMap, fields: Mapping[str, object], *, limit_ns: int,
                prefetch_base: int = 0, scratch_stride: int = 0,
                window: tuple[int, int, int] | None = None,
                stop_on_timeout: bool = False) -> LaunchPlan:
    """The plan of a launch of the dispatch ``fields`` (:func:`gpgpu_hdl.dispatch.dispatch_fields`):
    the ``DISPATCH_*`` registers, ``PREFETCH_BASE``, ``SCRATCH_STRIDE`` (bytes between the
    compute units' scratch areas) and ``CONTROL`` with ``start`` and ``irq_enable``; then the
    trap record and the counters read and ``done`` and ``mem_error`` acknowledged.
    ``stop_on_timeout``: abort a launch that outlives ``limit_ns``."""
    r = regmap
    writes = [*dispatch_writes(r, fields),
              (r.offset("PREFETCH_BASE"), prefetch_base),
              (r.offset("SCRATCH_STRIDE"), scratch_stride),
              (r.offset("CONTROL"), r.encode("CONTROL", start=1, irq_enable=1))]
    names = [*OUTCOME_REGISTERS, *COUNTER_REGISTERS]
    stop = (r.offset("CONTROL"), r.encode("CONTROL", abort=1, irq_enable=1)) \
        if stop_on_timeout else None
    return LaunchPlan(writes=tuple(writes), reads=tuple((n, r.offset(n)) for n in names),
                      status=r.offset("STATUS"), done=r.encode("STATUS", done=1),
                      limit_ns=int(limit_ns),
                      clear=(r.offset("STATUS"), r.encode("STATUS", done=1, mem_error=1)),
                      window=tuple(window) if window else None, stop=stop)


@dataclass
class LaunchResult:
    """What a launch left: ``timeout`` (it did not finish within the plan's limit; nothing
    was read then), ``host_ns`` from the start to done (the bus's clock), the registers read
    (``reads``, by name) and the prefetch window's contents after it (``window``)."""

    timeout: bool
    host_ns: int
    reads: dict[str, int]
    window: bytes | None = None


def launch(plan: LaunchPlan, window: bytes | None = None
           ) -> Generator[Operation, Any, LaunchResult]:
    """The launch of ``plan``; ``window``: the bytes to load into the prefetch window (the
    plan's ``window`` words of global memory from its ``base``)."""
    if plan.window:
        if window is None or len(window) != 4 * plan.window[2]:
            raise ValueError(f"the plan loads {plan.window[2]} words into the prefetch window")
        yield WriteBlock(plan.window[0], window)
    for offset, value in plan.writes:
        yield Write(offset, value)
    begin = yield Now()
    done = True
    if plan.abort:
        offset, value, after_ns = plan.abort
        if not (yield WaitDone(after_ns, plan.status, plan.done)):
            yield Write(offset, value)
    if plan.idle:           # no done comes: poll until the launch is over
        offset, busy = plan.idle
        deadline = begin + plan.limit_ns
        while (yield Read(offset)) & busy:
            if (yield Now()) > deadline:
                done = False
                break
    else:
        done = yield WaitDone(plan.limit_ns, plan.status, plan.done)
    host_ns = (yield Now()) - begin
    if not done:
        if plan.stop:
            yield Write(*plan.stop)
        return LaunchResult(True, host_ns, {})
    reads = {}
    for name, offset in plan.reads:
        reads[name] = yield Read(offset)
    if plan.clear:
        yield Write(*plan.clear)
    data = None
    if plan.window:
        data = yield ReadBlock(plan.window[0], 4 * plan.window[2])
    return LaunchResult(False, host_ns, reads, bytes(data) if data is not None else None)


def read_registers(pairs) -> Generator[Operation, Any, dict[str, int]]:
    """Read ``(name, offset)`` registers in order; returns them by name."""
    out = {}
    for name, offset in pairs:
        out[name] = yield Read(offset)
    return out


# --- what a launch ended with ---------------------------------------------------------------

@dataclass(frozen=True)
class Trap:
    """The trap record: ``cause`` (a :class:`~gpgpu_hdl.cu.core.TrapCause`), the unit ``cu``,
    its wave ``slot``, ``pc`` and the 64-bit instruction ``inst``."""

    cause: int
    cu: int
    slot: int
    pc: int
    inst: int


@dataclass(frozen=True)
class Outcome:
    """A finished launch: its counters (by :data:`~gpgpu_hdl.cu.core.CountersLayout` field),
    the address of a failed global memory access (``mem_error``) and the trap record, each
    None when there was none."""

    counters: dict[str, int]
    mem_error: int | None
    trap: Trap | None


def decode_outcome(regmap: RegisterMap, reads: Mapping[str, int]) -> Outcome:
    """The :class:`Outcome` of the registers a plan of :func:`launch_plan` read."""
    counters = {name: reads[f"COUNTERS_{name.upper()}_LO"]
                | reads[f"COUNTERS_{name.upper()}_HI"] << 32 for name, _ in CountersLayout}
    status = regmap.decode("STATUS", reads["STATUS"])
    mem_error = reads["MEM_ERROR_ADDR"] if status["mem_error"] else None
    trap = None
    if reads["TRAP_CAUSE"]:
        trap = Trap(reads["TRAP_CAUSE"], reads["TRAP_CU"], reads["TRAP_SLOT"], reads["TRAP_PC"],
                    reads["TRAP_INST_LO"] | reads["TRAP_INST_HI"] << 32)
    return Outcome(counters, mem_error, trap)


# --- what a device is -----------------------------------------------------------------------

#: the ``CONFIG`` registers :func:`identify` reads (their offsets are the same in every build)
_CONFIG = ("LANES", "VALUS", "WAVE_SLOTS", "VGPRS", "SGPRS", "LDS_BYTES", "IMEM_BYTES", "CUS",
           "PREFETCH_BYTES", "FEATURES", "PROFILE_ENTRIES")


@dataclass(frozen=True)
class Identity:
    """What a device says it is: ``id`` (:data:`~gpgpu_hdl.soc.regmap.SOC_ID` for this SoC),
    ``version`` (major, minor), the ``CONFIG`` registers by name (``config``) and the
    mnemonics of its ``PROFILE`` ROM (``profile``; None when the ROM's size is not this
    table's, or the device is not this SoC)."""

    id: int
    version: tuple[int, int]
    config: dict[str, int]
    profile: frozenset[str] | None


def _read_named(regmap: RegisterMap,
                names: tuple[str, ...]) -> Generator[Operation, Any, dict[str, int]]:
    """The registers ``names``, a :class:`ReadRegisters` per run of consecutive offsets."""
    values: dict[str, int] = {}
    runs: list[list[str]] = []
    for name in names:
        if runs and regmap.offset(name) == regmap.offset(runs[-1][-1]) + 4:
            runs[-1].append(name)
        else:
            runs.append([name])
    for run in runs:
        got = yield ReadRegisters(regmap.offset(run[0]), len(run))
        values.update(zip(run, got, strict=True))
    return values


def identify(regmap: RegisterMap) -> Generator[Operation, Any, Identity]:
    """Read ``ID``, ``VERSION``, the ``CONFIG`` block and the ``PROFILE`` ROM, each run of
    consecutive registers as one :class:`ReadRegisters` (three in all). Their offsets are the
    same in every build, so any configuration's ``regmap`` serves
    (:func:`~gpgpu_hdl.soc.regmap.soc_register_map` of ``CuConfig()``)."""
    head = yield from _read_named(regmap, ("ID", "VERSION"))
    ident = head["ID"]
    version = regmap.decode("VERSION", head["VERSION"])
    if ident != SOC_ID:
        return Identity(ident, (version["major"], version["minor"]), {}, None)
    config = yield from _read_named(regmap, _CONFIG)
    (rom,) = [x for x in regmap.roms if x.name == "PROFILE"]
    profile = None
    if config["PROFILE_ENTRIES"] == len(TABLE):
        words = yield ReadRegisters(regmap.offset("PROFILE"), len(rom.words))
        profile = decode_profile(list(words))
    return Identity(ident, (version["major"], version["minor"]), config, profile)
