"""Constrained-random instruction streams run in lockstep on the RTL and the golden model.

A stream is a real kernel (assembled by llvm-mc-19 into a code object and launched through the
runtime like any other): a prologue fills the registers the stream may use with random,
corner-case and per-lane values and sets a random EXEC and SCC; the body is ``length``
instructions drawn from the instruction table (only entries the compute unit implements and
that keep the stream straight-line: scalar and vector ALU, compares, lane access, ``s_nop``),
with operands from :func:`gpgpu_hdl.isa.randgen.random_instruction` inside a
:class:`~gpgpu_hdl.isa.randgen.RegisterBudget`; an epilogue stores every register the body
could touch, plus VCC, M0, EXEC and SCC, to memory. A workgroup of two waves runs it.

:func:`check` runs a stream on a device and on the emulator and compares the commit traces
instruction by instruction and the stored registers bit for bit. :func:`minimize` shrinks a
failing body (cut after the first divergence, then drop instructions while it still fails),
and :func:`reproducer` prints what to paste into a bug report. Everything follows from the
seed::

    python -m gpgpu_hdl.sim.lockstep --seed 17 --length 300        # RTL vs emulator
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import GpgpuError
from ..isa.decoder import SCALAR_NAMES, ScalarCode, decode, decode_one
from ..isa.disasm import format_instruction
from ..isa.formats import Format
from ..isa.randgen import RegisterBudget, random_instruction
from ..isa.table import TABLE, InstrInfo

__all__ = ["Stream", "candidates", "random_stream", "check", "minimize", "reproducer"]

#: registers the body may name: s0..s39, v0..v23 (plus VCC, M0, EXEC)
BUDGET = RegisterBudget(sgprs=40, vgprs=24, ttmp=False)
#: the scalar registers dumped after the body, by operand code (s0..s39, vcc, m0)
_DUMP_SCALARS = [*range(BUDGET.sgprs), ScalarCode.VCC_LO, ScalarCode.VCC_HI, ScalarCode.M0]
_LOCAL = 128            # work-items per group (two waves)
_GROUPS = 1
_GLOBAL = _LOCAL * _GROUPS
#: output slots, one dword per work-item each: VGPRs, scalars, EXEC lo/hi, SCC
_SLOTS = BUDGET.vgprs + len(_DUMP_SCALARS) + 3

#: interesting 32-bit values the prologue mixes in
_CORNERS = (0, 1, 2, 31, 32, 33, 63, 64, 0xFFFF, 0x10000, 0x7FFF_FFFF, 0x8000_0000,
            0x8000_0001, 0xFFFF_FFFF, 0xFFFF_FFFE, 0x00FF_FF00, 0xAAAA_AAAA)

# control flow, hardware registers, traps and M0-relative moves stay out of straight-line
# streams (the kernels of the example suite cover them); memory has its own tests
_EXCLUDED_FLAGS = {"branch", "jump", "hwreg", "endpgm", "barrier", "sendmsg", "waitcnt"}
_EXCLUDED_FORMATS = {Format.SMRD, Format.DS, Format.MUBUF, Format.MTBUF}
_E64_FORMATS = {Format.VOP1, Format.VOP2, Format.VOPC}


def _excluded(info: InstrInfo) -> bool:
    if info.format in _EXCLUDED_FORMATS or info.flags & _EXCLUDED_FLAGS:
        return True
    if info.format is Format.SOPP:
        return info.mnemonic != "s_nop"
    return "movrel" in info.mnemonic        # M0-indexed: out-of-range indices trap


def candidates(supported: set[str] | frozenset[str]) -> list[tuple[InstrInfo, bool]]:
    """The ``(entry, e64)`` forms a stream draws from: table entries in ``supported`` that are
    straight-line ALU work, each VOP1/VOP2/VOPC entry also in its VOP3 form."""
    out = []
    for info in TABLE:
        if info.mnemonic not in supported or _excluded(info):
            continue
        out.append((info, False))
        if info.format in _E64_FORMATS and info.vop3_opcode is not None:
            out.append((info, True))
    return out


@dataclass(frozen=True)
class Stream:
    """One random kernel: the prologue's register values and the body's encodings.

    ``generated`` is the whole body the seed gives; ``keep`` the indices of it that the
    kernel runs (all of them, unless :func:`minimize` dropped some)."""

    seed: int
    sgpr_init: tuple[int, ...]                      # s0..s39, vcc_lo, vcc_hi, m0
    vgpr_init: tuple[tuple[str, int, int], ...]     # per VGPR: (kind, a, b)
    exec_init: int
    scc_init: int
    generated: tuple[bytes, ...] = field(repr=False)
    keep: tuple[int, ...] = ()

    @property
    def body(self) -> tuple[bytes, ...]:
        return tuple(self.generated[i] for i in self.keep)

    def with_keep(self, keep: Sequence[int]) -> Stream:
        """The same stream running only the generated instructions ``keep``."""
        bad = [i for i in keep if not 0 <= i < len(self.generated)]
        if bad:
            raise GpgpuError(f"lockstep: stream {self.seed} has no body instruction {bad[0]} "
                             f"(it has {len(self.generated)})")
        return replace(self, keep=tuple(keep))

    def body_text(self) -> list[str]:
        return [format_instruction(decode_one(b)) for b in self.body]

    def assembly(self) -> str:
        """The kernel's instruction text (prologue, body as ``.long`` words, epilogue)."""
        lines = [
            "s_load_dwordx2 s[40:41], s[0:1], 0x0",
            "v_mov_b32 v28, v0",                                   # local id
            "v_mov_b32 v26, s2",                                   # group id
            f"v_lshlrev_b32 v26, {_LOCAL.bit_length() - 1}, v26",
            "v_add_i32 v26, vcc, v26, v0",
            "v_lshlrev_b32 v26, 2, v26",                           # global id * 4
            "v_mov_b32 v27, 0",
            "s_waitcnt lgkmcnt(0)",
        ]
        for code, value in zip(_DUMP_SCALARS, self.sgpr_init, strict=True):
            lines.append(f"s_mov_b32 {_sname(code)}, {value:#x}")
        for k, (kind, a, b) in enumerate(self.vgpr_init):
            if kind == "uniform":
                lines.append(f"v_mov_b32 v{k}, {a:#x}")
            elif kind == "lane":                                   # small per-lane values
                lines.append(f"v_and_b32 v{k}, {a & 0xFF:#x}, v28")
            else:                                                  # a * lane ^ b
                lines += [f"s_mov_b32 s48, {a:#x}", f"v_mul_lo_u32 v{k}, s48, v28",
                          f"v_xor_b32 v{k}, {b:#x}, v{k}"]
        lines.append(f"s_cmp_eq_u32 0, {self.scc_init ^ 1}")
        lines += [f"s_mov_b32 exec_lo, {self.exec_init & 0xFFFFFFFF:#x}",
                  f"s_mov_b32 exec_hi, {self.exec_init >> 32:#x}"]
        for b, text in zip(self.body, self.body_text(), strict=True):
            words = ", ".join(f"{int.from_bytes(b[i:i + 4], 'little'):#010x}"
                              for i in range(0, len(b), 4))
            lines.append(f".long {words}  // {text}")
        lines += ["s_cselect_b32 s50, 1, 0",
                  "s_mov_b64 s[48:49], exec",
                  "s_mov_b64 exec, -1",
                  "s_mov_b64 s[44:45], s[40:41]",
                  "s_mov_b32 s46, 0",
                  "s_mov_b32 s47, 0xf000"]
        stride = _GLOBAL * 4
        step = [f"s_add_u32 s44, s44, {stride:#x}", "s_addc_u32 s45, s45, 0"]
        for k in range(BUDGET.vgprs):
            lines += [f"buffer_store_dword v{k}, v[26:27], s[44:47], 0 addr64", *step]
        # scalars are the same in every lane: lane 0 stores them (a store is one lane-dword
        # at a time on the RTL, so this keeps the dump short)
        lines.append("s_mov_b64 exec, 1")
        for src in [_sname(c) for c in _DUMP_SCALARS] + ["s48", "s49", "s50"]:
            lines += [f"v_mov_b32 v29, {src}",
                      "buffer_store_dword v29, v[26:27], s[44:47], 0 addr64", *step]
        lines.append("s_endpgm")
        return "\n".join(lines) + "\n"

    def code_object(self) -> bytes:
        from ..toolchain import assemble_kernel
        return assemble_kernel(self.assembly(), "stream", kernarg_segment_byte_size=8,
                               workitem_vgpr_count=32, wavefront_sgpr_count=56)

    def body_offset(self) -> int:
        """Byte offset of the first body instruction in the kernel's code (found by
        assembling the stream with a marker instruction as its body)."""
        from ..isa.codeobj import CodeObject
        probe = replace(self, generated=(_PROBE,), keep=(0,))
        code = CodeObject.from_bytes(probe.code_object()).kernels[0].code
        for inst in decode(code):
            if inst.words == (_PROBE_WORD,):
                return inst.offset
        raise GpgpuError("lockstep: body marker not found in the assembled stream")


def _sname(code: int) -> str:
    return SCALAR_NAMES.get(code, f"s{code}")


#: ``s_nop 0x7``: marks where the body starts in the assembled code
_PROBE_WORD = 0xBF800007
_PROBE = _PROBE_WORD.to_bytes(4, "little")


def _value(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.3:
        return rng.choice(_CORNERS)
    if r < 0.45:
        return rng.randrange(65)
    return rng.getrandbits(32)


def random_stream(seed: int, length: int = 200,
                  supported: set[str] | frozenset[str] | None = None) -> Stream:
    """The stream of ``seed``: ``length`` body instructions from ``candidates(supported)``
    (default: every instruction the compute unit implements)."""
    if supported is None:
        from ..cu.decode import SUPPORTED_MNEMONICS
        supported = SUPPORTED_MNEMONICS
    pool = candidates(supported)
    if not pool:
        raise GpgpuError("lockstep: no instruction of the profile can go in a stream")
    rng = random.Random(seed)
    sgprs = tuple(_value(rng) for _ in _DUMP_SCALARS)
    vgprs = []
    for _ in range(BUDGET.vgprs):
        kind = rng.choice(["uniform", "lane", "mix", "mix"])
        vgprs.append((kind, _value(rng), rng.getrandbits(32)))
    r = rng.random()
    exec_init = (1 << 64) - 1 if r < 0.4 else rng.getrandbits(64) if r < 0.9 else \
        rng.getrandbits(64) & rng.getrandbits(64)
    body = []
    for _ in range(length):
        info, e64 = rng.choice(pool)
        body.append(random_instruction(info, rng, e64=e64, budget=BUDGET))
    return Stream(seed, sgprs, tuple(vgprs), exec_init, rng.getrandbits(1), tuple(body),
                  tuple(range(length)))


@dataclass
class Outcome:
    """What :func:`check` found: ``problems`` is empty when the device agreed."""

    problems: list[str]
    first_pc: int | None = None          # pc of the first diverging instruction, if known
    cycles: int = 0
    instructions: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


def _run(device: Any, stream: Stream, code: bytes) -> tuple[np.ndarray, Any]:
    prog = device.load_bytes(code, f"stream-{stream.seed}")
    out = device.array(np.zeros((_SLOTS, _GLOBAL), np.uint32))
    res = prog.stream(out, global_size=_GLOBAL, local_size=_LOCAL, trace=True)
    return np.asarray(out.numpy()), res


def _slot_name(slot: int) -> str:
    names = [f"v{k}" for k in range(BUDGET.vgprs)]
    names += [_sname(c) for c in _DUMP_SCALARS] + ["exec_lo", "exec_hi", "scc"]
    return names[slot]


def check(stream: Stream, device: Callable[[], Any]) -> Outcome:
    """Run ``stream`` on ``device()`` and on the emulator; compare traces and registers."""
    from ..runtime import Device
    from ..runtime import RtlTrap
    from .trace import compare_traces

    code = stream.code_object()
    want, emu_res = _run(Device("emu"), stream, code)
    try:
        got, dev_res = _run(device(), stream, code)
    except RtlTrap as e:
        return Outcome([f"the device stopped: {e}"], e.pc)
    except GpgpuError as e:
        return Outcome([f"the device failed: {e}"])
    mismatches = compare_traces(emu_res.trace.records, dev_res.trace)
    problems = [str(m) for m in mismatches]
    bad = np.argwhere(want != got)
    if len(bad):
        slot, item = bad[0]
        problems.append(f"stored {_slot_name(slot)} of work-item {item}: emulator "
                        f"{want[slot, item]:#x} device {got[slot, item]:#x} "
                        f"({len(bad)} dwords differ)")
    first = min((m.pc for m in mismatches if m.pc is not None), default=None)
    return Outcome(problems, first, dev_res.cycles or 0, dev_res.instructions)


def minimize(stream: Stream, fails: Callable[[Stream], Outcome], *, budget: int = 24,
             log: Callable[[str], None] | None = None) -> Stream:
    """A shorter body that still fails: cut after the first divergence, then drop chunks
    (halves, quarters, ... single instructions) while the stream keeps failing, within
    ``budget`` extra runs."""
    keep = list(stream.keep)
    first = fails(stream)
    if first.ok:
        return stream
    if first.first_pc is not None:
        pc = stream.body_offset()
        for n, i in enumerate(keep):
            if pc >= first.first_pc:
                keep = keep[:n + 1]
                break
            pc += len(stream.generated[i])
    runs = 0
    chunk = max(1, len(keep) // 2)
    while chunk >= 1 and runs < budget:
        i = len(keep) - 2                      # never drop the failing (last) instruction
        progress = False
        while i >= 0 and runs < budget:
            lo = max(0, i - chunk + 1)
            trial = keep[:lo] + keep[i + 1:]
            runs += 1
            if not fails(stream.with_keep(trial)).ok:
                keep = trial
                progress = True
                if log:
                    log(f"  {len(keep)} instructions still fail")
            i = lo - 1
        if not progress:
            chunk //= 2
    return stream.with_keep(keep)


def _keep_text(keep: Sequence[int], length: int) -> str:
    if list(keep) == list(range(length)):
        return ""
    return " --keep " + ",".join(map(str, keep))


def reproducer(stream: Stream, outcome: Outcome) -> str:
    """A report of a failing stream: seed, differences, the body, and the command that runs
    exactly this stream again (``--asm`` prints its whole assembly)."""
    n = len(stream.generated)
    lines = [f"lockstep stream seed {stream.seed}: {len(stream.keep)} of {n} body "
             f"instructions, EXEC {stream.exec_init:#018x}, SCC {stream.scc_init}"]
    lines += [f"  {p}" for p in outcome.problems[:8]]
    lines.append("body:")
    lines += [f"  [{i}] {t}" for i, t in zip(stream.keep, stream.body_text(), strict=True)]
    lines.append(f"rerun: python -m gpgpu_hdl.sim.lockstep --seed {stream.seed} "
                 f"--length {n}{_keep_text(stream.keep, n)}")
    return "\n".join(lines)


def _indices(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of indices: {text!r}") from None


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gpgpu_hdl.sim.lockstep",
                                 description="Run random instruction streams on the RTL "
                                             "(Verilator) and the emulator in lockstep.")
    ap.add_argument("--seed", type=int, default=1, help="first seed (default 1)")
    ap.add_argument("--count", type=int, default=1, help="streams to run (default 1)")
    ap.add_argument("--length", type=int, default=200, help="body instructions (default 200)")
    ap.add_argument("--keep", type=_indices, default=None, metavar="I,J,...",
                    help="run only these body instructions (from a reproducer)")
    ap.add_argument("--asm", action="store_true", help="print the stream's assembly and stop")
    ap.add_argument("--no-minimize", action="store_true", help="report failures unshrunk")
    args = ap.parse_args(argv)
    if args.length < 1 or args.count < 1:
        ap.error("--length and --count must be positive")
    try:
        def stream_of(seed: int) -> Stream:
            s = random_stream(seed, args.length)
            return s if args.keep is None else s.with_keep(args.keep)
        if args.asm:
            print(stream_of(args.seed).assembly(), end="")
            return 0
        from ..runtime import Device

        def device():
            return Device("verilator")
        failed = 0
        for seed in range(args.seed, args.seed + args.count):
            stream = stream_of(seed)
            out = check(stream, device)
            if out.ok:
                print(f"seed {seed}: ok ({out.instructions} wave-instructions, "
                      f"{out.cycles} cycles)")
                continue
            failed += 1
            if not args.no_minimize:
                stream = minimize(stream, lambda s: check(s, device),
                                  log=lambda m: print(m, file=sys.stderr))
                out = check(stream, device)
            print(reproducer(stream, out))
        return 1 if failed else 0
    except GpgpuError as e:
        print(f"lockstep: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
