"""Simulation helpers shared by the RTL unit tests.

- :func:`simulate` runs a design under Amaranth's simulator with async testbenches (and, for
  models of external parts, processes);
- :func:`reused_simulation` builds a design and its simulator once per worker and runs it
  again for each test (``Simulator.reset``): building the simulator of a large design (the
  pipelined compute unit: about 14 s at 4 lanes) costs far more than most of its runs;
- :class:`Vector` is one operation's inputs to a unit under test, named after the ports that
  take them; :func:`by_op` sorts a run's vectors and results per mnemonic.

Plain helpers for test modules to import (``from tests.simulation import simulate``); the
shared fixtures are in ``tests/conftest.py``, the FP sub-units' harness in
``tests/cu/fpu/harness.py``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any, NamedTuple

from amaranth.sim import Simulator


def simulate(dut, *testbenches, processes=(), clock: float | None = None) -> None:
    """Simulate ``dut`` until every testbench has returned.

    ``testbenches`` are added with :meth:`~Simulator.add_testbench` and ``processes`` (models
    of external parts: memories, hosts) with :meth:`~Simulator.add_process`; ``clock`` is the
    period in seconds of the ``sync`` clock, None for a combinational design.
    """
    sim = Simulator(dut)
    if clock is not None:
        sim.add_clock(clock)
    for process in processes:
        sim.add_process(process)
    for testbench in testbenches:
        sim.add_testbench(testbench)
    sim.run()


class ReusedSimulation:
    """``dut`` under one :class:`~amaranth.sim.Simulator`, run again for each :meth:`run`.

    Amaranth's simulator spends most of a short run of a large design on its construction
    (elaborating the design and compiling it to Python); ``Simulator.reset`` puts every signal
    and memory back to its initial value and restarts every clock, process and testbench. The
    simulator's testbenches and processes are slots that run this run's ones, so each run
    gets its own, as with :func:`simulate`. The design must not be changed between runs (its
    memories' initial contents included).
    """

    def __init__(self, dut: Any, clock: float | None):
        self.dut = dut
        self._sim = Simulator(dut)
        if clock is not None:
            self._sim.add_clock(clock)
        self._testbenches: list[Callable] = []     # this run's
        self._processes: list[Callable] = []
        self._slots = {"testbench": 0, "process": 0}
        self._used = False

    @staticmethod
    def _slot(jobs: list[Callable], index: int) -> Callable:
        async def slot(ctx):
            if index < len(jobs):
                await jobs[index](ctx)
        return slot

    def run(self, *testbenches: Callable, processes: tuple[Callable, ...] = ()) -> None:
        """As :func:`simulate`: until every one of ``testbenches`` has returned."""
        if self._used:
            self._sim.reset()
        self._used = True
        while self._slots["testbench"] < len(testbenches):
            self._sim.add_testbench(self._slot(self._testbenches, self._slots["testbench"]))
            self._slots["testbench"] += 1
        while self._slots["process"] < len(processes):
            self._sim.add_process(self._slot(self._processes, self._slots["process"]))
            self._slots["process"] += 1
        self._testbenches[:] = testbenches
        self._processes[:] = processes
        self._sim.run()


_REUSED: OrderedDict[tuple, ReusedSimulation] = OrderedDict()
#: simulators kept per process (each holds its design's whole simulation state)
_REUSED_KEEP = 3


class _KeptSimulation(ReusedSimulation):
    """A :class:`ReusedSimulation` that goes back to the cache after each run that returns."""

    def __init__(self, key: tuple, dut: Any, clock: float | None):
        super().__init__(dut, clock)
        self._key = key

    def run(self, *testbenches: Callable, processes: tuple[Callable, ...] = ()) -> None:
        super().run(*testbenches, processes=processes)
        _REUSED[self._key] = self
        while len(_REUSED) > _REUSED_KEEP:
            _REUSED.popitem(last=False)


def reused_simulation(make: Callable[..., Any], *args: Any, clock: float | None = None,
                      **kwargs: Any) -> ReusedSimulation:
    """The :class:`ReusedSimulation` of ``make(*args, **kwargs)``, built on first use in this
    process and kept for the next call with the same (hashable) arguments once a run has
    returned: a run that raises drops it, so that the next call starts a new simulator."""
    key = (make, args, tuple(sorted(kwargs.items())), clock)
    kept = _REUSED.pop(key, None)
    return kept if kept is not None else _KeptSimulation(key, make(*args, **kwargs), clock)


class Vector(NamedTuple):
    """One operation's inputs to a unit under test.

    ``name`` is the instruction's mnemonic, ``src0`` to ``src2`` its source operands as the
    ports take them (raw bits, junk included where the unit must not look), ``mode`` the MODE
    register (FP units), ``cin`` the carry or select bit (VCC of a vector op, SCC of a scalar
    op), ``lane`` the lane id (vector ALU) and ``exec_mask`` EXEC (scalar ALU). A unit ignores
    the fields it has no port for.
    """

    name: str
    src0: int = 0
    src1: int = 0
    src2: int = 0
    mode: int = 0
    cin: int = 0
    lane: int = 0
    exec_mask: int = 0

    @property
    def srcs(self) -> tuple[int, int, int]:
        return self.src0, self.src1, self.src2

    def describe(self) -> str:
        """The mnemonic, the sources in hex and every other field that is set."""
        extra = [f"{field}={value:#x}" for field, value in
                 (("mode", self.mode), ("cin", self.cin), ("lane", self.lane),
                  ("exec", self.exec_mask)) if value]
        return " ".join([self.name, *(f"src{i}={s:#010x}" for i, s in enumerate(self.srcs)),
                         *extra])


def by_op(vectors: list[Vector], results: list) -> dict[str, tuple[list[Vector], list]]:
    """Per mnemonic, its vectors and their results (``results[i]`` belongs to
    ``vectors[i]``), in run order."""
    assert len(vectors) == len(results)
    out: dict[str, tuple[list[Vector], list]] = {}
    for vector, result in zip(vectors, results, strict=True):
        entry = out.setdefault(vector.name, ([], []))
        entry[0].append(vector)
        entry[1].append(result)
    return out
