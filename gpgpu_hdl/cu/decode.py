"""Instruction decode of the compute unit, generated from the instruction table for a profile.

Every instruction the CU can execute is described once, by :func:`control`, as a
:data:`DecodedLayout` value computed from its table row (unit, operand types, flags); the RTL
:class:`Decoder` is a ROM-like ``Switch`` over ``(format, opcode)`` holding exactly the
entries of the profile that the hardware implements. Anything else decodes as illegal, which
stops the wave and reports a trap with its PC and encoding: the CU never computes garbage.

The VOP3 (``_e64``) forms of VOP1/VOP2/VOPC instructions are separate decode entries with
the derived VOP3 opcode, so a profile built from binaries that use only the short form does
not get the long one.
"""

import functools
import operator

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, enum, memory, wiring
from amaranth.lib.wiring import In, Out

from ..isa.formats import ENCODINGS, Format
from ..isa.table import TABLE, InstrInfo, Unit
from .fast_alu import FAST_OPS
from .fpu.ops import FP_OPS
from .fpu.unit import FP_BUILT_OPS
from .salu import SALU_ALU_OPS
from .valu import VALU_INT_OPS

__all__ = ["XUnit", "Spec", "MemKind", "AtomicOp", "DecodedLayout", "Decoder", "FORMAT_TAG",
           "control", "decode_entries", "decode_rom", "SUPPORTED_MNEMONICS"]


class XUnit(enum.Enum, shape=3):
    """Which execution path of the sequencer runs the instruction."""
    ILLEGAL = 0
    SALU = 1     # the scalar ALU
    SPEC = 2     # scalar control, done by the sequencer itself (branches, getpc, barrier...)
    SMEM = 3     # scalar memory loads
    VALU = 4     # the per-lane integer ALUs
    VSPEC = 5    # vector moves and lane accesses done by the sequencer
    DS = 6       # local data share
    BUF = 7      # MUBUF global memory


class Spec(enum.Enum, shape=5):
    """Operations the sequencer performs itself (units ``SPEC`` and ``VSPEC``)."""
    NOP = 0
    ENDPGM = 1
    BRANCH = 2
    CBR_SCC0 = 3
    CBR_SCC1 = 4
    CBR_VCCZ = 5
    CBR_VCCNZ = 6
    CBR_EXECZ = 7
    CBR_EXECNZ = 8
    BARRIER = 9
    TRAP = 10
    GETPC = 11
    SETPC = 12
    SWAPPC = 13
    MOVRELS = 14
    MOVRELD = 15
    GETREG = 16
    SETREG = 17
    V_MOV = 18
    V_READFIRSTLANE = 19
    V_READLANE = 20
    V_MOVRELS = 21
    V_MOVRELD = 22
    V_MOVRELSD = 23
    HALT = 24
    WAITCNT = 25


class MemKind(enum.Enum, shape=2):
    LOAD = 0
    STORE = 1
    ATOMIC = 2
    NOP = 3


class AtomicOp(enum.Enum, shape=4):
    """Read-modify-write operations shared by DS and buffer atomics (emulator names)."""
    SWAP = 0
    ADD = 1
    SUB = 2
    RSUB = 3
    INC = 4
    DEC = 5
    MIN_I = 6
    MAX_I = 7
    MIN_U = 8
    MAX_U = 9
    AND = 10
    OR = 11
    XOR = 12
    MSKOR = 13
    CMPST = 14     # DS: DATA0 compares, DATA1 is stored
    CMPSWAP = 15   # buffer: VDATA[0] is stored, VDATA[1] compares


#: The 4-bit tag of each format in decode keys.
FORMAT_TAG = {fmt: i for i, fmt in enumerate(Format)}

#: Control word of one instruction, produced by the decoder.
DecodedLayout = data.StructLayout({
    "legal": 1,
    "unit": XUnit,
    "op": 8,            # SaluOp / ValuOp value
    "spec": Spec,
    "has_src": 3,       # which of src0..src2 the instruction reads
    "src64": 3,         # which sources are 64-bit
    "srcf": 3,          # which sources are floating point (inline constants, literals)
    "dst_dw": 5,        # destination dwords (0..16)
    "e64": 1,           # VOP3 encoding of a VOP1/VOP2/VOPC instruction
    "vop3b": 1,         # writes a carry/flag lane mask
    "cin": 1,           # reads a carry/select lane mask (VCC in e32, src2 in e64)
    "vopc": 1,
    "cmpx": 1,
    "mem": MemKind,
    "atomic": AtomicOp,
    "size": 3,          # bytes per element access: 1, 2 or 4
    "signed": 1,        # sign-extend sub-dword loads
    "dwords": 5,        # dwords per lane (vector memory) or loaded (SMRD)
    "rtn": 1,           # DS atomic returns the old value
    "two": 1,           # DS read2/write2
    "st64": 1,
    "sbuf": 1,          # s_buffer_load (V# base, range-checked)
    "rd_dst": 1,        # SOP1 s_bitset*: the old destination is the second ALU operand
    "fpu": 1,           # unit VALU: an FP32 instruction (op is an FpOp), run by the FP unit
    "acc": 1,           # the old vector destination is the third source (v_mac_*)
    "lit_k": 1,         # the literal is the third source (v_madmk_f32, v_madak_f32)
    "fast": 1,          # unit VALU: an integer operation of the fast lanes (FAST_OPS)
})

_SPEC_SALU = {"s_getpc_b64": Spec.GETPC, "s_setpc_b64": Spec.SETPC, "s_swappc_b64": Spec.SWAPPC,
              "s_movrels_b32": Spec.MOVRELS, "s_movrels_b64": Spec.MOVRELS,
              "s_movreld_b32": Spec.MOVRELD, "s_movreld_b64": Spec.MOVRELD,
              "s_getreg_b32": Spec.GETREG, "s_setreg_b32": Spec.SETREG,
              "s_setreg_imm32_b32": Spec.SETREG}
_SPEC_SOPP = {"s_endpgm": Spec.ENDPGM, "s_branch": Spec.BRANCH,
              "s_cbranch_scc0": Spec.CBR_SCC0, "s_cbranch_scc1": Spec.CBR_SCC1,
              "s_cbranch_vccz": Spec.CBR_VCCZ, "s_cbranch_vccnz": Spec.CBR_VCCNZ,
              "s_cbranch_execz": Spec.CBR_EXECZ, "s_cbranch_execnz": Spec.CBR_EXECNZ,
              "s_barrier": Spec.BARRIER, "s_trap": Spec.TRAP, "s_sethalt": Spec.HALT,
              "s_waitcnt": Spec.WAITCNT}
# SOPP the emulator treats as no-ops (no clock, no debugger, no message queue)
_SOPP_NOPS = {"s_nop", "s_sleep", "s_setprio", "s_icache_inv", "s_incperflevel",
              "s_decperflevel", "s_ttracedata", "s_sendmsg", "s_setkill",
              "s_cbranch_cdbgsys", "s_cbranch_cdbguser", "s_cbranch_cdbgsys_or_user",
              "s_cbranch_cdbgsys_and_user"}
_SPEC_VALU = {"v_nop": Spec.NOP, "v_clrexcp": Spec.NOP, "v_mov_b32": Spec.V_MOV,
              "v_readfirstlane_b32": Spec.V_READFIRSTLANE, "v_readlane_b32": Spec.V_READLANE,
              "v_movrels_b32": Spec.V_MOVRELS, "v_movreld_b32": Spec.V_MOVRELD,
              "v_movrelsd_b32": Spec.V_MOVRELSD}
_DS_ATOMIC = {"add": AtomicOp.ADD, "sub": AtomicOp.SUB, "rsub": AtomicOp.RSUB,
              "inc": AtomicOp.INC, "dec": AtomicOp.DEC, "and": AtomicOp.AND,
              "or": AtomicOp.OR, "xor": AtomicOp.XOR, "mskor": AtomicOp.MSKOR,
              "wrxchg": AtomicOp.SWAP, "cmpst": AtomicOp.CMPST}
_BUF_ATOMIC = {"swap": AtomicOp.SWAP, "cmpswap": AtomicOp.CMPSWAP, "add": AtomicOp.ADD,
               "sub": AtomicOp.SUB, "smin": AtomicOp.MIN_I, "umin": AtomicOp.MIN_U,
               "smax": AtomicOp.MAX_I, "umax": AtomicOp.MAX_U, "and": AtomicOp.AND,
               "or": AtomicOp.OR, "xor": AtomicOp.XOR, "inc": AtomicOp.INC,
               "dec": AtomicOp.DEC}
_SALU_INDEX = {m: i for i, m in enumerate(SALU_ALU_OPS)}
_VALU_INDEX = {m: i for i, m in enumerate(VALU_INT_OPS)}
_FP_INDEX = {m: i for i, m in enumerate(FP_OPS)}
_WIDTHS = {"ubyte": (1, 0), "sbyte": (1, 1), "ushort": (2, 0), "sshort": (2, 1),
           "dword": (4, 0), "dwordx2": (4, 0), "dwordx3": (4, 0), "dwordx4": (4, 0),
           "byte": (1, 0), "short": (2, 0), "b8": (1, 0), "b16": (2, 0), "u8": (1, 0),
           "i8": (1, 1), "u16": (2, 0), "i16": (2, 1), "b32": (4, 0), "b64": (4, 0)}


def _bits(*flags: bool) -> int:
    return sum(int(f) << i for i, f in enumerate(flags))


def _sources(info: InstrInfo) -> dict:
    srcs = info.sources
    return {"has_src": _bits(*(t is not None for t in srcs)),
            "src64": _bits(*(t is not None and t.bits == 64 for t in srcs)),
            "srcf": _bits(*(t is not None and t.is_float for t in srcs))}


def _ds(info: InstrInfo) -> dict | None:
    m = info.mnemonic[len("ds_"):]
    flags = info.flags
    if "src2" in flags:                            # LDS-to-LDS forms: not yet
        return None
    if m.startswith(("read2", "write2")):
        two = True
        kind, _, rest = m.partition("2")
        st64 = rest.startswith("st64")
        typ = rest.rpartition("_")[2]
    elif m.startswith(("read_", "write_")):
        two, st64 = False, False
        kind, _, typ = m.partition("_")
    else:
        two, st64 = "two_addr" in flags, "st64" in flags
        kind, typ = "atomic", None
    if kind in ("read", "write"):
        size, signed = _WIDTHS[typ]
        dwords = 2 if typ == "b64" else 1
        return {"mem": MemKind.LOAD if kind == "read" else MemKind.STORE, "size": size,
                "signed": signed, "dwords": dwords, "two": two, "st64": st64}
    if two or "atomic" not in flags:
        return None
    op, _, rest = m.partition("_")
    rtn = rest.startswith("rtn_")
    typ = rest[4:] if rtn else rest
    if typ not in ("u32", "i32", "b32"):         # 64-bit and float atomics: not yet
        return None
    if op in ("min", "max"):
        atomic = {"min": {"i": AtomicOp.MIN_I, "u": AtomicOp.MIN_U},
                  "max": {"i": AtomicOp.MAX_I, "u": AtomicOp.MAX_U}}[op][typ[0]]
    elif op in _DS_ATOMIC:
        atomic = _DS_ATOMIC[op]
    else:
        return None
    return {"mem": MemKind.ATOMIC, "atomic": atomic, "size": 4, "dwords": 1, "rtn": rtn}


def _buf(info: InstrInfo) -> dict | None:
    m = info.mnemonic
    if m in ("buffer_wbinvl1", "buffer_wbinvl1_sc"):
        return {"mem": MemKind.NOP}
    if info.format is not Format.MUBUF or "format" in info.flags:
        return None                                # typed access: not yet
    kind, _, suffix = m[len("buffer_"):].partition("_")
    if kind == "atomic":
        op, _, x2 = suffix.partition("_")
        if x2 or op not in _BUF_ATOMIC:
            return None
        return {"mem": MemKind.ATOMIC, "atomic": _BUF_ATOMIC[op], "size": 4, "dwords": 1}
    size, signed = _WIDTHS[suffix]
    dwords = int(suffix[-1]) if suffix.startswith("dwordx") else 1
    return {"mem": MemKind.LOAD if kind == "load" else MemKind.STORE, "size": size,
            "signed": signed, "dwords": dwords}


def control(info: InstrInfo, e64: bool = False) -> dict | None:
    """The decoder entry of ``info`` (as field values of :data:`DecodedLayout`), or None when
    the hardware does not implement it."""
    m, unit, fmt = info.mnemonic, info.unit, info.format
    dst_dw = info.dst.dwords if info.dst is not None else 0
    base = {"legal": 1, "dst_dw": dst_dw, "e64": int(e64), **_sources(info)}
    if unit is Unit.SALU:
        if m in _SALU_INDEX:
            ctl = base | {"unit": XUnit.SALU, "op": _SALU_INDEX[m]}
            if m.startswith("s_bitset"):
                ctl |= {"rd_dst": 1, "has_src": base["has_src"] | 2,
                        "src64": base["src64"] | (2 if dst_dw == 2 else 0)}
            return ctl
        if m in _SPEC_SALU:
            return base | {"unit": XUnit.SPEC, "spec": _SPEC_SALU[m]}
        return None
    if unit is Unit.CTRL:
        if m in _SOPP_NOPS:
            return base | {"unit": XUnit.SPEC, "spec": Spec.NOP}
        if m in _SPEC_SOPP:
            return base | {"unit": XUnit.SPEC, "spec": _SPEC_SOPP[m]}
        return None
    if unit is Unit.SMEM:
        if m == "s_dcache_inv":
            return base | {"unit": XUnit.SPEC, "spec": Spec.NOP}
        if m.startswith(("s_load", "s_buffer_load")):
            return base | {"unit": XUnit.SMEM, "dwords": dst_dw,
                           "sbuf": m.startswith("s_buffer")}
        return None
    if unit is Unit.VALU:
        flags = info.flags
        common = {"vop3b": "vop3b" in flags, "cin": "carry_in" in flags or "sel" in flags,
                  "vopc": fmt is Format.VOPC, "cmpx": "cmpx" in flags}
        if m in _VALU_INDEX:
            return base | common | {"unit": XUnit.VALU, "op": _VALU_INDEX[m],
                                    "fast": m in FAST_OPS}
        if m in _SPEC_VALU:
            return base | common | {"unit": XUnit.VSPEC, "spec": _SPEC_VALU[m]}
        return None
    if unit is Unit.FPU:
        if m not in FP_BUILT_OPS:
            return None
        flags = info.flags
        ctl = base | {"unit": XUnit.VALU, "fpu": 1, "op": _FP_INDEX[m],
                      "vop3b": "vop3b" in flags, "vopc": fmt is Format.VOPC,
                      "cmpx": "cmpx" in flags,
                      # a native VOP3 instruction names its lane-mask destination (SDST)
                      "e64": int(e64 or fmt is Format.VOP3)}
        if "acc" in flags:
            ctl |= {"acc": 1, "has_src": ctl["has_src"] | 4}
        if "lit" in flags:
            ctl |= {"lit_k": 1, "has_src": ctl["has_src"] | 4, "srcf": ctl["srcf"] | 4}
        return ctl
    if unit is Unit.LDS:
        ds = _ds(info)
        return None if ds is None else base | {"unit": XUnit.DS} | ds
    if unit is Unit.VMEM:
        buf = _buf(info)
        return None if buf is None else base | {"unit": XUnit.BUF} | buf
    return None                                    # FP64: not built


def decode_entries(profile: frozenset[str] | None = None) -> dict[tuple[int, int], dict]:
    """``{(format tag, opcode): control}`` for every implemented instruction in ``profile``
    (all when None). VOP3 forms of VOP1/VOP2/VOPC are keyed by the VOP3 opcode."""
    entries = {}
    for info in TABLE:
        if profile is not None and info.mnemonic not in profile:
            continue
        ctl = control(info)
        if ctl is None:
            continue
        entries[(FORMAT_TAG[info.format], info.opcode)] = ctl
        if info.has_e64:
            entries[(FORMAT_TAG[Format.VOP3], info.vop3_opcode)] = control(info, e64=True)
    return entries


#: Mnemonics the RTL implements (the ``rtl`` column of ``gpgpu isa``).
SUPPORTED_MNEMONICS = frozenset(info.mnemonic for info in TABLE if control(info) is not None)


class Decoder(wiring.Component):
    """Combinational decoder: instruction words to a :data:`DecodedLayout` control word.

    Parameters
    ----------
    profile : frozenset of str or None
        Mnemonics to decode; everything else (and everything the hardware lacks) is illegal.

    Members
    -------
    inst : In(64)
        The instruction's first two dwords (the second is don't-care for 32-bit formats).
    format : Out(4)
        :data:`FORMAT_TAG` of the format, 15 when no compute format matches.
    ctl : Out(DecodedLayout)
        The control word; ``ctl.legal`` is 0 for anything outside the profile.
    size64 : Out(1)
        The format is a 64-bit encoding.

    With ``registered``, the decode takes two steps a clock apart (pipeline stages, for the
    pipelined unit's clock): each format's selector and whether its opcode is in the format's
    region of the table are registered with the words; then each format's match in the table's
    priority order is worked out from them, and the table, a ROM in block RAM
    (:func:`decode_rom`), is read at the address the match and opcode give, an AND-OR. The
    outputs are those of the ``inst`` of two cycles before (:attr:`latency`).
    """

    inst: In(64)
    format: Out(4)
    ctl: Out(DecodedLayout)
    size64: Out(1)

    def __init__(self, *, profile: frozenset[str] | None = None, registered: bool = False):
        self._entries = decode_entries(profile)
        self._registered = registered
        super().__init__()

    @property
    def entries(self) -> dict[tuple[int, int], dict]:
        return dict(self._entries)

    @property
    def latency(self) -> int:
        """Clock cycles from ``inst`` to the outputs: 0, or 2 when registered."""
        return 2 if self._registered else 0

    def elaborate(self, platform):
        m = Module()
        by_format: dict[int, list] = {}
        for (tag, opcode), ctl in self._entries.items():
            by_format.setdefault(tag, []).append((opcode, ctl))
        if self._registered:
            return self._elaborate_registered(m, by_format)
        opcode = Signal(9)
        m.d.comb += self.format.eq(15)

        def lookup(enc):
            with m.Switch(opcode):
                for code, ctl in sorted(by_format.get(FORMAT_TAG[enc.format], [])):
                    with m.Case(code):
                        m.d.comb += self.ctl.eq(DecodedLayout.const(ctl))
        self._match_formats(m, opcode, then=lookup)
        return m

    def _match_formats(self, m, opcode, *, then):
        """The format of ``inst``, its opcode field and its size into ``format``, ``opcode``
        and ``size64``: the formats tried in the table's priority order (an If/Elif chain);
        ``then(encoding)`` adds what else the matching branch does."""
        word0 = self.inst[:32]
        first = True
        for enc in ENCODINGS:
            cond = (word0 & enc.match_mask) == enc.match_value
            ctx = m.If(cond) if first else m.Elif(cond)
            first = False
            with ctx:
                op = enc.field("op")
                m.d.comb += [self.format.eq(FORMAT_TAG[enc.format]),
                             self.size64.eq(enc.size == 8),
                             opcode.eq(self.inst[op.lo:op.hi + 1])]
                then(enc)

    def _elaborate_registered(self, m, by_format):
        # Step 1: each format's selector and whether its opcode is in the format's region of
        # the ROM (``decode_rom``), registered with the words (the words come from the
        # instruction banks' outputs, late in the cycle). Step 2: the match in priority order
        # and the ROM read at the address it and the opcode give; its registered answer is the
        # output, with the format and size worked out from the match beside it.
        regions, depth = decode_rom(by_format)
        rows = [0] * depth
        for tag, entries in by_format.items():
            base = regions[tag][0]
            for code, ctl in entries:
                rows[base + code] = DecodedLayout.const(ctl).as_value().value
        m.submodules.table = table = memory.Memory(shape=DecodedLayout.size, depth=depth,
                                                   init=rows)
        read = table.read_port()
        inst1 = Signal(64, name="inst1")
        fmt2, size2 = Signal(4, name="fmt2", init=15), Signal(name="size64_2")
        # step 1, on the words as they come: each encoding's selector, and for those with
        # entries whether the opcode is in the region (its high bits 0), registered
        sel1 = {enc: Signal(name=f"sel_{enc.format.name.lower()}") for enc in ENCODINGS}
        in_region = {}
        for enc in ENCODINGS:
            if FORMAT_TAG[enc.format] in regions:
                field, bits = enc.field("op"), regions[FORMAT_TAG[enc.format]][1]
                in_region[enc] = Signal(name=f"in_region_{enc.format.name.lower()}")
                m.d.sync += in_region[enc].eq(self.inst[field.lo + bits:field.hi + 1] == 0)
        m.d.sync += [inst1.eq(self.inst),
                     *(sel1[enc].eq((self.inst[:32] & enc.match_mask) == enc.match_value)
                       for enc in ENCODINGS)]
        # step 2, from those registers: each encoding's match in the table's priority order
        # (its selector, and none of the earlier ones whose selector it overlaps: SOP1/SOPC/
        # SOPP inside SOPK and SOP2, VOP1 and VOPC inside VOP2), side by side
        match1 = {}
        for k, enc in enumerate(ENCODINGS):
            earlier = [sel1[e] for e in ENCODINGS[:k]
                       if not (e.match_value ^ enc.match_value) & e.match_mask & enc.match_mask]
            match1[enc] = sel1[enc] & ~Cat(*earlier).any() if earlier else sel1[enc]
        hits = {enc: match1[enc] & in_region[enc] for enc in in_region}
        # the address: the matching format's base ORed with its opcode, or the last row (all
        # zeros: illegal) when none matches
        terms = [Mux(~Cat(*hits.values()).any(), depth - 1, 0)]
        for enc, hit in hits.items():
            base, bits = regions[FORMAT_TAG[enc.format]]
            lo = enc.field("op").lo
            terms.append(Mux(hit, base | inst1[lo:lo + bits], 0))
        address = Signal(range(depth), name="rom_addr")
        m.d.comb += [address.eq(functools.reduce(operator.or_, terms)), read.addr.eq(address)]
        m.d.sync += [
            fmt2.eq(functools.reduce(operator.or_, [
                Mux(~Cat(*match1.values()).any(), 15, 0),           # no format matches
                *(Mux(match1[enc], FORMAT_TAG[enc.format], 0) for enc in ENCODINGS)])),
            size2.eq(Cat(*(match1[enc] for enc in ENCODINGS if enc.size == 8)).any())]
        m.d.comb += [self.format.eq(fmt2), self.size64.eq(size2), self.ctl.eq(read.data)]
        return m


def decode_rom(by_format: dict[int, list]) -> tuple[dict[int, tuple[int, int]], int]:
    """Where each format's entries go in the registered decoder's ROM: ``({format tag:
    (base, opcode bits)}, depth)``. A format takes the power-of-two region that its largest
    opcode in ``by_format`` (``{tag: [(opcode, control), ...]}``) needs, aligned, so that an
    entry's address is the base ORed with the opcode; the last row is all zeros (an illegal
    instruction: an opcode past its format's region, or a format without entries)."""
    sizes = {tag: max(code for code, _ in entries).bit_length()
             for tag, entries in by_format.items()}
    regions, base = {}, 0
    for tag in sorted(sizes, key=lambda t: (-sizes[t], t)):
        regions[tag] = (base, sizes[tag])
        base += 1 << sizes[tag]
    return regions, base + 1
