"""A kernel's machine code, decoded once and compiled to one Python closure per instruction.

:class:`Program` decodes the code and turns every instruction into ``step(wave) -> result``:
``None`` to fall through to the next instruction, a byte offset to branch to, or one of
:data:`ENDPGM` / :data:`BARRIER`. Operand readers and writers are resolved at compile time
(:mod:`gpgpu_hdl.emu.operands`), so executing an instruction is a handful of numpy calls over
64 lanes. Instructions the emulator does not implement compile to a step that raises
:class:`UnsupportedInstruction` when (and only when) it is reached.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import DecodeError, EmulatorError
from ..isa.decoder import Instruction, OpKind, decode_one
from ..isa.disasm import format_instruction
from ..isa.formats import Format
from ..isa.table import TABLE, Unit
from .lsu import compile_ds, compile_mubuf, compile_smrd
from .operands import scalar_reader, scalar_writer, vector_reader
from .salu import SALU_OPS, SAVEEXEC_OPS, sext
from .valu_ops import VALU_OPS
from .wave import EXEC, M0, VCC, Wave, bool_to_mask, mask_to_bool

__all__ = ["Program", "Step", "EmulatorError", "UnsupportedInstruction", "ENDPGM", "BARRIER",
           "compile_instruction", "supported_mnemonics"]

ENDPGM = -1
BARRIER = -2
M32, M64 = 0xFFFFFFFF, (1 << 64) - 1
_U32, _U64 = np.uint32, np.uint64


class UnsupportedInstruction(EmulatorError):
    """The kernel reached an instruction the emulator does not implement."""


StepFn = Callable[[Wave], int | None]


@dataclass(frozen=True, slots=True)
class Step:
    """One compiled instruction.

    ``writes`` lists what it writes, for the commit trace: ``("s", code, count)`` scalar
    registers, ``("v", index, count)`` VGPRs, ``("scc",)``, ``("mode",)``; the destinations of
    ``s_movreld_*`` and ``v_movreld/v_movrelsd_b32`` are relative to M0: ``("s+m0", code,
    count)`` and ``("v+m0", index, count)``.
    """

    run: StepFn
    next_pc: int
    inst: Instruction
    text: str
    writes: tuple[tuple, ...]


# ----------------------------------------------------------------------------------------------
# scalar ALU and control

_CONTROL_NOPS = {"s_nop", "s_waitcnt", "s_sleep", "s_setprio", "s_icache_inv",
                 "s_incperflevel", "s_decperflevel", "s_ttracedata", "s_sendmsg", "s_setkill"}
_SOPK_UNSIGNED = {f"s_cmpk_{c}_u32" for c in ("eq", "lg", "gt", "ge", "lt", "le")}
_HW_REG_MODE = 1


def _branch(inst: Instruction) -> StepFn:
    target = inst.offset + 4 + 4 * sext(inst.fields["simm16"], 16)
    m = inst.info.mnemonic
    tests: dict[str, Callable[[Wave], bool]] = {
        "s_branch": lambda w: True,
        "s_cbranch_scc0": lambda w: w.scc == 0,
        "s_cbranch_scc1": lambda w: w.scc != 0,
        "s_cbranch_vccz": lambda w: w.s[106] == 0 and w.s[107] == 0,
        "s_cbranch_vccnz": lambda w: w.s[106] != 0 or w.s[107] != 0,
        "s_cbranch_execz": lambda w: w.s[126] == 0 and w.s[127] == 0,
        "s_cbranch_execnz": lambda w: w.s[126] != 0 or w.s[127] != 0,
    }
    if m not in tests:
        return None
    test = tests[m]
    if m == "s_branch":
        return lambda w: target
    return lambda w: target if test(w) else None


def _hwreg(simm16: int) -> tuple[int, int, int]:
    return simm16 & 0x3F, (simm16 >> 6) & 0x1F, ((simm16 >> 11) & 0x1F) + 1


def _compile_sopp(inst: Instruction) -> StepFn | None:
    m = inst.info.mnemonic
    simm = inst.fields["simm16"]
    if m in _CONTROL_NOPS:
        return lambda w: None
    if m.startswith("s_cbranch_cdbg"):       # no debugger: the debug conditions are false
        return lambda w: None
    if m == "s_trap":
        def trap(w: Wave) -> None:
            raise EmulatorError(f"the kernel executed s_trap {simm & 0xFF} (no trap handler)")
        return trap
    if m == "s_sethalt":
        if not simm & 1:
            return lambda w: None

        def halt(w: Wave) -> None:
            raise EmulatorError("the wave halted itself (s_sethalt 1) and no debugger resumes it")
        return halt
    if m == "s_endpgm":
        return lambda w: ENDPGM
    if m == "s_barrier":
        return lambda w: BARRIER
    return _branch(inst)


def _compile_setreg(inst: Instruction) -> StepFn | None:
    hwid, offset, size = _hwreg(inst.fields["simm16"])
    if hwid != _HW_REG_MODE:
        return None
    mask = ((1 << size) - 1) << offset
    lit = inst.operand("literal")
    read = (lambda w, v=lit.value: v) if lit is not None else scalar_reader(
        inst.operand("ssrc0"), None)

    def setreg(w: Wave) -> None:
        bits = (w.mode.bits & ~mask) | ((read(w) << offset) & mask)
        if bits & 0xF:
            raise EmulatorError(f"s_setreg: rounding mode {bits & 0xF:#x} requested; the "
                                f"emulator implements round-to-nearest-even only")
        w.set_mode(bits)
    return setreg


def _compile_getreg(inst: Instruction) -> StepFn | None:
    hwid, offset, size = _hwreg(inst.fields["simm16"])
    if hwid != _HW_REG_MODE:
        return None
    mask = (1 << size) - 1
    write = scalar_writer(inst.operand("sdst"), 32)
    return lambda w: write(w, (w.mode.bits >> offset) & mask)


def _compile_salu(inst: Instruction, code_base: int) -> StepFn | None:
    info, m = inst.info, inst.info.mnemonic
    fmt = info.format
    if m == "s_setreg_b32" or m == "s_setreg_imm32_b32":
        return _compile_setreg(inst)
    if m == "s_getreg_b32":
        return _compile_getreg(inst)
    sdst = inst.operand("sdst")
    if m == "s_getpc_b64":
        write = scalar_writer(sdst, 64)
        value = code_base + inst.offset + 4
        return lambda w: write(w, value)
    if m in ("s_setpc_b64", "s_swappc_b64"):
        read = scalar_reader(inst.operand("ssrc0"), info.src0)
        write = scalar_writer(sdst, 64) if m == "s_swappc_b64" else None
        ret = code_base + inst.offset + 4

        def jump(w: Wave) -> int:
            target = read(w) - code_base
            if write is not None:
                write(w, ret)
            return target
        return jump
    if m in SAVEEXEC_OPS:
        logic = SAVEEXEC_OPS[m]
        read = scalar_reader(inst.operand("ssrc0"), info.src0)
        write = scalar_writer(sdst, 64)

        def saveexec(w: Wave) -> None:
            src, old = read(w), w.s[126] | w.s[127] << 32
            new = logic(src, old)
            write(w, old)
            w.s[126], w.s[127] = new & M32, new >> 32
            w.scc = int(new != 0)
        return saveexec
    if m in ("s_movrels_b32", "s_movrels_b64", "s_movreld_b32", "s_movreld_b64"):
        return _compile_movrel_scalar(inst)
    fn = SALU_OPS.get(m)
    if fn is None:
        return None
    bits = max(t.bits for t in (info.dst, info.src0) if t is not None)
    if fmt is Format.SOPK:
        simm = inst.fields["simm16"]
        b_value = simm if m in _SOPK_UNSIGNED else sext(simm, 16) & M32
        read_a = scalar_reader(sdst or inst.operand("ssrc0"), info.dst or info.src0)
        read_b = lambda w: b_value  # noqa: E731
    else:
        read_a = scalar_reader(inst.operand("ssrc0"), info.src0) \
            if inst.operand("ssrc0") is not None else (lambda w: 0)
        if inst.operand("ssrc1") is not None:
            read_b = scalar_reader(inst.operand("ssrc1"), info.src1)
        elif m.startswith("s_bitset"):
            read_b = scalar_reader(sdst, info.dst)       # the destination is read-modify-write
        else:
            read_b = lambda w: 0  # noqa: E731
    write = scalar_writer(sdst, info.dst.bits) if sdst is not None and info.dst else None
    sets_scc = "scc" in info.writes

    def salu(w: Wave) -> None:
        d, scc = fn(read_a(w), read_b(w), w.scc, bits)
        if d is not None and write is not None:
            write(w, d)
        if sets_scc and scc is not None:
            w.scc = scc
    return salu


def _compile_movrel_scalar(inst: Instruction) -> StepFn:
    info = inst.info
    count = 2 if info.dst.bits == 64 else 1
    src, dst = inst.operand("ssrc0"), inst.operand("sdst")

    def check(w: Wave, index: int) -> int:
        if not 0 <= index <= 104 - count:
            raise EmulatorError(f"{info.mnemonic}: s{index} (with M0={w.s[M0]}) is beyond s103")
        return index

    if info.mnemonic.startswith("s_movrels"):
        def movrels(w: Wave) -> None:
            i = check(w, src.value + w.s[M0])
            w.s[dst.value:dst.value + count] = w.s[i:i + count]
        return movrels

    read = scalar_reader(src, info.src0)

    def movreld(w: Wave) -> None:
        i = check(w, dst.value + w.s[M0])
        value = read(w)
        for k in range(count):
            w.s[i + k] = (value >> (32 * k)) & M32
    return movreld


# ----------------------------------------------------------------------------------------------
# vector ALU

def _lane_mask(w: Wave, lanes: np.ndarray) -> int:
    return bool_to_mask(lanes & w.exec_lanes())


def _vdst_writer(index: int, bits: int) -> Callable[[Wave, np.ndarray], None]:
    if bits == 64:
        hi = index + 1

        def write64(w: Wave, value: np.ndarray) -> None:
            lanes = w.exec_lanes()
            np.copyto(w.v[index], (value & _U64(M32)).astype(_U32), where=lanes)
            np.copyto(w.v[hi], (value >> _U64(32)).astype(_U32), where=lanes)
        return write64

    def write32(w: Wave, value: np.ndarray) -> None:
        np.copyto(w.v[index], value, where=w.exec_lanes(), casting="unsafe")
    return write32


def _output_modifiers(inst: Instruction, bits: int) -> Callable[[Wave, np.ndarray], np.ndarray]:
    """VOP3 OMOD then CLAMP on a float result (identity when neither is set)."""
    omod = inst.fields.get("omod", 0) if inst.encoding is Format.VOP3 else 0
    clamp = inst.fields.get("clamp", 0) if inst.encoding is Format.VOP3 else 0
    if not (omod or clamp):
        return None
    ftype, utype = (np.float64, _U64) if bits == 64 else (np.float32, _U32)
    scale = ftype((1.0, 2.0, 4.0, 0.5)[omod])
    tiny = np.finfo(ftype).tiny

    def modify(w: Wave, value: np.ndarray) -> np.ndarray:
        x = value.view(ftype)
        if omod:
            x = x * scale
            flush = w.mode.flush_out_f64 if bits == 64 else w.mode.flush_out_f32
            if flush:
                x = np.where(np.abs(x) < tiny, x * ftype(0), x)
        if clamp:
            nan = np.isnan(x)
            x = np.clip(x, ftype(0), ftype(1))
            if w.mode.dx10_clamp:
                x = np.where(nan, ftype(0), x)
        return np.ascontiguousarray(x).view(utype)
    return modify


def _compile_lane_op(inst: Instruction) -> StepFn | None:
    info, m = inst.info, inst.info.mnemonic
    if m in ("v_nop", "v_clrexcp"):
        return lambda w: None
    if m == "v_readfirstlane_b32":
        src = inst.operand("src0")
        write = scalar_writer(inst.operand("sdst"), 32)
        if src.kind is not OpKind.VGPR:
            read = scalar_reader(src, info.src0)
            return lambda w: write(w, read(w))
        i = src.value

        def readfirstlane(w: Wave) -> None:
            e = w.s[126] | w.s[127] << 32
            lane = (e & -e).bit_length() - 1 if e else 0
            write(w, int(w.v[i, lane]))
        return readfirstlane
    if m == "v_readlane_b32":
        src = inst.operand("src0")
        lane_read = scalar_reader(inst.operand("src1"), info.src1)
        write = scalar_writer(inst.operand("sdst"), 32)
        if src.kind is not OpKind.VGPR:
            read = scalar_reader(src, info.src0)
            return lambda w: write(w, read(w))
        i = src.value
        return lambda w: write(w, int(w.v[i, lane_read(w) & 63]))
    if m == "v_writelane_b32":
        # VDST[SSRC1 & 63] = SSRC0, whatever EXEC holds; the other lanes keep their values
        src = inst.operand("src0")
        lane_read = scalar_reader(inst.operand("src1"), info.src1)
        d = inst.operand("vdst").value
        if src.kind is OpKind.VGPR:
            def illegal(w: Wave) -> None:
                raise EmulatorError(f"{inst.name}: src0 must be a scalar register or a "
                                    f"constant, not v{src.value}")
            return illegal
        read = scalar_reader(src, info.src0)

        def writelane(w: Wave) -> None:
            w.v[d, lane_read(w) & 63] = read(w)
        return writelane
    if m == "v_mov_b32":
        read = vector_reader(inst.operand("src0"), info.src0)
        write = _vdst_writer(inst.operand("vdst").value, 32)
        mods = _output_modifiers(inst, 32)
        if mods is not None:
            return lambda w: write(w, mods(w, read(w)))
        return lambda w: write(w, read(w))
    if m == "v_movreld_b32":
        # VGPR[vdst + M0] = src0, which may be any source (clang stores constants this way)
        read = vector_reader(inst.operand("src0"), info.src0)
        dst = inst.operand("vdst").value

        def movreld(w: Wave) -> None:
            off = w.s[M0]
            if not 0 <= dst + off < 256:
                raise EmulatorError(f"{m}: VGPR index beyond v255 (M0={off})")
            np.copyto(w.v[dst + off], read(w), where=w.exec_lanes())
        return movreld
    if m in ("v_movrels_b32", "v_movrelsd_b32"):
        src, dst = inst.operand("src0").value, inst.operand("vdst").value
        rel_src, rel_dst = True, m != "v_movrels_b32"

        def movrel(w: Wave) -> None:
            off = w.s[M0]
            s, d = src + (off if rel_src else 0), dst + (off if rel_dst else 0)
            if not (0 <= s < 256 and 0 <= d < 256):
                raise EmulatorError(f"{m}: VGPR index beyond v255 (M0={off})")
            np.copyto(w.v[d], w.v[s], where=w.exec_lanes())
        return movrel
    return None


def _compile_valu(inst: Instruction) -> StepFn | None:
    info, m = inst.info, inst.info.mnemonic
    special = _compile_lane_op(inst)
    if special is not None:
        return special
    fn = VALU_OPS.get(m)
    if fn is None:
        return None
    flags = info.flags
    e64 = inst.encoding is Format.VOP3
    readers = [vector_reader(op, t) for role, t in zip(("src0", "src1", "src2"), info.sources,
                                                       strict=True)
               if t is not None and (op := inst.operand(role)) is not None]
    if m in ("v_madmk_f32", "v_madak_f32"):    # the core passes (s0, s1, k)
        readers = [vector_reader(inst.operand("src0"), info.src0),
                   vector_reader(inst.operand("src1"), info.src1),
                   vector_reader(inst.operand("k"), info.src0)]
    elif "acc" in flags:           # v_mac_*: the old destination is the addend
        readers = readers[:2] + [vector_reader(inst.operand("vdst"), info.dst)]
    # implicit lane-mask inputs: VCC in e32, an SGPR pair (src2) in e64
    if "carry_in" in flags or "sel" in flags or m in ("v_div_fmas_f32", "v_div_fmas_f64"):
        if e64 and ("carry_in" in flags or "sel" in flags):
            readers = readers[:2]
            mask_read = scalar_reader(inst.operand("src2"), info.src2)
        else:
            mask_read = lambda w: w.s[106] | w.s[107] << 32  # noqa: E731
        extra = lambda w: (mask_to_bool(mask_read(w)),)  # noqa: E731
    else:
        extra = None

    if info.format is Format.VOPC:
        write_mask = scalar_writer(inst.operand("sdst") if e64 else inst.operand("vcc"), 64)
        cmpx = "cmpx" in flags
        r0, r1 = readers

        def compare(w: Wave) -> None:
            mask = _lane_mask(w, fn(w.ctx, r0(w), r1(w)))
            write_mask(w, mask)
            if cmpx:
                w.s[126], w.s[127] = mask & M32, mask >> 32
        return compare

    vdst = inst.operand("vdst")
    bits = 64 if info.dst is not None and info.dst.bits == 64 else 32
    write = _vdst_writer(vdst.value, bits)
    mods = _output_modifiers(inst, bits) if info.dst is not None and info.dst.is_float else None
    if "vop3b" in flags:
        carry_op = inst.operand("sdst") if e64 else inst.operand("vcc")
        write_carry = scalar_writer(carry_op, 64)

        def valu_vop3b(w: Wave) -> None:
            args = [r(w) for r in readers]
            if extra is not None:
                args += extra(w)
            d, flag = fn(w.ctx, *args)
            if mods is not None:
                d = mods(w, d)
            carry = _lane_mask(w, flag)
            write(w, d)             # under EXEC before the instruction: the carry-out may be EXEC
            write_carry(w, carry)
        return valu_vop3b

    if extra is not None:
        def valu_extra(w: Wave) -> None:
            d = fn(w.ctx, *[r(w) for r in readers], *extra(w))
            write(w, mods(w, d) if mods is not None else d)
        return valu_extra
    if mods is not None:
        return lambda w: write(w, mods(w, fn(w.ctx, *[r(w) for r in readers])))
    if len(readers) == 1:
        r0 = readers[0]
        return lambda w: write(w, fn(w.ctx, r0(w)))
    if len(readers) == 2:
        r0, r1 = readers
        return lambda w: write(w, fn(w.ctx, r0(w), r1(w)))
    r0, r1, r2 = readers
    return lambda w: write(w, fn(w.ctx, r0(w), r1(w), r2(w)))


# ----------------------------------------------------------------------------------------------
# trace metadata

#: Instructions whose destination register is the named one plus M0.
_M0_RELATIVE_DST = {"s_movreld_b32", "s_movreld_b64", "v_movreld_b32", "v_movrelsd_b32"}


def _writes(inst: Instruction) -> tuple[tuple, ...]:
    info = inst.info
    out: list[tuple] = []
    relative = info.mnemonic in _M0_RELATIVE_DST
    for role, op in inst.operands:
        if role in ("sdst", "vcc") and op.kind in (OpKind.SGPR, OpKind.SPECIAL):
            if info.format is Format.SOPK and info.dst is None:
                continue
            if role == "vcc" and info.format is not Format.VOPC and "vop3b" not in info.flags:
                continue
            out.append(("s+m0" if relative else "s", op.value, op.count))
        elif role in ("vdst", "vdata") and op.kind is OpKind.VGPR and info.dst is not None:
            count = op.count
            if "atomic" in info.mnemonic:
                if not inst.fields.get("glc", 1):
                    continue    # a memory atomic returns the old value only with GLC
                if "cmpswap" in info.mnemonic:
                    count //= 2     # vdata holds data and compare value; only the old value
                                    # (the first half) comes back
            out.append(("v+m0" if relative else "v", op.value, count))
    if "exec" in info.writes or "cmpx" in info.flags:
        out.append(("s", EXEC, 2))
    if "vcc" in info.writes and not any(w[:2] == ("s", VCC) for w in out):
        out.append(("s", VCC, 2))
    if "m0" in info.writes:
        out.append(("s", M0, 1))
    if "scc" in info.writes:
        out.append(("scc",))
    if "mode" in info.writes:
        out.append(("mode",))
    return tuple(dict.fromkeys(out))


# ----------------------------------------------------------------------------------------------

def _unsupported(inst: Instruction) -> StepFn:
    name = inst.name

    def trap(w: Wave) -> None:
        raise UnsupportedInstruction(f"the emulator does not implement {name}")
    return trap


def _compile(inst: Instruction, code_base: int) -> StepFn | None:
    """The step function of one instruction, or None if the emulator does not implement it."""
    fmt, unit = inst.info.format, inst.info.unit
    if fmt is Format.SOPP:
        return _compile_sopp(inst)
    if unit is Unit.SALU:
        return _compile_salu(inst, code_base)
    if fmt is Format.SMRD:
        return compile_smrd(inst)
    if fmt is Format.DS:
        return compile_ds(inst)
    if fmt in (Format.MUBUF, Format.MTBUF):
        return compile_mubuf(inst)
    return _compile_valu(inst)


def compile_instruction(inst: Instruction, code_base: int) -> StepFn:
    """The step function of one instruction (a raising step if it is not implemented)."""
    step = _compile(inst, code_base)
    return step if step is not None else _unsupported(inst)


def supported_mnemonics() -> frozenset[str]:
    """Mnemonics for which compile_instruction yields a real step (checked on a canonical
    encoding of every table entry)."""
    import random

    from ..isa.randgen import random_instruction
    rng = random.Random(0)
    supported = set()
    for info in TABLE:
        words = bytearray(random_instruction(info, rng))
        if "hwreg" in info.flags:                  # the MODE register: what compilers use
            words[0:2] = (_HW_REG_MODE | 31 << 11).to_bytes(2, "little")
        if info.format is Format.DS:               # LDS, not GDS
            words[2] &= ~2
        if _compile(decode_one(bytes(words)), 0) is not None:
            supported.add(info.mnemonic)
    return frozenset(supported)


class Program:
    """A kernel's code decoded and compiled.

    Parameters
    ----------
    code : bytes
        The machine code (relocated), starting at the kernel's first instruction.
    code_base : int
        Its device address (for ``s_getpc_b64`` and ``s_setpc_b64``).
    name : str
        For messages.
    functions : sequence of (int, bytes)
        The device address and the code (relocated) of each function the kernel may call
        (``s_swappc_b64``): the code object's other functions in ``.text``.

    Decoding stops at the first word that does not decode (padding or data after the code);
    reaching that offset raises :class:`EmulatorError` with the decoder's message.
    """

    def __init__(self, code: bytes, code_base: int = 0, name: str = "kernel",
                 functions: Sequence[tuple[int, bytes]] = ()) -> None:
        self.name = name
        self.code_base = code_base
        placed = [(address - code_base, body) for address, body in functions]
        #: the lowest offset from ``code_base`` that holds code (a callee may sit before the
        #: kernel): ``steps[(pc - origin) >> 2]`` is the step at ``pc``
        self.origin = min([0, *(start for start, _ in placed)])
        end = max([len(code), *(start + len(body) for start, body in placed)])
        self.steps: list[Step | None] = [None] * ((end - self.origin) // 4 + 1)
        self.decode_errors: dict[int, str] = {}
        self.size = self._decode(code, 0)
        for start, body in placed:
            self._decode(body, start)

    def _decode(self, code: bytes, start: int) -> int:
        """Decode ``code`` placed at ``start`` (an offset from ``code_base``) into the steps;
        return how many of its bytes decoded."""
        offset = 0
        while offset < len(code) - 3:
            try:
                inst = decode_one(code, offset)
            except DecodeError as exc:
                self.decode_errors[start + offset] = str(exc)
                break
            pc = start + offset
            if start:                    # a callee: its offsets count from the kernel's code
                inst = dataclasses.replace(inst, offset=pc)
            self.steps[(pc - self.origin) >> 2] = Step(
                compile_instruction(inst, self.code_base), pc + inst.size, inst,
                format_instruction(inst), _writes(inst))
            offset += inst.size
        return offset

    def holds(self, pc: int) -> bool:
        """``pc`` is inside the span of :attr:`steps` (not necessarily an instruction)."""
        return self.origin <= pc < self.origin + 4 * len(self.steps)

    def step_at(self, pc: int) -> Step:
        """The step at byte offset ``pc``, or EmulatorError if there is no instruction there."""
        if self.holds(pc) and pc % 4 == 0 and self.steps[(pc - self.origin) >> 2] is not None:
            return self.steps[(pc - self.origin) >> 2]
        if pc in self.decode_errors:
            raise EmulatorError(f"{self.name}: cannot decode the instruction at {pc:#x}: "
                                f"{self.decode_errors[pc]}")
        raise EmulatorError(f"{self.name}: PC {pc:#x} is not the start of an instruction")

    def __iter__(self):
        return (s for s in self.steps if s is not None)
