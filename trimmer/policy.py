"""Trimming policy: from an application profile to the configuration of a trimmed compute unit.

Step 2 of the trimming (after :mod:`trimmer.profile`): the trimmed unit decodes exactly the
instructions of the kernels (plus what ``keep`` adds, less what ``drop`` removes), builds only
the parts (:data:`gpgpu_hdl.cu.plan.PARTS`) those instructions need, sizes the VGPR file and the
LDS to the kernels' headers, and picks the shifter style by cost: the eGPU multiplier-based
shifter rides on the lane multiplier when the multiplier stays, a barrel shifter is cheaper when
it goes. Which mnemonics belong to a part is derived from :class:`~gpgpu_hdl.cu.plan.BuildPlan`
itself (the part a one-instruction plan keeps), so the policy, the hardware and the report can
not disagree.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.cu.decode import SUPPORTED_MNEMONICS
from gpgpu_hdl.cu.plan import LDS_MNEMONICS, PARTS, BuildPlan
from gpgpu_hdl.errors import GpgpuError

from .profile import Profile

__all__ = ["TrimError", "Decision", "Trim", "Full", "DROPPED", "part_members", "trim",
           "full_unit", "trim_config"]


class TrimError(GpgpuError):
    """A trimming request that cannot be carried out."""


@functools.cache
def part_members(part: str) -> frozenset[str]:
    """The implemented mnemonics that keep ``part`` (a name of :data:`PARTS`)."""
    if part not in PARTS:
        raise TrimError(f"unknown part {part!r}; parts are {', '.join(PARTS)}")
    return frozenset(m for m in SUPPORTED_MNEMONICS
                     if part in BuildPlan.of(frozenset({m}), lds_bytes=65536).users)


@dataclass(frozen=True)
class Decision:
    """Why a part is kept or dropped."""

    part: str
    kept: bool
    reason: str


@dataclass(frozen=True)
class Trim:
    """A trimming: the untrimmed and the trimmed configuration, and why they differ.

    Attributes
    ----------
    profile : Profile
        What the kernels use.
    base, config : CuConfig
        The untrimmed unit (``--full``) and the trimmed one.
    plan, base_plan : BuildPlan
        What each builds.
    decisions : tuple of Decision
        One per part of :data:`~gpgpu_hdl.cu.plan.PARTS`.
    sizing : dict
        Register file and LDS sizes, base and trimmed, with the reason.
    unsupported : dict of str to tuple of str
        Instructions the kernels use that the hardware does not implement (they would trap),
        with the kernels that use them.
    """

    profile: Profile
    base: CuConfig
    config: CuConfig
    plan: BuildPlan
    base_plan: BuildPlan
    decisions: tuple[Decision, ...]
    sizing: dict
    unsupported: dict

    def to_dict(self) -> dict:
        return {
            "base": dataclasses.asdict(self.base) | {"profile": "full"},
            "trimmed": dataclasses.asdict(self.config) | {
                "profile": sorted(self.config.profile)},
            "parts": [{"part": d.part, "kept": d.kept, "reason": d.reason}
                      for d in self.decisions],
            "sizing": self.sizing,
            "unsupported": {m: list(k) for m, k in self.unsupported.items()},
            "decode_entries": {"base": len(self.base_plan.profile),
                               "trimmed": len(self.plan.profile)},
        }


#: The reason of a part dropped by ``--drop`` (the user's request, not the kernels' need).
DROPPED = "dropped on request (--drop)"


def _pow2_at_least(n: int, low: int) -> int:
    size = low
    while size < n:
        size *= 2
    return size


def _names(mnemonics: Iterable[str], show: int = 3) -> str:
    names = list(mnemonics)
    more = f" and {len(names) - show} more" if len(names) > show else ""
    return ", ".join(names[:show]) + more


def _configure(base: CuConfig, what: str, **changes) -> tuple[CuConfig, BuildPlan, BuildPlan]:
    """``base`` with ``changes``, its build plan and the base's (TrimError, naming ``what``,
    if the changed configuration is invalid)."""
    try:
        config = dataclasses.replace(base, **changes)
    except GpgpuError as exc:
        raise TrimError(f"{what} is invalid: {exc}") from None
    return (config, BuildPlan.of(config.profile, lds_bytes=config.lds_bytes),
            BuildPlan.of(base.profile, lds_bytes=base.lds_bytes))


def trim(profile: Profile, base: CuConfig | None = None, *, keep: Iterable[str] = (),
         drop: Iterable[str] = (), lds_bytes: int | None = None,
         allow_unsupported: bool = False) -> Trim:
    """The trimmed configuration for ``profile``.

    Parameters
    ----------
    profile : Profile
        The kernels' union profile.
    base : CuConfig
        The untrimmed unit (default ``CuConfig()``); lanes, wave slots, instruction memory and
        device are kept, the rest is trimmed.
    keep, drop : iterable of str
        Parts to keep although no kernel needs them (their instructions are added) or to drop
        although kernels need them (their instructions then trap).
    lds_bytes : int, optional
        LDS size; by default the largest static LDS of the kernels rounded up to a power of
        two, or the base size when a kernel uses DS instructions with no static LDS (its LDS
        comes from ``__local`` arguments, sized at launch).
    allow_unsupported : bool
        Trim even when kernels use instructions the hardware does not implement (they trap).

    Raises
    ------
    TrimError
        Unknown or conflicting parts, kernels needing what the hardware lacks (unless
        allowed), or a configuration that cannot be built.
    """
    base = base if base is not None else CuConfig()
    keep, drop = tuple(keep), tuple(drop)
    for part in (*keep, *drop):
        part_members(part)                        # validates the name
    clash = sorted(set(keep) & set(drop))
    if clash:
        raise TrimError(f"part(s) {', '.join(clash)} given to both --keep and --drop")
    if not profile.kernels:
        raise TrimError("no kernels to trim for")

    used = profile.mnemonics
    unsupported: dict[str, list[str]] = {}
    for k in profile.kernels:
        for m in sorted(set(k.mnemonics) - SUPPORTED_MNEMONICS):
            unsupported.setdefault(m, []).append(f"{k.file}:{k.name}")
    if unsupported and not allow_unsupported:
        raise TrimError(
            f"the kernels use {len(unsupported)} instruction(s) the compute unit does not "
            f"implement: {_names(sorted(unsupported), 6)}; a trimmed "
            "unit would trap on them (--allow-unsupported trims anyway)")

    wanted = set(used) & SUPPORTED_MNEMONICS
    for part in keep:
        wanted |= part_members(part)
    for part in drop:
        wanted -= part_members(part)

    # sizing
    vgprs = max(4, _pow2_at_least(profile.max_vgprs, 4))
    sizing = {"vgprs": {"base": base.vgprs, "trimmed": min(vgprs, base.vgprs),
                        "reason": f"the kernels use at most {profile.max_vgprs} VGPRs"}}
    for what, need, have in (("VGPRs", profile.max_vgprs, base.vgprs),
                             ("SGPRs", profile.max_sgprs, base.sgprs)):
        if need > have:
            raise TrimError(f"the kernels need {need} {what}; the base unit has {have}")
    kernels_use_ds = bool(set(used) & LDS_MNEMONICS)
    dynamic = [k.name for k in profile.kernels
               if k.lds_bytes == 0 and set(k.mnemonics) & LDS_MNEMONICS]
    if lds_bytes is not None:
        lds, why = lds_bytes, "set by --lds-bytes"
    elif not wanted & LDS_MNEMONICS:
        lds, why = 0, "no kernel uses DS instructions"
    elif not kernels_use_ds:
        lds, why = base.lds_bytes, "kept by --keep"
    elif dynamic:
        lds, why = base.lds_bytes, (f"kept: {_names(dynamic)} use(s) LDS with no static size "
                                    "(__local arguments, sized at launch)")
    else:
        lds = _pow2_at_least(profile.max_lds_bytes, 256)
        why = f"the kernels use at most {profile.max_lds_bytes} bytes of static LDS"
    sizing["lds_bytes"] = {"base": base.lds_bytes, "trimmed": lds, "reason": why}

    provisional = BuildPlan.of(frozenset(wanted), lds_bytes=lds)
    shifter = "multiplier" if "multiplier" in provisional.users else "barrel"
    sizing["shifter"] = {
        "base": base.shifter, "trimmed": shifter,
        "reason": "the multiplier stays, so the shifter rides on it" if shifter == "multiplier"
        else "no multiply: a barrel shifter is cheaper than keeping a multiplier for shifts"}
    config, plan, base_plan = _configure(
        base, "the trimmed configuration", profile=frozenset(wanted),
        vgprs=min(vgprs, base.vgprs), lds_bytes=lds, shifter=shifter)

    decisions = []
    for part in PARTS:
        users = plan.users.get(part, ())
        if part in keep:
            reason = "kept by --keep"
        elif part in drop:
            needed = sorted(part_members(part) & set(used))
            reason = DROPPED + (f"; the kernels' {_names(needed)} will trap" if needed else "")
        elif users:
            reason = f"needed by {_names(users)}"
        elif part not in base_plan.users:
            reason = "not in the base unit"
        else:
            reason = "no kernel needs it"
        decisions.append(Decision(part, bool(users), reason))
    return Trim(profile, base, config, plan, base_plan, tuple(decisions), sizing,
                {m: tuple(k) for m, k in unsupported.items()})


@dataclass(frozen=True)
class Full:
    """The untrimmed unit of a base configuration, less whole parts (``trim --full --drop``).

    Attributes
    ----------
    base : CuConfig
        The base configuration.
    config : CuConfig
        ``base`` without the dropped parts' instructions (they trap); with parts dropped, its
        profile is the implemented instructions that remain. The LDS goes with the ``lds``
        part and the multiplier shifter becomes a barrel shifter with the multiplier, as in
        :func:`trim`.
    plan, base_plan : BuildPlan
        What ``config`` and ``base`` build.
    drop : tuple of str
        The parts dropped on request, in the order given, without repeats.
    decisions : tuple of Decision
        Per part of :data:`PARTS`: kept or dropped, and why.
    """

    base: CuConfig
    config: CuConfig
    plan: BuildPlan
    base_plan: BuildPlan
    drop: tuple[str, ...]
    decisions: tuple[Decision, ...]

    @property
    def dropped(self) -> frozenset[str]:
        """The implemented instructions of the base unit that this one decodes as illegal."""
        return self.base_plan.profile - self.plan.profile

    def to_dict(self) -> dict:
        return {
            "base": dataclasses.asdict(self.base) | {"profile": "full"},
            "config": dataclasses.asdict(self.config) | {
                "profile": sorted(self.plan.profile)},
            "drop": list(self.drop),
            "parts": [{"part": d.part, "kept": d.kept, "reason": d.reason}
                      for d in self.decisions],
            "dropped_instructions": sorted(self.dropped),
            "decode_entries": {"base": len(self.base_plan.profile),
                               "full": len(self.plan.profile)},
        }


def full_unit(base: CuConfig | None = None, *, drop: Iterable[str] = ()) -> Full:
    """The unit ``trim --full`` writes: ``base`` untrimmed, less the ``drop`` parts.

    Raises
    ------
    TrimError
        An unknown part, or a configuration that cannot be built without the parts.
    """
    base = base if base is not None else CuConfig()
    drop = tuple(dict.fromkeys(drop))
    wanted = set(base.profile)
    if drop:                                      # what the unit decodes; the rest traps anyway
        wanted &= SUPPORTED_MNEMONICS
    for part in drop:
        wanted -= part_members(part)              # validates the name
    lds = base.lds_bytes if wanted & LDS_MNEMONICS else 0
    shifter = base.shifter
    if drop and "multiplier" not in BuildPlan.of(frozenset(wanted), lds_bytes=lds).users:
        shifter = "barrel"
    config, plan, base_plan = _configure(
        base, f"the unit without {', '.join(drop)}",
        profile=frozenset(wanted) if drop else base.profile,
        lds_bytes=lds, shifter=shifter)
    decisions = []
    for part in PARTS:
        if part in drop:
            reason = DROPPED
        elif part in plan.users:
            reason = "kept: the full unit"
        elif part in base_plan.users:
            reason = "dropped with the parts --drop removes"
        else:
            reason = "not in the base unit"
        decisions.append(Decision(part, part in plan.users, reason))
    return Full(base, config, plan, base_plan, drop, tuple(decisions))


def trim_config(entries: str | Path | Iterable[str | Path],
                base: CuConfig | None = None) -> CuConfig:
    """The configuration ``trim`` builds (without ``--keep``/``--drop``) for code objects.

    ``entries`` are code object paths, each optionally narrowed to one of its kernels as
    ``"path:kernel"``; ``base`` is the unit to trim (default ``CuConfig()``). This is what
    ``Device("verilator", profile=trim_config([...]))`` simulates.
    """
    if isinstance(entries, str | Path):
        entries = [entries]
    try:
        entries = [str(e) for e in entries]
    except TypeError:
        raise TrimError(f"trim_config takes code object paths, not {entries!r}") from None
    kernels = []
    for entry in entries:
        path, wanted = entry, None
        if not Path(entry).exists() and ":" in entry:
            path, wanted = entry.rsplit(":", 1)
        found = Profile.from_files([path]).kernels
        if wanted is not None:
            found = tuple(k for k in found if k.name == wanted)
            if not found:
                raise TrimError(f"{path} has no kernel {wanted!r}")
        kernels += found
    return trim(Profile(tuple(kernels)), base).config
