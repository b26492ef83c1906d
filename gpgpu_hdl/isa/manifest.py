"""The support manifest: for every instruction of the table, which layers implement it.

A layer declares its support by exporting ``SUPPORTED_MNEMONICS`` (a set of table mnemonics)
from its package: the emulator from :mod:`gpgpu_hdl.emu`, the RTL from :mod:`gpgpu_hdl.cu`.
A layer that does not exist yet supports nothing. The decoder/disassembler supports every
entry (each is round-tripped through llvm-mc in the tests).
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

from .table import TABLE, InstrInfo

__all__ = ["SupportRow", "LAYERS", "layer_support", "support_manifest"]

#: Layer name -> package that declares ``SUPPORTED_MNEMONICS``.
LAYERS = {"emulator": "gpgpu_hdl.emu", "rtl": "gpgpu_hdl.cu"}


def layer_support(package: str) -> frozenset[str]:
    """Mnemonics a layer implements (empty when the layer does not exist yet)."""
    if importlib.util.find_spec(package) is None:
        return frozenset()
    module = importlib.import_module(package)
    return frozenset(getattr(module, "SUPPORTED_MNEMONICS", ()))


@dataclass(frozen=True)
class SupportRow:
    info: InstrInfo
    decoder: bool
    emulator: bool
    rtl: bool

    def to_dict(self) -> dict:
        i = self.info
        return {
            "mnemonic": i.mnemonic, "format": str(i.format), "opcode": i.opcode,
            "vop3_opcode": i.vop3_opcode, "unit": str(i.unit), "subunit": i.subunit,
            "class": str(i.op_class), "type": i.type,
            "operands": {slot: str(t) if t is not None else None
                         for slot, t in (("dst", i.dst), ("src0", i.src0), ("src1", i.src1),
                                         ("src2", i.src2))},
            "reads": sorted(i.reads), "writes": sorted(i.writes), "flags": sorted(i.flags),
            "decoder": self.decoder, "emulator": self.emulator, "rtl": self.rtl,
        }


def support_manifest() -> list[SupportRow]:
    emu, rtl = (layer_support(pkg) for pkg in LAYERS.values())
    return [SupportRow(info, True, info.mnemonic in emu, info.mnemonic in rtl) for info in TABLE]
