"""The emulator proper: runs a dispatch of a compiled program, workgroup by workgroup.

Workgroups run one after another; inside a workgroup each wave runs until it reaches
``s_barrier`` or ``s_endpgm``, and a barrier releases once every wave still alive has
reached it (waves that ended are not waited for).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ..dispatch import Dispatch, Workgroup, wave_start, workgroups
from ..errors import GpgpuError
from .memory import Lds, Memory
from .program import BARRIER, ENDPGM, EmulatorError, Program
from .trace import CommitTrace, commit_record
from .wave import Wave

__all__ = ["Emulator", "LaunchStats"]

#: Default bound on wave-instructions per launch (an infinite loop ends with an error).
MAX_INSTRUCTIONS = 200_000_000


@dataclass
class LaunchStats:
    """What a launch executed.

    ``instructions`` counts wave-instructions (one per wave per instruction);
    ``lane_instructions`` is that times 64, the lanes a wave64 instruction processes.
    ``by_unit`` and ``by_class`` split ``instructions`` by the table's functional unit and
    SCRATCH class; ``by_mnemonic`` by instruction.
    """

    instructions: int = 0
    workgroups: int = 0
    waves: int = 0
    seconds: float = 0.0
    by_unit: dict[str, int] = field(default_factory=dict)
    by_class: dict[str, int] = field(default_factory=dict)
    by_mnemonic: dict[str, int] = field(default_factory=dict)

    @property
    def lane_instructions(self) -> int:
        return 64 * self.instructions

    @property
    def lane_instructions_per_second(self) -> float:
        return self.lane_instructions / self.seconds if self.seconds else 0.0


class Emulator:
    """Executes dispatches against a device :class:`Memory`.

    Parameters
    ----------
    memory : Memory
        Device global memory (buffers, kernarg segment, dispatch packet, scratch).
    max_instructions : int
        Wave-instructions after which a launch is stopped with :class:`EmulatorError`.
    """

    def __init__(self, memory: Memory, max_instructions: int = MAX_INSTRUCTIONS) -> None:
        self.memory = memory
        self.max_instructions = max_instructions

    def run(self, program: Program, dispatch: Dispatch,
            trace: CommitTrace | None = None) -> LaunchStats:
        """Run every workgroup of ``dispatch``; returns the statistics of the launch."""
        counts = [0] * len(program.steps)
        stats = LaunchStats()
        self._budget = self.max_instructions
        start = time.perf_counter()
        with np.errstate(all="ignore"):
            for wg in workgroups(dispatch):
                self._run_workgroup(program, dispatch, wg, counts, trace)
                stats.workgroups += 1
                stats.waves += wg.waves
        stats.seconds = time.perf_counter() - start
        units: Counter[str] = Counter()
        classes: Counter[str] = Counter()
        names: Counter[str] = Counter()
        for step in program:
            n = counts[(step.inst.offset - program.origin) >> 2]
            if n:
                units[str(step.inst.info.unit)] += n
                classes[str(step.inst.info.op_class)] += n
                names[step.inst.info.mnemonic] += n
        stats.instructions = sum(counts)
        stats.by_unit, stats.by_class, stats.by_mnemonic = dict(units), dict(classes), dict(names)
        return stats

    def _run_workgroup(self, program: Program, d: Dispatch, wg: Workgroup, counts: list[int],
                       trace: CommitTrace | None) -> None:
        lds = Lds(d.lds_bytes)
        waves = []
        for i in range(wg.waves):
            w = Wave(self.memory, lds, wg.id, i)
            start = wave_start(d, wg, i)
            w.s[:len(start.sgprs)] = start.sgprs
            for r, lanes in enumerate(start.vgprs):
                w.v[r] = lanes
            w.exec = start.exec_mask
            w.set_mode(start.mode)
            waves.append(w)
        live = waves
        while live:
            for w in live:
                w.at_barrier = False
                self._run_wave(program, w, counts, trace)
            live = [w for w in live if not w.done]

    def _fail(self, program: Program, w: Wave, pc: int, exc: GpgpuError) -> GpgpuError:
        step = program.steps[(pc - program.origin) >> 2] if program.holds(pc) else None
        where = f"{program.name}: workgroup {tuple(w.group)} wave {w.index} at {pc:#x}"
        if step is not None:
            where += f" ({step.text})"
        err = type(exc)(f"{where}: {exc}")
        return err

    def _run_wave(self, program: Program, w: Wave, counts: list[int],
                  trace: CommitTrace | None) -> None:
        """Run ``w`` until it ends or reaches a barrier."""
        steps = program.steps
        origin = program.origin
        pc = w.pc
        budget = self._budget
        try:
            while True:
                step = steps[(pc - origin) >> 2]
                if step is None:
                    program.step_at(pc)                 # raises the right error
                if trace is None:
                    r = step.run(w)
                else:
                    exec_before = w.exec
                    w.mem_log = []
                    r = step.run(w)
                    trace.append(commit_record(w, step, pc, exec_before))
                counts[(pc - origin) >> 2] += 1
                budget -= 1
                if r is None:
                    pc = step.next_pc
                elif r == ENDPGM:
                    w.done = True
                    break
                elif r == BARRIER:
                    pc = step.next_pc
                    w.at_barrier = True
                    break
                else:            # a jump (before the kernel's code too: a callee may be there)
                    if not program.holds(r):
                        raise EmulatorError(f"branch to {r:#x}, outside the kernel's code "
                                            f"and the functions it may call")
                    pc = r
                if budget <= 0:
                    raise EmulatorError(f"stopped after {self.max_instructions} "
                                        f"instructions (an endless loop?)")
        except GpgpuError as exc:
            raise self._fail(program, w, pc, exc) from None
        finally:
            self._budget = budget
            w.mem_log = None
        w.pc = pc
