"""The one typed configuration of a compute unit.

Every generator parameter lives in :class:`CuConfig`: a frozen, keyword-only dataclass that
validates itself on construction, with messages that say what is allowed. The default fits an
ECP5-85F (LFE5U-85F: 208 EBR of 18 Kbit, 156 multiplier DSPs) with room to spare; see
:meth:`CuConfig.resources` for the block-RAM estimate it is checked against. The pipelined
unit's estimate follows that unit's memories, which the gateware defines
(:mod:`gpgpu_hdl.cu.block_rams`, a layer above this module): it is opened by name when a
pipelined configuration is checked, as the runtime opens its backends, so that this module
imports no gateware.

The *profile* is the set of table mnemonics the unit is built to execute: ``"full"`` (every
instruction of the table) or the mnemonics a trimmer profile keeps. Anything outside it is an
illegal instruction that traps.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import GpgpuError
from .isa.table import TABLE

__all__ = ["ConfigError", "CuConfig", "Resources", "DEVICES", "SHIFTER_STYLES"]

_POWERS_OF_TWO_TO_64 = (1, 2, 4, 8, 16, 32, 64)
_EBR_BYTES = 2048            # one ECP5 EBR: 18 Kbit, 16 Kbit of data in x32 or x16 modes
#: module and function of the pipelined unit's block-RAM estimate (``config -> Resources``)
_PIPELINED_ESTIMATE = ("gpgpu_hdl.cu.block_rams", "pipelined_resources")

#: The values the configuration's shifter style may take: a barrel shifter, or the eGPU
#: shifter built on the multiplier (:mod:`gpgpu_hdl.cu.shifter`).
SHIFTER_STYLES = ("barrel", "multiplier")


class ConfigError(GpgpuError, ValueError):
    """An invalid or unfittable configuration."""


@dataclass(frozen=True)
class Device:
    """What a target FPGA offers to the compute unit."""

    name: str
    ebr: int                 # 18-Kbit block RAMs
    dsp: int                 # 18x18 multipliers


#: Targets the configuration can be checked against.
DEVICES = {
    "LFE5U-25F": Device("LFE5U-25F", 56, 28),
    "LFE5U-45F": Device("LFE5U-45F", 108, 72),
    "LFE5U-85F": Device("LFE5U-85F", 208, 156),
}


@dataclass(frozen=True)
class Resources:
    """Block-RAM estimate of a configuration, in ECP5 EBRs (18-Kbit block RAMs).

    Attributes
    ----------
    vgpr_ebr, sgpr_ebr, lds_ebr, imem_ebr : int
        The VGPR file, the SGPR file, the LDS and the instruction memory.
    landing_ebr : int
        The pipelined unit's landing RAMs (the buffer and LDS units' operands of the passes in
        flight); 0 for the multi-cycle unit.
    decode_ebr : int
        The pipelined unit's decode tables in block RAM (the instruction decoder's ROM and
        the scalar ALU's control table); 0 for the multi-cycle unit, whose tables are logic.
    """

    vgpr_ebr: int
    sgpr_ebr: int
    lds_ebr: int
    imem_ebr: int
    landing_ebr: int = 0
    decode_ebr: int = 0

    @property
    def ebr(self) -> int:
        return sum(getattr(self, f.name) for f in dataclasses.fields(self))

    def parts(self) -> dict[str, int]:
        """EBRs by part, named as the messages name them: VGPRs, SGPRs, LDS, instructions,
        and the landing RAMs and decode tables when there are any."""
        parts = {"VGPRs": self.vgpr_ebr, "SGPRs": self.sgpr_ebr, "LDS": self.lds_ebr,
                 "instructions": self.imem_ebr}
        for name, ebrs in (("landing RAMs", self.landing_ebr),
                           ("decode tables", self.decode_ebr)):
            if ebrs:
                parts[name] = ebrs
        return parts

    def breakdown(self) -> str:
        """``"VGPRs 64, SGPRs 6, LDS 16, instructions 8, landing RAMs 19, decode tables
        7"``: :meth:`parts` as the messages print them."""
        return ", ".join(f"{name} {ebrs}" for name, ebrs in self.parts().items())

    def to_dict(self) -> dict[str, int]:
        """``ebr`` (the total) and the fields, for the reports' JSON."""
        return {"ebr": self.ebr, **dataclasses.asdict(self)}


def _ebrs(nbytes: int, banks: int = 1) -> int:
    """EBRs for ``nbytes`` split over ``banks`` independent memories (each at least one)."""
    if nbytes == 0:
        return 0
    per_bank = -(-nbytes // banks)
    return banks * -(-per_bank // _EBR_BYTES)


def _choice(name: str, value: object, allowed: Iterable[object]) -> None:
    allowed = tuple(allowed)
    if isinstance(value, bool) or value not in allowed:
        listed = ", ".join(str(a) for a in allowed)
        raise ConfigError(f"{name} must be one of {listed}, not {value!r}")


def _range(name: str, value: object, low: int, high: int, multiple: int = 1) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high \
            or value % multiple:
        extra = f" and a multiple of {multiple}" if multiple > 1 else ""
        raise ConfigError(f"{name} must be an integer from {low} to {high}{extra}, "
                          f"not {value!r}")


def _power_of_two(name: str, value: object, low: int, high: int, zero: bool = False) -> None:
    ok = isinstance(value, int) and not isinstance(value, bool) and (
        (zero and value == 0) or (low <= value <= high and value & (value - 1) == 0))
    if not ok:
        what = "0 or " if zero else ""
        raise ConfigError(f"{name} must be {what}a power of two from {low} to {high}, "
                          f"not {value!r}")


@dataclass(frozen=True, kw_only=True)
class CuConfig:
    """Parameters of one compute unit.

    Attributes
    ----------
    lanes : int
        Lanes per VALU (1, 2, ..., 64); a wave64 instruction takes ``64 // lanes`` passes.
        The default, 1, leaves an LFE5U-85F room to spare with the whole FP32 unit: 48 % of
        its LUT sites, 31 % of its multipliers, and nextpnr routes it at about 20 MHz. Each
        lane carries its own integer ALU and FP32 unit (about 16,600 LUT4 more per lane); the
        2-lane unit places at 74 % of the LUT sites but nextpnr cannot route it, and 8 lanes
        with FP32 do not fit (``docs/synth.md``).
    wave_slots : int
        Wavefront contexts held by the unit (1 to 40); more hide more latency.
    vgprs : int
        VGPRs per wave (4 to 256, a multiple of 4).
    sgprs : int
        SGPRs per wave including VCC (8 to 104, a multiple of 8).
    lds_bytes : int
        LDS size (0 for none, else a power of two from 256 to 65536).
    imem_bytes : int
        Instruction memory (a power of two from 256 to 65536 bytes).
    shifter : str
        ``"barrel"`` or ``"multiplier"`` (the eGPU multiplier-based shifter).
    profile : frozenset of str
        Mnemonics to build (``"full"`` = the whole table).
    device : str
        FPGA the configuration must fit (a key of :data:`DEVICES`).
    pipeline : bool
        Build the pipelined compute unit (:class:`~gpgpu_hdl.cu.pipelined.PipelinedComputeUnit`,
        4, 8 or 16 lanes; it does not run every instruction yet, docs/cu.md) instead of the
        multi-cycle one.
    vgpr_sides : int
        The pipelined unit's VGPR file: 2 (the default) gives the fast vector unit a read
        collector and a write port of its own beside those the buffer, LDS and slow units
        share (two requests or writes naming different banks go in one cycle); 1 gives all
        of them one collector and one write port, the vector unit's write-back first, for
        less area and fewer cycles' overlap (docs/cu.md has both's figures). The multi-cycle
        unit takes 2 only.
    lds_width : int
        The pipelined unit's LDS: lanes served a cycle (1, 2, 4, 8 or 16, at most ``lanes``),
        and its banks, as many; a conflict-free full-wave access takes ``64 / lds_width``
        cycles. Its area grows with about the square of it (docs/cu.md has the figures). The
        multi-cycle unit takes 4 only (it has an LDS of its own).
    """

    lanes: int = 1
    wave_slots: int = 8
    vgprs: int = 64
    sgprs: int = 104
    lds_bytes: int = 32768
    imem_bytes: int = 16384
    shifter: str = "multiplier"
    profile: frozenset[str] | str = "full"
    device: str = "LFE5U-85F"
    pipeline: bool = False
    vgpr_sides: int = 2
    lds_width: int = 4

    def __post_init__(self) -> None:
        _choice("lanes", self.lanes, _POWERS_OF_TWO_TO_64)
        _range("wave_slots", self.wave_slots, 1, 40)
        _range("vgprs", self.vgprs, 4, 256, 4)
        _range("sgprs", self.sgprs, 8, 104, 8)
        _power_of_two("lds_bytes", self.lds_bytes, 256, 65536, zero=True)
        _power_of_two("imem_bytes", self.imem_bytes, 256, 65536)
        _choice("shifter", self.shifter, SHIFTER_STYLES)
        _choice("device", self.device, DEVICES)
        if not isinstance(self.pipeline, bool):
            raise ConfigError(f"pipeline must be True or False, not {self.pipeline!r}")
        _choice("vgpr_sides", self.vgpr_sides, (1, 2))
        if self.vgpr_sides != 2 and not self.pipeline:
            raise ConfigError(f"vgpr_sides={self.vgpr_sides} is the pipelined unit's "
                              f"(pipeline=true); the multi-cycle unit's VGPRs have one port")
        _choice("lds_width", self.lds_width, (1, 2, 4, 8, 16))
        if self.lds_width != 4 and not self.pipeline:
            raise ConfigError(f"lds_width={self.lds_width} is the pipelined unit's "
                              f"(pipeline=true); the multi-cycle unit has an LDS of its own")
        if self.pipeline and self.lanes not in (4, 8, 16):
            raise ConfigError(f"the pipelined compute unit has 4, 8 or 16 lanes, not "
                              f"{self.lanes!r}")
        if self.pipeline and self.lds_width > self.lanes:
            raise ConfigError(f"lds_width={self.lds_width} is more than the {self.lanes} "
                              f"lanes")
        profile = self.profile
        if isinstance(profile, str):
            profile = frozenset({profile})
        try:
            profile = frozenset(profile)
        except TypeError:
            raise ConfigError(f"profile must be 'full' or a set of mnemonics, "
                              f"not {self.profile!r}") from None
        if profile == {"full"}:
            profile = frozenset(info.mnemonic for info in TABLE)
        known = {info.mnemonic for info in TABLE}
        unknown = sorted(m for m in profile if m not in known)
        if unknown:
            shown = ", ".join(unknown[:5]) + (" ..." if len(unknown) > 5 else "")
            raise ConfigError(f"profile names instructions the table does not have: {shown}")
        object.__setattr__(self, "profile", profile)
        res, dev = self.resources(), DEVICES[self.device]
        if res.ebr > dev.ebr:
            raise ConfigError(
                f"does not fit {dev.name}: needs about {res.ebr} EBR ({res.breakdown()}) of "
                f"{dev.ebr}; reduce wave_slots, vgprs, lanes or lds_bytes")

    def key(self) -> str:
        """A canonical text of this configuration, equal across processes (the profile is a
        frozenset, whose ``repr`` order changes with hash randomization): cache keys use it."""
        # ``pipeline`` only when set, ``vgpr_sides`` and ``lds_width`` only when not their
        # defaults, so that the keys of the configurations before them (and the caches they
        # name) stay what they were
        defaults = {"vgpr_sides": 2, "lds_width": 4}
        fields = [f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self)
                  if f.name != "profile" and (f.name != "pipeline" or self.pipeline)
                  and getattr(self, f.name) != defaults.get(f.name, object())]
        profile = "full" if self.is_full else ",".join(sorted(self.profile))
        return ";".join([*fields, f"profile={profile}"])

    @property
    def passes(self) -> int:
        """VALU passes per wave64 instruction."""
        return 64 // self.lanes

    @property
    def is_full(self) -> bool:
        return len(self.profile) == len(TABLE)

    def resources(self) -> Resources:
        """Block RAM (ECP5 EBRs) the unit of this configuration needs.

        The multi-cycle unit: the register files, the LDS and the instruction memory by their
        bytes, the VGPR file banked per lane (``lanes`` banks, each holding its lane's
        registers of every wave slot). The pipelined unit: every memory it puts in block RAM
        as Yosys maps it, also its landing RAMs and decode tables
        (:func:`gpgpu_hdl.cu.block_rams.pipelined_resources`)."""
        if self.pipeline:
            module, function = _PIPELINED_ESTIMATE
            return getattr(importlib.import_module(module), function)(self)
        banks = self.lanes
        vgpr_bytes = self.wave_slots * self.vgprs * 64 * 4
        return Resources(vgpr_ebr=_ebrs(vgpr_bytes, banks),
                         sgpr_ebr=_ebrs(self.wave_slots * self.sgprs * 4),
                         lds_ebr=_ebrs(self.lds_bytes),
                         imem_ebr=_ebrs(self.imem_bytes))

    def check_kernel(self, name: str, vgprs: int, sgprs: int, lds_bytes: int) -> None:
        """Raise ConfigError if a kernel needs more registers or LDS than this unit has."""
        for what, need, have in (("VGPRs", vgprs, self.vgprs), ("SGPRs", sgprs, self.sgprs),
                                 ("bytes of LDS", lds_bytes, self.lds_bytes)):
            if need > have:
                raise ConfigError(f"kernel {name} needs {need} {what}; this compute unit "
                                  f"has {have}")
