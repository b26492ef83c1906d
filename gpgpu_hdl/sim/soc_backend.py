"""The SoC under Verilator: ``Device("verilator", cus=..., clocks=..., prefetch=...)``.

The whole :class:`~gpgpu_hdl.soc.top.SocTop` is simulated; the testbench
:data:`SOC_TESTBENCH` drives its AXI4-Lite registers as the host would and serves global memory
from an AXI RAM model (both cocotbext-axi).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np

from ..config import ConfigError, CuConfig
from ..dispatch import Dispatch
from ..runtime.errors import RtlTrap
from ..runtime.result import KernelResult
from .cu_backend import VerilatorBackend, trap_error

__all__ = ["SocBackend", "SOC_TESTBENCH", "DEFAULT_PREFETCH_BYTES", "outcome_error"]

#: the cocotb test module that runs launches on the SoC (``cocotb_tests/soc_tb.py``)
SOC_TESTBENCH = "cocotb_tests.soc_tb"


#: Default size of the prefetch buffer for ``prefetch=True`` (16 of the LFE5U-85F's 208 EBR).
DEFAULT_PREFETCH_BYTES = 32768


class SocBackend(VerilatorBackend):
    """Launches on the whole SoC (:class:`~gpgpu_hdl.soc.top.SocTop`) under Verilator: the
    host drives the AXI4-Lite registers and global memory is an AXI RAM model with
    ``mem_latency`` bus cycles of latency (both cocotbext-axi, ``cocotb_tests/soc_tb.py``).

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
        from ..soc.host import launch_plan
        if trace:
            raise ConfigError("commit traces come from the bare compute unit: use "
                              "Device('verilator') without SoC arguments to trace")
        r = self.regmap
        fields = self._fields(kernel, d)
        image = self._image()
        window = self._window(4 * len(image))
        # a kernel with scratch runs one workgroup at a time per unit (_check): one area each
        limit_ns = int(self.max_cycles * (1e3 / self.clocks[0])) + 1000
        one = launch_plan(r, fields, limit_ns=limit_ns, prefetch_base=window[1] if window else 0,
                          scratch_stride=d.scratch_bytes, window=window)
        if self.abort_after_ns is not None:
            one = replace(one, abort=(r.offset("CONTROL"),
                                      r.encode("CONTROL", abort=1, irq_enable=1),
                                      self.abort_after_ns))
        launches = [one] * self.repeat
        if self.reset_after_ns is not None:
            launches.insert(0, replace(one, clear=None,
                                       idle=(r.offset("STATUS"), r.encode("STATUS", busy=1)),
                                       abort=(r.offset("CONTROL"),
                                              r.encode("CONTROL", reset=1, irq_enable=1),
                                              self.reset_after_ns)))
        start = time.perf_counter()
        res = self._run(image, launches=[plan.to_json() for plan in launches],
                        readback=len(image))
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
        return self.build().run(SOC_TESTBENCH, {
            "image": image, "ram_bytes": self.mem_words * 4, "mem_latency": self.mem_latency,
            "clocks": list(self.clocks), **params},
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
        from ..soc.host import decode_outcome
        if got["timeout"]:          # the testbench read no registers then
            raise RtlTrap(f"kernel {kernel.name} did not finish within {self.max_cycles} "
                          f"compute-unit cycles")
        outcome = decode_outcome(self.regmap, got)
        error = outcome_error(kernel, outcome)
        if error is not None:
            raise error
        return outcome.counters, got


def outcome_error(kernel: Any, outcome: Any) -> RtlTrap | None:
    """The exception for a launch on the SoC that ended with a memory error or a trap (an
    :class:`~gpgpu_hdl.soc.host.Outcome`), or None when it ended well."""
    if outcome.mem_error is not None:
        return RtlTrap(f"kernel {kernel.name}: a global memory access failed (AXI error "
                       f"response) at address {outcome.mem_error:#x}")
    t = outcome.trap
    if t is not None:
        return trap_error(kernel, t.cause, t.pc, t.inst,
                          f"compute unit {t.cu}, wave slot {t.slot}")
    return None
