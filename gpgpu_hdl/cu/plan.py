"""What hardware a compute unit builds for its profile: the one place that decides it.

:class:`BuildPlan` folds the decoder entries of a configuration's profile (see
:func:`~gpgpu_hdl.cu.decode.decode_entries`, itself generated from the instruction table) into
the list of datapaths the sequencer and the units must elaborate. :class:`ComputeUnit` builds
from it, and the trimmer reports from it, so "what was kept, and why" is always what was built.

A part no instruction of the profile needs is not elaborated at all (its FSM states, operand
latches, address arithmetic, submodules): the instructions that would need it decode as illegal
and trap with their PC and encoding.

The parts, by name (:data:`PARTS`, with the instructions that keep each one):

========================  =====================================================================
``salu``                  the scalar ALU (:class:`~gpgpu_hdl.cu.salu.ScalarAlu`), built with
                          only the operations in ``salu_ops``
``valu``                  the lane ALUs (:class:`~gpgpu_hdl.cu.valu.IntLaneAlu`), built with
                          only ``valu_ops``; ``multiplier``, ``shifter``, ``shifter64``,
                          ``funnel`` are their functional units
``smem``                  scalar memory loads (``s_load_*``, ``s_buffer_load_*``) and the
                          ``smem_words``-word scalar write buffer they fill
``vmem``                  buffer loads/stores: MUBUF address arithmetic (index, stride,
                          swizzle, range check) and the lane-serial memory states
``vmem_atomics``          the read-modify-write path of buffer atomics
``lds``                   the LDS block RAM, DS address/range logic and states
``lds_atomics``           the read-modify-write path of DS atomics
``subdword``              byte and short extraction / insertion (8- and 16-bit accesses)
``lane_access``           ``v_readlane_b32``, ``v_readfirstlane_b32``: the lane select
``fp_*``                   the FP32 sub-units of the lanes' FP units
                          (:class:`~gpgpu_hdl.cu.fpu.unit.FpLaneUnit`): adder, multiplier,
                          fused multiply-add, compare, converter, divide/square root/
                          transcendental; an unfused multiply-add keeps the multiplier and
                          the adder
``operand_hi``/``operand2``  operand latches: high dwords of 64-bit sources, third sources
========================  =====================================================================
"""

from __future__ import annotations

from dataclasses import dataclass

from ..isa.formats import Format
from ..isa.table import TABLE, Unit
from .decode import FORMAT_TAG, AtomicOp, MemKind, Spec, XUnit, decode_entries
from .fpu.ops import FP_OPS, SUBUNIT_OF
from .salu import SALU_ALU_OPS
from .valu import _MUL_OPS, _SHIFT32_OPS, _SHIFT64_OPS, _ALIGN_OPS, _BFE_OPS, VALU_INT_OPS

__all__ = ["BuildPlan", "PARTS", "LDS_MNEMONICS"]

#: Every part a plan can keep or drop, in report order.
PARTS = ("salu", "valu", "multiplier", "shifter", "shifter64", "funnel", "fp_add", "fp_mul",
         "fp_fma", "fp_cmp", "fp_cvt", "fp_trans", "smem", "vmem", "vmem_atomics", "lds",
         "lds_atomics", "subdword", "lane_access", "operand_hi", "operand2")

#: FP32 sub-unit (table ``subunit``) -> the parts it keeps: the unfused multiply-add is the
#: multiplier and the adder chained.
FP_PARTS = {"add": ("fp_add",), "mul": ("fp_mul",), "mad": ("fp_mul", "fp_add"),
            "fma": ("fp_fma",), "cmp": ("fp_cmp",), "cvt": ("fp_cvt",), "trans": ("fp_trans",)}

#: The DS (LDS) instructions of the table: they leave a profile when the unit has no LDS.
LDS_MNEMONICS = frozenset(i.mnemonic for i in TABLE if i.unit is Unit.LDS)


@dataclass(frozen=True)
class BuildPlan:
    """The datapaths a compute unit elaborates for a profile.

    Attributes
    ----------
    profile : frozenset of str
        The mnemonics the unit decodes: the requested profile, less what the hardware does not
        implement and, when the unit has no LDS, less the DS instructions.
    salu_ops, valu_ops : tuple of str
        Operations built into the scalar ALU and the lane ALUs (table order).
    fp_ops : tuple of str
        FP32 instructions built into the lanes' FP units (table order; none: no FP unit).
    smem_words : int
        Most dwords one scalar load writes (0: no scalar memory path); also sizes the scalar
        write buffer (at least 2, for 64-bit results and lane masks).
    vmem, lds : bool
        Buffer (MUBUF) and LDS (DS) paths.
    vmem_atomics, lds_atomics : frozenset of AtomicOp
        Read-modify-write operations the atomic ALU computes for each path.
    ds_two : bool
        DS ``read2``/``write2`` forms (second element, second data operand).
    subdword : bool
        8- and 16-bit memory accesses.
    lane_access : bool
        ``v_readlane_b32``/``v_readfirstlane_b32``.
    latches : tuple of bool
        Which of the six per-lane operand latches exist (src0 lo/hi, src1 lo/hi, src2 lo/hi;
        memory instructions reuse them for address and data dwords).
    users : dict of str to tuple of str
        For each kept part, the profile's mnemonics that need it (the report's "why").
    """

    profile: frozenset[str]
    salu_ops: tuple[str, ...]
    valu_ops: tuple[str, ...]
    fp_ops: tuple[str, ...]
    smem_words: int
    vmem: bool
    lds: bool
    vmem_atomics: frozenset
    lds_atomics: frozenset
    ds_two: bool
    subdword: bool
    lane_access: bool
    latches: tuple[bool, ...]
    users: dict

    @classmethod
    def of(cls, profile: frozenset[str], *, lds_bytes: int) -> BuildPlan:
        """The plan for the mnemonics ``profile`` on a unit with ``lds_bytes`` of LDS."""
        wanted = frozenset(profile)
        if lds_bytes == 0:
            wanted -= LDS_MNEMONICS
        entries = decode_entries(wanted)
        by_name: dict[str, list[dict]] = {}
        for info in TABLE:
            keys = [(FORMAT_TAG[info.format], info.opcode)]
            if info.has_e64:
                keys.append((FORMAT_TAG[Format.VOP3], info.vop3_opcode))
            found = [entries[k] for k in keys if k in entries and info.mnemonic in wanted]
            if found:
                by_name[info.mnemonic] = found
        users: dict[str, list[str]] = {part: [] for part in PARTS}
        latches = [False] * 6

        def need(part: str, mnemonic: str) -> None:
            if mnemonic not in users[part]:
                users[part].append(mnemonic)

        smem_words = 0
        vmem_atomics, lds_atomics = set(), set()
        ds_two = subdword = lane_access = False
        for name, ctls in by_name.items():
            for c in ctls:
                unit = c["unit"]
                has_src, src64 = c.get("has_src", 0), c.get("src64", 0)
                if unit is XUnit.SALU:
                    need("salu", name)
                elif unit is XUnit.SMEM:
                    need("smem", name)
                    smem_words = max(smem_words, c["dwords"])
                elif unit in (XUnit.VALU, XUnit.VSPEC):
                    if unit is XUnit.VALU and c.get("fpu"):
                        for part in FP_PARTS[SUBUNIT_OF[name]]:
                            need(part, name)
                    elif unit is XUnit.VALU:
                        need("valu", name)
                        for part, group in (("multiplier", _MUL_OPS),
                                            ("shifter", (*_SHIFT32_OPS, *_BFE_OPS)),
                                            ("shifter64", _SHIFT64_OPS),
                                            ("funnel", _ALIGN_OPS)):
                            if name in group:
                                need(part, name)
                    if c.get("spec") in (Spec.V_READLANE, Spec.V_READFIRSTLANE):
                        lane_access = True
                        need("lane_access", name)
                    for s in range(3):
                        if has_src >> s & 1:
                            latches[2 * s] = True
                            if src64 >> s & 1:
                                latches[2 * s + 1] = True
                                need("operand_hi", name)
                    if has_src & 4:
                        need("operand2", name)
                elif unit is XUnit.BUF and c["mem"] is not MemKind.NOP:
                    need("vmem", name)
                    latches[0] = latches[1] = True          # vaddr (addr64: a pair)
                    kind = c["mem"]
                    if kind is MemKind.ATOMIC:
                        need("vmem_atomics", name)
                        vmem_atomics.add(c["atomic"])
                        data = 2 if c["atomic"] is AtomicOp.CMPSWAP else 1
                    else:
                        data = c["dwords"] if kind is MemKind.STORE else 0
                    for k in range(data):
                        latches[2 + k] = True
                    if c["size"] < 4:
                        subdword = True
                        need("subdword", name)
                elif unit is XUnit.DS:
                    need("lds", name)
                    latches[0] = True
                    kind = c["mem"]
                    two = bool(c.get("two"))
                    ds_two |= two
                    if kind is MemKind.ATOMIC:
                        need("lds_atomics", name)
                        lds_atomics.add(c["atomic"])
                        two |= c["atomic"] in (AtomicOp.CMPST, AtomicOp.MSKOR)
                    if kind is not MemKind.LOAD:
                        for k in range(c["dwords"]):
                            latches[2 + k] = True
                            if two:
                                latches[4 + k] = True
                    if c["size"] < 4:
                        subdword = True
                        need("subdword", name)
        return cls(profile=frozenset(by_name), salu_ops=tuple(m for m in SALU_ALU_OPS
                                                              if m in by_name),
                   valu_ops=tuple(m for m in VALU_INT_OPS if m in by_name),
                   fp_ops=tuple(m for m in FP_OPS if m in by_name),
                   smem_words=smem_words, vmem=bool(users["vmem"]), lds=bool(users["lds"]),
                   vmem_atomics=frozenset(vmem_atomics), lds_atomics=frozenset(lds_atomics),
                   ds_two=ds_two, subdword=subdword, lane_access=lane_access,
                   latches=tuple(latches),
                   users={part: tuple(names) for part, names in users.items() if names})

    @property
    def kept(self) -> tuple[str, ...]:
        """The parts built, in :data:`PARTS` order."""
        return tuple(p for p in PARTS if p in self.users)

    @property
    def dropped(self) -> tuple[str, ...]:
        """The parts not built, in :data:`PARTS` order."""
        return tuple(p for p in PARTS if p not in self.users)

    @property
    def atomics(self) -> frozenset:
        """Every read-modify-write operation the shared atomic ALU computes."""
        return self.vmem_atomics | self.lds_atomics

    @property
    def sw_words(self) -> int:
        """Size of the scalar write buffer: 64-bit results and lane masks need 2 words."""
        return max(2, self.smem_words)

