"""The SoC: compute units behind an AXI4 master, driven by a host over AXI4-Lite.

::

    host (AXI4-Lite) -> AxiLiteRegisters --dispatch, start--> [cu domain] GridWalker -> CU 0..N-1
                                     <--done, trap, counters--          |  memory requests
    DDR  (AXI4)      <- AxiMaster <- MemorySystem <-- AsyncStream per CU -+
                                     |  arbiter, router, in-order responses
                                     +-> PrefetchBuffer (block RAM window, host-loadable)

Two clock domains: the bus domain (``sync``: the AXI ports, the registers, the memory system)
and the compute-unit domain (``cu_domain``). They meet only in :mod:`gpgpu_hdl.soc.cdc` cells:
an :class:`~gpgpu_hdl.soc.cdc.AsyncStream` each way per compute unit for memory, pulse
crossings for start and done, and synchronizers for the quasi-static dispatch fields, the
memory-error abort, and the trap record and counters (stable once a launch is done).

One :class:`~gpgpu_hdl.cu.grid.GridWalker` hands workgroups to whichever compute unit has room
(FlexGrip's block scheduler), with rotating priority when several have. A trap in one unit stops
the walk; the others finish their resident workgroups. A memory error (an AXI error response)
aborts every unit at its next instruction boundary, so nothing hangs and no response is lost;
``CONTROL.abort`` does the same for the host, and ``CONTROL.reset`` (the soft reset) also
clears the launch's status, trap record and counters once the units have stopped.
"""

from amaranth.hdl import Cat, DomainRenamer, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out, connect, flipped

from ..config import CuConfig
from ..cu.core import VMEM_QUEUE, CountersLayout, DispatchLayout, MemRequest
from ..cu.core import TrapCause
from ..cu.grid import GridWalker
from ..cu.unit import compute_unit
from .axi import Axi4Signature, AxiLiteSignature, BusResponse
from .axi_master import AxiMaster
from .cdc import VALUE_STAGES, AsyncStream, PulseCrossing
from .axil_registers import AxiLiteRegisters
from .memsys import MemorySystem
from .regmap import counters_assignments, dispatch_assignments, soc_register_map
from .regmap import trap_assignments

__all__ = ["SocTop", "SocTrapLayout"]

#: Entries of each unit's request and answer crossings.
STREAM_DEPTH = 8

#: The trap record of a launch: the first unit to trap, and where.
SocTrapLayout = data.StructLayout({"cause": 4, "cu": 4, "slot": 4, "pc": 32, "inst": 64})


class SocTop(wiring.Component):
    """The SoC shell around ``cus`` compute units of one configuration.

    Parameters
    ----------
    config : CuConfig
        Every compute unit's configuration.
    cus : int
        Compute units (1 to 8).
    prefetch_bytes : int
        Size of the BRAM prefetch buffer (0 = none; else a power of two, 256 to 262144).
    cu_domain : str
        Clock domain of the compute units (the bus side runs in ``sync``).

    Members
    -------
    host : In(AxiLiteSignature(...))
        The host's register port (map: :func:`~gpgpu_hdl.soc.regmap.soc_register_map`,
        ``docs/regmap.md``).
    mem : Out(Axi4Signature())
        Global memory (code, kernel arguments, buffers, scratch).
    irq : Out(1)
        Launch done, when enabled in CONTROL.
    """

    def __init__(self, config: CuConfig | None = None, *, cus: int = 1,
                 prefetch_bytes: int = 0, cu_domain: str = "cu"):
        self._config = config if config is not None else CuConfig()
        if not isinstance(cus, int) or not 1 <= cus <= 8:
            raise ValueError(f"cus must be an integer from 1 to 8, not {cus!r}")
        if prefetch_bytes and (prefetch_bytes & (prefetch_bytes - 1)
                               or not 256 <= prefetch_bytes <= 1 << 18):
            raise ValueError(f"prefetch_bytes must be 0 or a power of two from 256 to 262144, "
                             f"not {prefetch_bytes!r}")
        self._cus = cus
        self._prefetch_bytes = prefetch_bytes
        self._cu_domain = cu_domain
        self._regmap = soc_register_map(self._config, cus=cus, prefetch_bytes=prefetch_bytes)
        super().__init__({
            "host": In(AxiLiteSignature(addr_width=self._regmap.addr_width)),
            "mem": Out(Axi4Signature()),
            "irq": Out(1),
        })

    @property
    def config(self) -> CuConfig:
        return self._config

    @property
    def cus(self) -> int:
        return self._cus

    @property
    def prefetch_bytes(self) -> int:
        return self._prefetch_bytes

    @property
    def regmap(self):
        """The register map this SoC implements (offsets for the host)."""
        return self._regmap

    def elaborate(self, platform):
        m = Module()
        n, cud = self._cus, self._cu_domain
        to_cu = DomainRenamer(cud)

        # --- bus domain: registers, memory system, AXI master -----------------------------
        m.submodules.regs = regs = AxiLiteRegisters(self._regmap)
        connect(m, flipped(self.host), regs.bus)
        # room for every unit's buffer accesses in flight at once (VMEM_QUEUE each)
        m.submodules.memsys = memsys = MemorySystem(sources=n,
                                                    prefetch_bytes=self._prefetch_bytes,
                                                    outstanding=VMEM_QUEUE * n)
        m.submodules.axi = axi = AxiMaster(gather=4)
        connect(m, memsys=memsys.ext, axi=axi.bus)
        connect(m, flipped(self.mem), axi.axi)
        if self._prefetch_bytes:
            connect(m, regs=regs.prefetch, memsys=memsys.host)
            m.d.comb += memsys.prefetch_base.eq(regs.prefetch_base)
        m.d.comb += self.irq.eq(regs.irq)

        busy = Signal()
        start = Signal()
        abort_req = Signal()        # the host asked to stop the running launch
        reset_pending = Signal()    # a soft reset waits for the running launch to stop
        soft_reset = Signal()       # the soft reset takes effect (the SoC is idle)
        cleared = Signal()          # since a soft reset: trap record and counters read 0
        m.d.comb += [start.eq(regs.control_start & ~regs.control_reset & ~busy),
                     memsys.clear.eq(start | soft_reset), regs.clear_flags.eq(soft_reset)]
        with m.If(start):
            m.d.sync += [abort_req.eq(0), cleared.eq(0)]
        with m.Elif((regs.control_abort | regs.control_reset) & busy):
            m.d.sync += abort_req.eq(1)

        # --- crossings into the compute-unit domain ---------------------------------------
        m.submodules.start_cdc = start_cdc = PulseCrossing(i_domain="sync", o_domain=cud)
        m.d.comb += start_cdc.i.eq(start)
        dispatch = Signal(DispatchLayout)
        dispatch_bus = Signal(DispatchLayout)
        m.d.comb += dispatch_assignments(regs, dispatch_bus)
        m.submodules.dispatch_cdc = FFSynchronizer(dispatch_bus.as_value(), dispatch.as_value(),
                                                   o_domain=cud, stages=VALUE_STAGES)
        stride = Signal(32)     # between the units' scratch areas (one workgroup each)
        m.submodules.stride_cdc = FFSynchronizer(regs.scratch_stride, stride, o_domain=cud,
                                                 stages=VALUE_STAGES)
        abort_bus, abort = Signal(), Signal()
        m.d.sync += abort_bus.eq(memsys.error | abort_req)     # registered: no glitch crosses
        m.submodules.abort_cdc = FFSynchronizer(abort_bus, abort, o_domain=cud,
                                                stages=VALUE_STAGES)
        cu_start = start_cdc.o

        # --- compute units and the block scheduler (cu domain) ----------------------------
        m.submodules.grid = grid = to_cu(GridWalker())
        m.d.comb += [grid.start.eq(cu_start), grid.group_counts.eq(dispatch.group_counts),
                     grid.local.eq(dispatch.local)]
        units = []
        for i in range(n):
            unit = to_cu(compute_unit(self._config, shared_grid=True))
            m.submodules[f"cu{i}"] = unit
            units.append(unit)
            m.d.comb += [unit.start.eq(cu_start), unit.dispatch.eq(dispatch),
                         unit.dispatch.scratch_address.eq(dispatch.scratch_address
                                                          + i * stride),
                         unit.abort.eq(abort), unit.grid_done.eq(grid.done),
                         unit.groups.payload.eq(grid.groups.payload)]
            # deep enough to pass a request (answer) per cycle across the synchronizers
            req = AsyncStream(MemRequest, depth=STREAM_DEPTH, w_domain=cud, r_domain="sync")
            rsp = AsyncStream(BusResponse, depth=STREAM_DEPTH, w_domain="sync", r_domain=cud)
            m.submodules[f"cu{i}_req"] = req
            m.submodules[f"cu{i}_rsp"] = rsp
            connect(m, cu=unit.mem.req, cdc=req.w)
            connect(m, cdc=req.r, memsys=memsys.sources[i].req)
            connect(m, memsys=memsys.sources[i].rsp, cdc=rsp.w)
            m.d.comb += [unit.mem.rsp.payload.data.eq(rsp.r.payload.data),
                         unit.mem.rsp.valid.eq(rsp.r.valid), rsp.r.ready.eq(unit.mem.rsp.ready)]

        # rotating priority among the units that could take the offered workgroup
        wants = Signal(n)
        m.d.comb += wants.eq(Cat(u.groups.ready for u in units))
        last = Signal(range(n))
        grant = Signal(n)
        with m.Switch(last):           # the first wanting unit after `last`, wrapping
            for j in range(n):
                with m.Case(j):
                    for i in reversed([(j + 1 + k) % n for k in range(n)]):
                        with m.If(wants[i]):
                            m.d.comb += grant.eq(1 << i)
        for i, unit in enumerate(units):
            m.d.comb += unit.groups.valid.eq(grid.groups.valid & grant[i])
            with m.If(unit.groups.valid & unit.groups.ready):
                m.d[cud] += last.eq(i)
        m.d.comb += grid.groups.ready.eq((grant & wants).any())

        # --- launch state, trap record, counters (cu domain) -------------------------------
        running = Signal()
        finished = Signal(n)
        trap = Signal(SocTrapLayout)
        cycles = Signal(CountersLayout["cycles"].shape)
        counters = Signal(CountersLayout)
        done = Signal()
        m.d.comb += grid.stop.eq(trap.cause != TrapCause.NONE)
        with m.If(cu_start):
            m.d[cud] += [running.eq(1), finished.eq(0), trap.eq(0), cycles.eq(0)]
        with m.Elif(running):
            m.d[cud] += cycles.eq(cycles + 1)
            seen = Signal(n)
            m.d.comb += seen.eq(finished | Cat(u.done for u in units))
            m.d[cud] += finished.eq(seen)
            for i in reversed(range(n)):        # the lowest-numbered unit's trap wins a tie
                u = units[i]
                with m.If(u.done & (u.trap.cause != TrapCause.NONE)
                          & (trap.cause == TrapCause.NONE)):
                    m.d[cud] += [trap.cause.eq(u.trap.cause), trap.cu.eq(i),
                                 trap.slot.eq(u.trap.slot), trap.pc.eq(u.trap.pc),
                                 trap.inst.eq(u.trap.inst)]
            with m.If(seen.all()):
                m.d[cud] += running.eq(0)
                m.d.comb += done.eq(1)
        m.d.comb += counters.cycles.eq(cycles)
        for name, _ in CountersLayout:
            if name != "cycles":
                m.d.comb += getattr(counters, name).eq(
                    sum(getattr(u.counters, name) for u in units))

        # --- back to the bus domain -------------------------------------------------------
        m.submodules.done_cdc = done_cdc = PulseCrossing(i_domain=cud, o_domain="sync")
        m.d.comb += done_cdc.i.eq(done)
        trap_bus = Signal(SocTrapLayout)
        counters_bus = Signal(CountersLayout)
        m.submodules.trap_cdc = FFSynchronizer(trap.as_value(), trap_bus.as_value(),
                                             stages=VALUE_STAGES)
        m.submodules.counters_cdc = FFSynchronizer(counters.as_value(), counters_bus.as_value(),
                                                 stages=VALUE_STAGES)
        with m.If(start):
            m.d.sync += busy.eq(1)
        with m.Elif(done_cdc.o):
            m.d.sync += busy.eq(0)
        error_last = Signal()
        m.d.sync += error_last.eq(memsys.error)
        # soft reset: at once when idle, else once the aborted launch has stopped
        m.d.comb += soft_reset.eq(regs.control_reset & (~busy | done_cdc.o)
                                  | reset_pending & done_cdc.o)
        with m.If(regs.control_reset & busy & ~done_cdc.o):
            m.d.sync += reset_pending.eq(1)
        with m.If(soft_reset):
            m.d.sync += [reset_pending.eq(0), cleared.eq(1)]
        trap_shown = Signal(SocTrapLayout)
        counters_shown = Signal(CountersLayout)
        m.d.comb += [trap_shown.as_value().eq(Mux(cleared, 0, trap_bus.as_value())),
                     counters_shown.as_value().eq(Mux(cleared, 0, counters_bus.as_value()))]
        m.d.comb += [regs.status_busy.eq(busy),
                     regs.status_done.eq(done_cdc.o & ~soft_reset),
                     regs.status_mem_error.eq(memsys.error & ~error_last),
                     regs.mem_error_addr.eq(memsys.error_addr)]
        m.d.comb += trap_assignments(regs, trap_shown, trap_shown.cu)
        m.d.comb += counters_assignments(regs, counters_shown)
        return m
