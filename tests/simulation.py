"""Simulation helpers shared by the RTL unit tests.

- :func:`simulate` runs a design under Amaranth's simulator with async testbenches (and, for
  models of external parts, processes);
- :class:`Vector` is one operation's inputs to a unit under test, named after the ports that
  take them; :func:`by_op` sorts a run's vectors and results per mnemonic.

Plain helpers for test modules to import (``from tests.simulation import simulate``); the
shared fixtures are in ``tests/conftest.py``, the FP sub-units' harness in
``tests/cu/fpu/harness.py``.
"""

from __future__ import annotations

from typing import NamedTuple

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
