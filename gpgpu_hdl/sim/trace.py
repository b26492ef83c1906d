"""The RTL's commit trace: decoding the compute unit's packed records into the emulator's trace
format, and comparing two traces wave by wave, instruction by instruction.

The records come from the trace port of a compute unit built with ``trace=True``
(:data:`~gpgpu_hdl.cu.core.TraceLayout`, :data:`~gpgpu_hdl.cu.core.LoadTraceLayout`); the
emulator's format is :mod:`gpgpu_hdl.emu.trace`'s. :func:`compare_traces` is what the lockstep
tests and ``Device("verilator")`` users check a run with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ..cu.salu import CONDITIONAL_WRITES
from ..emu.trace import per_wave
from ..errors import GpgpuError
from ..isa.decoder import decode_one

__all__ = ["decode_trace", "compare_traces", "TraceMismatch", "last_pcs"]


def decode_trace(records: list[int], loads: list[int] | None = None) -> list[dict]:
    """RTL commit records as dicts in the emulator's trace format (values after, see
    :mod:`gpgpu_hdl.emu.trace`); vector values are given for the lanes in ``exec`` only.

    A buffer load retires before its data lands; ``loads`` are the packed
    :data:`~gpgpu_hdl.cu.core.LoadTraceLayout` events that bring it, in the order they were
    written. Each wave slot's events belong to its loads in commit order, one per lane in
    ``exec`` and dword (an out-of-range lane's 0 is an event too). An event for a register the
    load does not write, or one left over after a slot's last load, goes into that record's
    ``"stray"`` list (``(register, lane, value)``), which :func:`compare_traces` reports.

    Fields are cut out of each packed record by the offsets of
    :data:`~gpgpu_hdl.cu.core.TraceLayout` (a record is over 9000 bits; going through
    ``Layout.from_bits`` costs milliseconds a record)."""
    from ..cu.core import TraceLayout
    from ..isa.decoder import SCALAR_NAMES

    scalars = _field_masks(TraceLayout, ("slot", "wave", "pc", "inst", "exec", "s_code",
                                         "s_count", "v_reg", "v_count", "v_late", "scc", "mode",
                                         "exec_after", "vcc_after"))
    group_at = TraceLayout["group"].offset
    s_at = TraceLayout["s_data"].offset
    v_at = TraceLayout["v_data"].offset
    lanes = TraceLayout["v_data"].shape.elem_shape.length
    landed = _landed_loads(loads or [])
    out = []
    last_load: dict[int, dict] = {}         # per wave slot, its latest load record
    for value in records:
        t = {n: (value >> off) & mask for n, (off, mask) in scalars.items()}
        rec: dict[str, Any] = {"wg": [(value >> (group_at + 32 * k)) & 0xFFFFFFFF
                                      for k in range(3)],
                               "wave": t["wave"], "pc": t["pc"],
                               "words": [t["inst"] & 0xFFFFFFFF, t["inst"] >> 32],
                               "exec": t["exec"], "scc": t["scc"], "mode": t["mode"],
                               "exec_after": t["exec_after"], "vcc_after": t["vcc_after"]}
        code = t["s_code"]
        rec["sgpr"] = {SCALAR_NAMES.get(code + k, f"s{code + k}"):
                       (value >> (s_at + 32 * k)) & 0xFFFFFFFF for k in range(t["s_count"])}
        vgpr = {}
        if t["v_count"]:
            nbits = 32 * lanes * t["v_count"]
            raw = ((value >> v_at) & ((1 << nbits) - 1)).to_bytes(nbits // 8, "little")
            words = np.frombuffer(raw, dtype="<u4").reshape(t["v_count"], lanes)
            for k in range(t["v_count"]):
                vgpr[f"v{t['v_reg'] + k}"] = words[k].tolist()
        rec["vgpr"] = vgpr
        if t["v_late"]:
            last_load[t["slot"]] = rec
            events = landed.get(t["slot"], [])
            for _ in range(t["exec"].bit_count() * t["v_count"]):
                if not events:
                    break           # the launch stopped before the data landed
                reg, lane, word = events.pop()
                if reg in vgpr:
                    vgpr[reg][lane] = word
                else:
                    rec.setdefault("stray", []).append((reg, lane, word))
        out.append(rec)
    for slot, events in landed.items():       # events no load of their slot claimed
        owner = last_load.get(slot, out[-1] if out else None)
        if events and owner is not None:
            owner.setdefault("stray", []).extend(reversed(events))
    return out


def _field_masks(layout: Any, names: Sequence[str]) -> dict[str, tuple[int, int]]:
    """(bit offset, mask) of each named field of a struct layout, to cut packed ints."""
    from amaranth.hdl import Shape
    return {n: (layout[n].offset, (1 << Shape.cast(layout[n].shape).width) - 1) for n in names}


def _landed_loads(loads: list[int]) -> dict[int, list[tuple[str, int, int]]]:
    """Load events per wave slot, as (register, lane, value), the first last (to pop)."""
    from ..cu.core import LoadTraceLayout

    at = _field_masks(LoadTraceLayout, ("slot", "reg", "lanes", "value", "copied"))
    values_at = LoadTraceLayout["values"].offset
    per_slot: dict[int, list[tuple[str, int, int]]] = {}
    for value in loads:
        f = {n: (value >> off) & mask for n, (off, mask) in at.items()}
        events = per_slot.setdefault(f["slot"], [])
        events += [(f"v{f['reg']}", lane, f["value"]) for lane in range(64)
                   if f["lanes"] >> lane & 1]
        # lanes that kept the word the load's pass before gave them (``values[lane % 16]``)
        events += [(f"v{f['reg']}", lane, value >> (values_at + 32 * (lane % 16)) & 0xFFFFFFFF)
                   for lane in range(64) if f["copied"] >> lane & 1]
    for events in per_slot.values():
        events.reverse()
    return per_slot


class TraceMismatch(NamedTuple):
    """One difference between two commit traces; ``pc`` is None for whole-wave problems."""

    wave: tuple
    index: int | None
    pc: int | None
    text: str

    def __str__(self) -> str:
        return self.text


def compare_traces(emu: list[dict], rtl: list[dict], limit: int = 20) -> list[TraceMismatch]:
    """Differences between an emulator trace and an RTL trace, wave by wave, instruction by
    instruction (empty when they agree). Vector registers are compared on the lanes that ran
    (EXEC before the instruction); scalar destinations, EXEC and VCC after each instruction.
    A wave's comparison stops at its first differing instruction."""
    problems: list[TraceMismatch] = []
    ew, rw = per_wave(emu), per_wave(rtl)
    if set(ew) != set(rw):
        problems.append(TraceMismatch((), None, None, f"waves differ: emulator "
                                      f"{sorted(ew)[:4]}..., RTL {sorted(rw)[:4]}..."))
    for key in sorted(set(ew) & set(rw)):
        a, b = ew[key], rw[key]
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = _record_differences(x, y)
            if found:
                where = f"wave {key} instruction {i} (pc {x['pc']:#x} {x.get('op', '')})"
                problems += [TraceMismatch(key, i, x["pc"], f"{where}: {t}") for t in found]
                break
        else:
            if len(a) != len(b):
                problems.append(TraceMismatch(key, None, None, f"wave {key}: emulator "
                                              f"retired {len(a)} instructions, RTL {len(b)}"))
        if len(problems) >= limit:
            break
    return problems


def last_pcs(records: list[dict] | None, show: int = 4) -> str:
    """Where the waves of a stopped launch were: the last pc each retired (traced runs)."""
    if not records:
        return ""
    last = {key: stream[-1]["pc"] for key, stream in per_wave(records).items()}
    shown = ", ".join(f"wave {k} at pc {pc:#x}" for k, pc in list(last.items())[-show:])
    return f"; last retired: {shown}"


def _mnemonic(record: dict) -> str:
    raw = b"".join(w.to_bytes(4, "little") for w in record["words"][:2])
    try:
        return decode_one(raw + bytes(8 - len(raw))).info.mnemonic
    except GpgpuError:
        return ""


def _record_differences(x: dict, y: dict) -> list[str]:
    """How RTL record ``y`` differs from emulator record ``x`` of the same instruction."""
    if x["pc"] != y["pc"]:
        return [f"RTL is at pc {y['pc']:#x}"]
    out = []
    lanes = x["exec"]
    if lanes != y["exec"]:
        out.append(f"EXEC before: emulator {lanes:#x} RTL {y['exec']:#x}")
    for reg, values in x.get("vgpr", {}).items():
        got = y["vgpr"].get(reg)
        if got is None:
            out.append(f"RTL did not write {reg}")
            continue
        bad = [n for n in range(64) if lanes >> n & 1 and values[n] != got[n]]
        if bad:
            n = bad[0]
            out.append(f"{reg} lane {n} emulator {values[n]:#x} RTL {got[n]:#x} "
                       f"({len(bad)} lanes differ)")
    for reg, value in x.get("sgpr", {}).items():
        if reg in ("exec_lo", "exec_hi", "vcc_lo", "vcc_hi"):
            full = y["exec_after"] if reg.startswith("exec") else y["vcc_after"]
            got = full & 0xFFFFFFFF if reg.endswith("lo") else full >> 32
        else:
            got = y["sgpr"].get(reg)
        if got is None:
            if not (y["scc"] == 0 and _mnemonic(x) in CONDITIONAL_WRITES):
                out.append(f"RTL did not write {reg}")
        elif got != value:
            out.append(f"{reg} emulator {value:#x} RTL {got:#x}")
    if "scc" in x and x["scc"] != y["scc"]:
        out.append(f"SCC emulator {x['scc']} RTL {y['scc']}")
    for reg, lane, value in y.get("stray", [])[:4]:
        out.append(f"RTL load data {value:#x} for {reg} lane {lane} matches no register of "
                   f"this wave's loads")
    return out
