"""The commit trace: one record per executed instruction, to compare executors in lockstep.

Format (one JSON object per line when written to a file, ``.jsonl``)::

    {"wg": [x, y, z], "wave": 0, "pc": 24, "op": "v_add_i32_e32 v0, vcc, s0, v1",
     "words": [...], "exec": 18446744073709551615,
     "sgpr": {"s4": 123, "vcc_lo": 7, ...},        # scalar destinations, values after
     "vgpr": {"v0": [64 lane values]},             # vector destinations, all 64 lanes after
     "scc": 1,                                     # when the instruction writes SCC
     "mode": 960,                                  # when it writes MODE
     "mem": [["global", address, "hex bytes"], ["lds", address, "hex bytes"], ...]}

``pc`` is the byte offset from the kernel's first instruction; ``exec`` is EXEC *before* the
instruction (the lanes it ran on). What counts as a destination is static (from the decoded
operands and the table's implicit writes), so a register written with its old value still
appears; the M0-relative moves (``s_movreld``, ``v_movreld``, ``v_movrelsd``) name the register
they wrote (the operand plus M0), and ``*_atomic_cmpswap`` with GLC only the returned half of
its data registers. Waves are independent streams: the order in which an executor interleaves
waves is not architectural, so comparisons should group records by ``(wg, wave)``
(:func:`per_wave`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from .program import Step
from .wave import M0, SCALAR_NAMES, Wave

__all__ = ["CommitTrace", "commit_record", "per_wave", "read_trace"]


def _sname(code: int) -> str:
    return SCALAR_NAMES.get(code, f"s{code}")


def commit_record(w: Wave, step: Step, pc: int, exec_before: int) -> dict[str, Any]:
    """The trace record of ``step`` just executed by ``w``."""
    rec: dict[str, Any] = {"wg": list(w.group), "wave": w.index, "pc": pc, "op": step.text,
                           "words": list(step.inst.words), "exec": exec_before}
    sgpr: dict[str, int] = {}
    vgpr: dict[str, list[int]] = {}
    for item in step.writes:
        kind = item[0]
        if kind in ("s", "s+m0"):
            _, code, count = item
            if kind == "s+m0":              # s_movreld: the register M0 past the named one
                code += w.s[M0]
            for c in range(code, code + count):
                sgpr[_sname(c)] = w.s[c]
        elif kind in ("v", "v+m0"):
            _, index, count = item
            if kind == "v+m0":              # v_movreld / v_movrelsd
                index += w.s[M0]
            for r in range(index, min(index + count, 256)):
                vgpr[f"v{r}"] = w.v[r].tolist()
        elif item[0] == "scc":
            rec["scc"] = w.scc
        elif item[0] == "mode":
            rec["mode"] = w.mode.bits
    if sgpr:
        rec["sgpr"] = sgpr
    if vgpr:
        rec["vgpr"] = vgpr
    if w.mem_log:
        rec["mem"] = [list(x) for x in w.mem_log]
    return rec


class CommitTrace:
    """Collects commit records in memory and/or streams them to a ``.jsonl`` file.

    Parameters
    ----------
    path : str or Path, optional
        File to write (one JSON record per line). The file is written as records arrive.
    keep : bool
        Keep the records in :attr:`records` (default True when no path is given).
    """

    def __init__(self, path: str | Path | None = None, keep: bool | None = None) -> None:
        self.records: list[dict[str, Any]] = []
        self.keep = path is None if keep is None else keep
        self._file: IO[str] | None = open(path, "w") if path is not None else None  # noqa: SIM115

    def append(self, record: dict[str, Any]) -> None:
        if self.keep:
            self.records.append(record)
        if self._file is not None:
            self._file.write(json.dumps(record, separators=(",", ":")) + "\n")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> CommitTrace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    """Read a ``.jsonl`` commit trace."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def per_wave(records: Iterable[dict[str, Any]]) -> dict[tuple, list[dict[str, Any]]]:
    """Group records by ``(wg x, wg y, wg z, wave)``, each stream in commit order."""
    out: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        out[(*r["wg"], r["wave"])].append(r)
    return dict(out)
