"""Application profiles: what a set of kernel binaries needs from the compute unit.

Step 1 of SCRATCH's trimming (its Algorithm 1), done on the binaries themselves: decode every
instruction of every kernel and collect the instruction histogram per functional unit and
operation class, and the resources the kernels ask for. Several binaries give one union
profile (application-level trimming).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gpgpu_hdl.errors import DecodeError
from gpgpu_hdl.isa.codeobj import CodeObject, Kernel
from gpgpu_hdl.isa.decoder import Instruction, decode
from gpgpu_hdl.isa.table import OpClass, Unit

__all__ = ["KernelProfile", "Profile"]


@dataclass(frozen=True)
class KernelProfile:
    """The static profile of one kernel."""

    file: str
    name: str
    instructions: tuple[Instruction, ...]
    vgprs: int
    sgprs: int
    lds_bytes: int
    scratch_bytes: int

    @classmethod
    def of(cls, file: str, kernel: Kernel) -> KernelProfile:
        try:
            insts = tuple(decode(kernel.code))
        except DecodeError as exc:
            raise DecodeError(f"{file}: kernel {kernel.name}: {exc}") from None
        h = kernel.header
        return cls(file, kernel.name, insts, h.vgpr_count, h.sgpr_count, h.lds_bytes,
                   h.private_segment_bytes)

    @property
    def mnemonics(self) -> Counter[str]:
        return Counter(i.info.mnemonic for i in self.instructions)


@dataclass(frozen=True)
class Profile:
    """The union profile of several kernels."""

    kernels: tuple[KernelProfile, ...] = field(default_factory=tuple)

    @classmethod
    def from_files(cls, paths: Iterable[str | Path]) -> Profile:
        kernels = []
        for path in paths:
            co = CodeObject.load(path)
            kernels += [KernelProfile.of(str(path), k) for k in co.kernels]
        return cls(tuple(kernels))

    @property
    def instructions(self) -> Iterable[Instruction]:
        for k in self.kernels:
            yield from k.instructions

    @property
    def mnemonics(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for k in self.kernels:
            total += k.mnemonics
        return total

    def histogram(self) -> dict[Unit, Counter[OpClass]]:
        """Static instruction counts per functional unit and SCRATCH class."""
        hist: dict[Unit, Counter[OpClass]] = {}
        for inst in self.instructions:
            hist.setdefault(inst.info.unit, Counter())[inst.info.op_class] += 1
        return {u: hist[u] for u in Unit if u in hist}

    def subunits(self) -> dict[Unit, set[str]]:
        """The parts of each unit the kernels use."""
        used: dict[Unit, set[str]] = {}
        for inst in self.instructions:
            used.setdefault(inst.info.unit, set()).add(inst.info.subunit)
        return used

    def features(self) -> Counter[str]:
        """Static counts of the features that decide whole units and datapaths."""
        counts: Counter[str] = Counter()
        for inst in self.instructions:
            i = inst.info
            counts["vector" if i.is_vector else "scalar"] += 1
            counts["barriers"] += "barrier" in i.flags
            counts["atomics"] += "atomic" in i.flags
            counts["valu_64bit"] += i.is_64bit and i.is_vector
            counts["int_multiplies"] += i.subunit == "mul" and i.unit in (Unit.SALU, Unit.VALU)
            counts["shifts"] += i.subunit == "shift"
            counts["fp32"] += i.unit is Unit.FPU
            counts["fp64"] += i.unit is Unit.FPU64
            counts["div_trans"] += i.op_class in (OpClass.DIV, OpClass.TRANS)
        return counts

    @property
    def max_vgprs(self) -> int:
        return max((k.vgprs for k in self.kernels), default=0)

    @property
    def max_sgprs(self) -> int:
        return max((k.sgprs for k in self.kernels), default=0)

    @property
    def max_lds_bytes(self) -> int:
        return max((k.lds_bytes for k in self.kernels), default=0)

    @property
    def max_scratch_bytes(self) -> int:
        return max((k.scratch_bytes for k in self.kernels), default=0)

    def to_dict(self) -> dict:
        hist = self.histogram()
        return {
            "kernels": [{
                "file": k.file, "name": k.name, "instructions": len(k.instructions),
                "vgprs": k.vgprs, "sgprs": k.sgprs, "lds_bytes": k.lds_bytes,
                "scratch_bytes": k.scratch_bytes, "mnemonics": dict(sorted(k.mnemonics.items())),
            } for k in self.kernels],
            "instructions": sum(len(k.instructions) for k in self.kernels),
            "histogram": {str(u): {str(c): cnt[c] for c in OpClass if c in cnt}
                          for u, cnt in hist.items()},
            "subunits": {str(u): sorted(s) for u, s in self.subunits().items()},
            "features": dict(sorted(self.features().items())),
            "mnemonics": dict(sorted(self.mnemonics.items())),
            "resources": {"vgprs": self.max_vgprs, "sgprs": self.max_sgprs,
                          "lds_bytes": self.max_lds_bytes,
                          "scratch_bytes": self.max_scratch_bytes},
        }
