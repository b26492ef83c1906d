"""The SoC's host register map, written once in the language of :mod:`gpgpu_hdl.soc.registers`.

:func:`soc_register_map` is *the* SoC's map. Its dispatch, trap and counter registers are
derived from :data:`~gpgpu_hdl.cu.core.DispatchLayout`, :data:`~gpgpu_hdl.cu.core.TrapLayout`
and :data:`~gpgpu_hdl.cu.core.CountersLayout`, and its profile bitmap from the compute unit's
:class:`~gpgpu_hdl.cu.plan.BuildPlan`, so none of them is typed twice.

Around it:

* the identity and the fixed layout every build shares (:data:`SOC_ID`, :data:`SOC_VERSION`,
  :data:`SOC_BLOCKS`, :data:`SOC_WINDOW_OFFSET`);
* the profile bitmap both ways (:func:`profile_bitmap`, :func:`decode_profile`,
  :func:`built_mnemonics`);
* the host's launch writes (:func:`dispatch_writes`);
* the glue :class:`~gpgpu_hdl.soc.top.SocTop` uses between the layouts and the ports of
  :class:`~gpgpu_hdl.soc.axil_registers.AxiLiteRegisters` (:func:`dispatch_assignments`,
  :func:`counters_assignments`, :func:`trap_assignments`).

``docs/regmap.md`` documents this map (:mod:`gpgpu_hdl.soc.regdoc` writes it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from amaranth.hdl import Shape
from amaranth.lib import data

from ..config import CuConfig
from ..cu.core import CountersLayout, DispatchLayout, TrapCause, TrapLayout
from ..cu.plan import BuildPlan
from ..isa.table import TABLE
from .registers import Block, Field, Register, RegisterMap, RegMapError, Rom, Window
from .registers import bit_mask, pow2_ceil

if TYPE_CHECKING:
    from .axil_registers import AxiLiteRegisters

__all__ = [
    "SOC_ID", "SOC_VERSION", "SOC_BLOCKS", "SOC_WINDOW_OFFSET", "soc_register_map",
    "built_mnemonics", "profile_bitmap", "decode_profile", "dispatch_writes",
    "dispatch_assignments", "trap_assignments", "counters_assignments",
]

#: Value of the ``ID`` register: ASCII ``"GPGP"``, most significant byte first.
SOC_ID = 0x4750_4750
#: ``(major, minor)`` of the register map; ``major`` changes when an existing register moves
#: or changes meaning, ``minor`` when registers are added.
SOC_VERSION = (1, 2)
#: Fixed byte bases of the SoC map's blocks: ``ID`` and ``VERSION`` are at 0x0 and 0x4 in
#: every build, and every other block starts at the same place whatever the configuration.
SOC_BLOCKS = {"INFO": 0x000, "CONFIG": 0x040, "CONTROL": 0x100, "TRAP": 0x140,
              "DISPATCH": 0x200, "COUNTERS": 0x300, "PROFILE": 0x400}
#: Byte offset of the ``prefetch`` window (a higher power of two for a buffer over 64 KiB).
SOC_WINDOW_OFFSET = 0x1_0000
#: Where the registers end: the address width without a window covers this.
_SOC_REGISTER_SPACE = 0x1_0000

_AXES = "XYZ"


def _leaves(shape, path: tuple = ()) -> Iterable[tuple[tuple, int]]:
    """``(path, width)`` of each scalar leaf of a layout, in layout order; a path holds field
    names and array indices."""
    if isinstance(shape, data.ArrayLayout):
        for i in range(shape.length):
            yield from _leaves(shape.elem_shape, (*path, i))
    elif isinstance(shape, data.StructLayout):
        for name, f in shape:
            yield from _leaves(f.shape, (*path, name))
    elif isinstance(shape, data.Layout):
        raise RegMapError(f"cannot derive registers from a {type(shape).__name__}")
    else:
        yield path, Shape.cast(shape).width


def _leaf_name(layout: data.StructLayout, path: tuple) -> str:
    """``("grid", 0)`` -> ``GRID_X`` (3-element arrays are X/Y/Z, others numbered)."""
    parts, shape = [], layout
    for step in path:
        if isinstance(step, int):
            parts.append(_AXES[step] if shape.length == 3 else str(step))
            shape = shape.elem_shape
        else:
            parts.append(step.upper())
            shape = shape[step].shape
    return "_".join(parts)


def _leaf_label(path: tuple) -> str:
    return "".join(f"[{s}]" if isinstance(s, int) else ("." if i else "") + s
                   for i, s in enumerate(path))


def _view_leaf(view, path: tuple):
    for step in path:
        view = view[step] if isinstance(step, int) else getattr(view, step)
    return view


def _layout_registers(prefix: str, layout: data.StructLayout, access: str,
                      source: str) -> list[tuple[Register, tuple]]:
    out = []
    for path, width in _leaves(layout):
        name = f"{prefix}_{_leaf_name(layout, path)}"
        doc = f"`{source}` field `{_leaf_label(path)}`"
        out.append((Register.single(name, width, access, doc=doc), path))
    return out


def _dispatch_registers() -> list[tuple[Register, tuple]]:
    return _layout_registers("DISPATCH", DispatchLayout, "rw", "DispatchLayout")


def _counter_registers() -> list[tuple[Register, tuple]]:
    return _layout_registers("COUNTERS", CountersLayout, "ro", "CountersLayout")


def _trap_causes() -> str:
    return ", ".join(f"{c.value} {c.name.lower()}" for c in sorted(TrapCause))


def built_mnemonics(config: CuConfig) -> frozenset[str]:
    """The table mnemonics a compute unit of ``config`` decodes as legal (its build plan's
    profile: the configured profile less what the hardware lacks, less DS without LDS)."""
    return BuildPlan.of(config.profile, lds_bytes=config.lds_bytes).profile


def profile_bitmap(mnemonics: Iterable[str]) -> tuple[int, ...]:
    """The ``PROFILE`` ROM words: bit ``i % 32`` of word ``i // 32`` is set when
    ``TABLE.entries[i]`` is in ``mnemonics``."""
    wanted = frozenset(mnemonics)
    words = [0] * (-(-len(TABLE) // 32))
    for i, info in enumerate(TABLE):
        if info.mnemonic in wanted:
            words[i // 32] |= 1 << (i % 32)
    return tuple(words)


def decode_profile(words: Sequence[int]) -> frozenset[str]:
    """The mnemonics of a ``PROFILE`` bitmap read back from the device (host side)."""
    if len(words) * 32 < len(TABLE):
        raise ValueError(f"a profile bitmap has {-(-len(TABLE) // 32)} words, not {len(words)}")
    return frozenset(info.mnemonic for i, info in enumerate(TABLE)
                     if words[i // 32] >> (i % 32) & 1)


def soc_register_map(config: CuConfig, *, cus: int, prefetch_bytes: int) -> RegisterMap:
    """The SoC's host register map for ``cus`` compute units of ``config`` and a prefetch buffer
    of ``prefetch_bytes`` (0: none, no ``prefetch`` window).

    The blocks start at :data:`SOC_BLOCKS`; the ``prefetch`` window at
    :data:`SOC_WINDOW_OFFSET`. ``addr_width`` is 16 without the window, 17 with a window of up
    to 64 KiB.
    """
    if isinstance(cus, bool) or not isinstance(cus, int) or not 1 <= cus <= 256:
        raise RegMapError(f"cus must be an integer from 1 to 256, not {cus!r}")
    if isinstance(prefetch_bytes, bool) or not isinstance(prefetch_bytes, int) \
            or prefetch_bytes < 0 or prefetch_bytes % 4:
        raise RegMapError(f"prefetch_bytes must be 0 or a positive multiple of 4, "
                          f"not {prefetch_bytes!r}")
    plan = BuildPlan.of(config.profile, lds_bytes=config.lds_bytes)

    def const(name: str, value: int, doc: str) -> Register:
        return Register.single(name, 32, "const", reset=value, doc=doc, per_build=True)

    info = Block("INFO", SOC_BLOCKS["INFO"], [
        Register.single("ID", 32, "const", reset=SOC_ID,
                        doc=f'Identifies the SoC: `{SOC_ID:#010x}` (ASCII "GPGP")'),
        Register("VERSION", [
            Field("minor", 16, "const", reset=SOC_VERSION[1],
                  doc="Register map minor version (registers added)"),
            Field("major", 16, "const", reset=SOC_VERSION[0],
                  doc="Register map major version (registers moved or changed)"),
        ], doc="Version of this register map"),
    ], doc="Identification; these offsets never change.")
    config_block = Block("CONFIG", SOC_BLOCKS["CONFIG"], [
        const("LANES", config.lanes, "Lanes per VALU (`CuConfig.lanes`)"),
        const("VALUS", 1, "Vector ALUs per compute unit (one)"),
        const("WAVE_SLOTS", config.wave_slots, "Wave slots per compute unit"),
        const("VGPRS", config.vgprs, "VGPRs per wave"),
        const("SGPRS", config.sgprs, "SGPRs per wave (VCC included)"),
        const("LDS_BYTES", config.lds_bytes, "LDS bytes per compute unit (0: none)"),
        const("IMEM_BYTES", config.imem_bytes, "Instruction memory bytes per compute unit"),
        const("CUS", cus, "Compute units"),
        const("PREFETCH_BYTES", prefetch_bytes, "Prefetch buffer bytes (0: none)"),
        Register("FEATURES", [
            Field("fp32", 1, "const", reset=int(bool(plan.fp_ops)), per_build=True,
                  doc="The lanes have an FP32 unit (some FP32 instruction is built)"),
        ], doc="Optional hardware that is built"),
        Register.single("PROFILE_ENTRIES", 32, "const", reset=len(TABLE),
                        doc="Instruction table entries, the bits of the `PROFILE` ROM"),
    ], doc="The build configuration (constants).")
    control = Block("CONTROL", SOC_BLOCKS["CONTROL"], [
        Register("CONTROL", [
            Field("start", 1, "pulse",
                  doc="Write 1: launch the dispatch held in the `DISPATCH_*` registers"),
            Field("abort", 1, "pulse",
                  doc="Write 1: stop the running launch; every compute unit stops at its next "
                      "instruction boundary (`TRAP_CAUSE` then reads ABORT)"),
            Field("irq_enable", 1, "rw", doc="Raise `irq` while `STATUS.done` is set"),
            Field("reset", 1, "pulse",
                  doc="Write 1: soft reset. A running launch is aborted as by `abort` "
                      "(`STATUS.busy` reads 1 until every unit has stopped) and raises no "
                      "`done`; then `STATUS`, the `TRAP` block and the counters read 0. "
                      "Registers the host wrote and the prefetch buffer keep their contents"),
        ], doc="Launch control"),
        Register("STATUS", [
            Field("busy", 1, "ro", doc="A launch is running"),
            Field("done", 1, "w1c", doc="A launch has finished (set by the hardware, "
                  "write 1 to clear)"),
            Field("trap", 1, "ro", doc="The last launch trapped (`TRAP_CAUSE` is not 0)"),
            Field("mem_error", 1, "w1c", doc="A global memory access failed, see "
                  "`MEM_ERROR_ADDR` (write 1 to clear)"),
            Field("irq", 1, "irq", doc="The interrupt line: `done` and `CONTROL.irq_enable`"),
        ], doc="Launch status"),
        Register.single("PREFETCH_BASE", 32, "rw",
                        doc="Global byte address whose `PREFETCH_BYTES` bytes the prefetch "
                            "buffer holds (ignored without a prefetch buffer)"),
        Register.single("SCRATCH_STRIDE", 32, "rw",
                        doc="Bytes between the scratch areas of the compute units: unit `i` "
                            "uses `DISPATCH_SCRATCH_ADDRESS + i * SCRATCH_STRIDE`"),
    ], doc="Launch control and status.")
    trap_regs: list[Register] = []
    for path, width in _leaves(TrapLayout):
        name = f"TRAP_{_leaf_name(TrapLayout, path)}"
        doc = f"`TrapLayout` field `{_leaf_label(path)}` of the trapping wave"
        if path == ("cause",):
            doc = f"Why the last launch stopped early: {_trap_causes()}"
        trap_regs.append(Register.single(name, width, "ro", doc=doc))
        if path == ("cause",):
            trap_regs.append(Register.single("TRAP_CU", 8, "ro",
                                             doc="Compute unit that trapped"))
    trap = Block("TRAP", SOC_BLOCKS["TRAP"], [
        *trap_regs,
        Register.single("MEM_ERROR_ADDR", 32, "ro",
                        doc="Byte address of the first failed global memory access"),
    ], doc="Why the last launch stopped (valid when `STATUS.trap` or `STATUS.mem_error`).")
    dispatch = Block("DISPATCH", SOC_BLOCKS["DISPATCH"], [r for r, _ in _dispatch_registers()],
                     doc="The launch, one register per `DispatchLayout` field "
                         "(see `dispatch_writes`); hold while `STATUS.busy`.")
    counters = Block("COUNTERS", SOC_BLOCKS["COUNTERS"], [r for r, _ in _counter_registers()],
                     doc="Performance counters of the last launch, valid once `STATUS.busy` "
                         "is 0 (they cross from the compute units' clock domain, and a read "
                         "during a launch may catch a value in mid-change); read `_LO` "
                         "before `_HI` (the read of `_LO` latches `_HI`).")
    profile = Block("PROFILE", SOC_BLOCKS["PROFILE"], [
        Rom("PROFILE", profile_bitmap(plan.profile), per_build=True,
            doc="Bit `i % 32` of word `i // 32` is set when instruction table entry `i` "
                "is built (see `decode_profile`)"),
    ], doc="The instructions this bitstream executes.")
    windows = []
    addr_width = (_SOC_REGISTER_SPACE - 1).bit_length()
    if prefetch_bytes:
        win = Window("prefetch", max(SOC_WINDOW_OFFSET, pow2_ceil(prefetch_bytes)),
                     prefetch_bytes,
                     doc="The prefetch buffer's block RAM, `PREFETCH_BYTES` bytes: byte `i` "
                         "holds global address `PREFETCH_BASE + i`")
        windows.append(win)
        addr_width = (win.offset + win.span - 1).bit_length()
    return RegisterMap([info, config_block, control, trap, dispatch, counters, profile],
                       windows=windows, irq=[("STATUS.done", "CONTROL.irq_enable")],
                       addr_width=addr_width, title="SoC host register map", doc=_SOC_DOC)


_SOC_DOC = """\
## Launching a kernel

1. Read `ID` (`0x47504750`) and `VERSION.major` to check the device; `CONFIG` and `PROFILE`
   say what it was built with.
2. Put the code object, the kernel arguments and the buffers in global memory. With a prefetch
   buffer, write `PREFETCH_BASE` and fill the `prefetch` window.
3. Write every `DISPATCH_*` register: `dispatch_writes(regmap, dispatch_fields(...))` gives
   the (offset, value) pairs.
4. Write 1 to `STATUS.done` and `STATUS.mem_error` to clear what a previous launch left.
5. Write `CONTROL` with `start` = 1 (and `irq_enable` = 1 to be interrupted: both bits are in
   the same register, so write them together).
6. Poll `STATUS` until `done` is 1, or wait for `irq`.
7. If `STATUS.trap` is 1, `TRAP_*` say where and why; if `STATUS.mem_error` is 1,
   `MEM_ERROR_ADDR` says which access failed.
8. Read the `COUNTERS_*` registers (`_LO` first), then write 1 to `STATUS.done` (this drops
   `irq`).

The host finds every offset and bit by name: `regmap.offset("STATUS")`,
`regmap.field("STATUS", "done").lsb`, `regmap.encode("CONTROL", start=1, irq_enable=1)`.
"""


def dispatch_writes(regmap: RegisterMap, fields: Mapping[str, object]) -> list[tuple[int, int]]:
    """The ``(byte offset, value)`` register writes that load a launch: ``fields`` holds the
    :data:`~gpgpu_hdl.cu.core.DispatchLayout` field values, as
    :func:`gpgpu_hdl.dispatch.dispatch_fields` returns them (arrays as sequences)."""
    top = {name for name, _ in DispatchLayout}
    extra = sorted(set(fields) - top)
    missing = sorted(top - set(fields))
    if extra or missing:
        raise RegMapError(f"dispatch fields: unknown {extra}, missing {missing}")
    out = []
    for reg, path in _dispatch_registers():
        value = fields
        for step in path:
            value = value[step]
        width = reg.fields[0].width
        if not isinstance(value, int) or not 0 <= value <= bit_mask(width):
            raise RegMapError(f"dispatch field {_leaf_label(path)} = {value!r} does not fit "
                              f"{width} bits")
        out.append((regmap.offset(reg.name), value))
    return out


def dispatch_assignments(regs: AxiLiteRegisters, dispatch) -> list:
    """Statements driving a :data:`~gpgpu_hdl.cu.core.DispatchLayout` view from the
    registers' ``dispatch_*`` ports (for ``m.d.comb``)."""
    return [_view_leaf(dispatch, path).eq(getattr(regs, reg.name.lower()))
            for reg, path in _dispatch_registers()]


def counters_assignments(regs: AxiLiteRegisters, counters) -> list:
    """Statements driving the registers' ``counters_*`` ports from a
    :data:`~gpgpu_hdl.cu.core.CountersLayout` view (for ``m.d.comb``)."""
    return [getattr(regs, reg.name.lower()).eq(_view_leaf(counters, path))
            for reg, path in _counter_registers()]


def trap_assignments(regs: AxiLiteRegisters, trap, cu) -> list:
    """Statements driving the registers' ``trap_*`` ports and ``status_trap`` from a
    :data:`~gpgpu_hdl.cu.core.TrapLayout` view and the trapping CU's index (``m.d.comb``)."""
    out = [regs.trap_cu.eq(cu), regs.status_trap.eq(trap.cause != 0)]
    for path, _ in _leaves(TrapLayout):
        port = f"trap_{_leaf_name(TrapLayout, path).lower()}"
        out.append(getattr(regs, port).eq(_view_leaf(trap, path)))
    return out
