"""The differential runner: a generated program compiled once by clang-19 for tahiti, run on
PoCL (the reference, from the same OpenCL C), on the golden-model emulator and, when the compute
unit can execute it, on the RTL under Verilator; their output buffers compared.

Integers must be identical; floats within 0 ulp (+0 and -0 equal, NaNs equal: see
:func:`~.compare.ulp_distance`), since the generator only uses exactly specified float
operations. Any difference, or an error on one side, is a :class:`Difference`.

Batches: :func:`run_batch` puts several programs in one OpenCL file (one prelude, one kernel
each) so that clang and PoCL build once per batch. Each kernel is an independent program with
its own buffers and launch, so a batch of ``n`` counts as ``n`` programs. A batch that does not
build is split into its programs, so that one bad program does not hide the others.

The emulator runs with ``check_bounds``: an access outside a buffer (a generator bug, since every
index is reduced modulo its buffer) is an error, not a silent read.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import GpgpuError
from ..toolchain import compile_cl
from . import pocl
from .compare import first_mismatch
from .program import Program, make_inputs, prelude, render, soft_division

__all__ = ["IMPLEMENTATIONS", "Difference", "Outcome", "rtl_eligible", "run_batch",
           "run_program", "run_source", "batch_source", "summarize", "second_opinion",
           "SOFT_DIVISION_AGREES"]

#: Every implementation a program can run on, reference first.
IMPLEMENTATIONS = ("pocl", "emu", "rtl")

#: Extra options of both compilers: no warnings (generated code has constant conditions).
QUIET = ("-w",)
#: clang-19's options for the tahiti code objects, besides the project's
#: (:data:`~gpgpu_hdl.toolchain.CLANG_FLAGS`): no warnings, and no integer division expansion
#: in AMDGPUCodeGenPrepare, which in LLVM 19 narrows an unsigned division of sign-extended
#: negative operands to 24 bits and gets it wrong (fixed in LLVM 20 by llvm-project#119325;
#: the case is kept in ``tests/fuzz/regressions/``). Instruction selection still expands the
#: divisions, with the same instructions.
CLANG_FUZZ_FLAGS = (*QUIET, "-mllvm", "-amdgpu-codegenprepare-disable-idiv-expansion=1")
#: PoCL's build options: the reference is built without optimisation (half the build time
#: of -O2, and the reference leans on fewer optimiser passes).
POCL_FUZZ_OPTIONS = (*pocl.POCL_OPTIONS, *QUIET, "-cl-opt-disable")

#: Wave-instructions after which the emulator stops a launch (generated loops are bounded far
#: below it; reaching it is a finding).
EMU_INSTRUCTION_LIMIT = 5_000_000


@dataclass(frozen=True)
class Difference:
    """One finding for a program: two implementations whose outputs differ (``kind``
    ``mismatch``: the first differing buffer element and both values), or one that failed
    (``kind`` ``error``: the message), or a build that failed (``impls`` ``("clang",)`` or
    ``("pocl",)``)."""

    seed: int
    kernel: str
    kind: str
    impls: tuple[str, ...]
    detail: str
    buffer: str = ""
    index: int = -1
    left: str = ""
    right: str = ""
    #: the second opinion on a PoCL/emulator mismatch (:func:`second_opinion`)
    note: str = ""

    @property
    def signature(self) -> tuple[str, ...]:
        """What must persist while the program is reduced: the kind, the implementations and,
        for an error, the exception type (the first word of the detail)."""
        if self.kind == "error":
            return (self.kind, *self.impls, self.detail.split(":")[0])
        return (self.kind, *self.impls)

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["impls"] = list(self.impls)
        return d

    def __str__(self) -> str:
        note = f" [{self.note}]" if self.note else ""
        return (f"seed {self.seed} ({self.kernel}): {' vs '.join(self.impls)}: "
                f"{self.detail}{note}")


@dataclass
class Outcome:
    """What running one program found. ``ran``: the implementations whose outputs were
    compared; ``rtl``: why the RTL did not run it ("" when it did or was not asked);
    ``instructions``: wave-instructions the emulator retired."""

    program: Program
    ran: list[str] = field(default_factory=list)
    rtl_eligible: bool = False
    rtl: str = ""
    differences: list[Difference] = field(default_factory=list)
    instructions: int = 0
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def seed(self) -> int:
        return self.program.seed


def batch_source(programs: Sequence[Program]) -> str:
    """One OpenCL file holding every program's kernel after one shared prelude."""
    return prelude() + "".join("\n" + render(p, with_prelude=False) for p in programs)


def _launch(p: Program) -> pocl.PoclLaunch:
    return pocl.PoclLaunch(p.name, tuple(pocl.Buf(b.name) for b in p.buffers), p.global_size,
                           p.local_size)


def _outputs(p: Program) -> list[str]:
    return [b.name for b in p.buffers if b.role != "in"]


def _error(exc: BaseException) -> str:
    """One line naming the exception (its type first: the reducer keys on it)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def rtl_eligible(code_object: Any, kernel: str, program: Program) -> str:
    """Why the compute unit (the default :class:`~gpgpu_hdl.config.CuConfig`) cannot run
    ``kernel`` of ``code_object``, or "" when it can: every instruction in
    :data:`gpgpu_hdl.cu.decode.SUPPORTED_MNEMONICS`, no FP64, registers, LDS, code and
    waves within the unit."""
    from ..config import ConfigError, CuConfig
    from ..cu.decode import SUPPORTED_MNEMONICS
    from ..isa.decoder import decode

    k = code_object.kernel(kernel)
    names = {inst.info.mnemonic for inst in decode(k.code)}
    f64 = sorted(n for n in names if "f64" in n)
    if f64:
        return f"FP64: {', '.join(f64)}"
    missing = sorted(names - SUPPORTED_MNEMONICS)
    if missing:
        return f"not in the RTL: {', '.join(missing)}"
    cfg = CuConfig()
    h = k.header
    try:
        cfg.check_kernel(kernel, h.workitem_vgpr_count, h.wavefront_sgpr_count,
                         h.workgroup_group_segment_byte_size)
    except ConfigError as exc:
        return str(exc)
    if len(k.code) > cfg.imem_bytes:
        return f"{len(k.code)} bytes of code; the unit holds {cfg.imem_bytes}"
    waves = -(-program.group_items // 64)
    if waves > cfg.wave_slots:
        return f"{waves} waves per group; the unit has {cfg.wave_slots} slots"
    return ""


def _run_device(device: Any, loaded: Any, p: Program, inputs: dict[str, np.ndarray]
                ) -> tuple[dict[str, np.ndarray], Any]:
    bufs = {name: device.array(arr) for name, arr in inputs.items()}
    result = loaded.kernel(p.name)(*(bufs[b.name] for b in p.buffers),
                                   global_size=p.global_size, local_size=p.local_size)
    return {n: bufs[n].numpy() for n in _outputs(p)}, result


def _compare(outcome: Outcome, results: dict[str, dict[str, np.ndarray]]) -> None:
    names = [n for n in IMPLEMENTATIONS if n in results]
    p = outcome.program
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            m = first_mismatch(results[a], results[b])
            if m is not None:
                outcome.differences.append(Difference(
                    p.seed, p.name, "mismatch", (a, b), str(m), m.buffer, m.index, m.left,
                    m.right))


def _check_one(p: Program, reference: dict[str, np.ndarray] | str, code: Any,
               emu: tuple[Any, Any], binary: Path, rtl: Callable[[Program], bool] | None,
               source: str, clang_flags: tuple[str, ...], opinions: bool = True) -> Outcome:
    outcome = Outcome(p)
    inputs = make_inputs(p)
    results: dict[str, dict[str, np.ndarray]] = {}
    if isinstance(reference, str):
        outcome.differences.append(Difference(p.seed, p.name, "error", ("pocl",), reference))
    else:
        results["pocl"] = reference
        outcome.ran.append("pocl")

    def attempt(name: str, run: Callable[[], dict[str, np.ndarray]]) -> None:
        start = time.perf_counter()
        try:
            results[name] = run()
            outcome.ran.append(name)
        except GpgpuError as exc:
            outcome.differences.append(Difference(p.seed, p.name, "error", (name,),
                                                  _error(exc)))
        except Exception as exc:           # a crash of an implementation is a finding too
            detail = _error(exc) + " | " + traceback.format_exc(limit=-2).replace("\n", " ")
            outcome.differences.append(Difference(p.seed, p.name, "error", (name,), detail))
        outcome.seconds[name] = time.perf_counter() - start

    def on_emu() -> dict[str, np.ndarray]:
        out, result = _run_device(*emu, p, inputs)
        outcome.instructions = int(result.instructions)
        return out

    attempt("emu", on_emu)
    reason = rtl_eligible(code, p.name, p)
    outcome.rtl_eligible = not reason
    if rtl is not None and rtl(p):
        if reason:
            outcome.rtl = reason
        else:
            def on_rtl() -> dict[str, np.ndarray]:
                from ..runtime import Device
                limit = 400 * max(outcome.instructions, 1000) + 200_000
                device = Device("verilator", max_cycles=limit)
                out, _ = _run_device(device, device.load(binary), p, inputs)
                return out
            attempt("rtl", on_rtl)
    _compare(outcome, results)
    for i, d in enumerate(outcome.differences):
        if opinions and d.impls == ("pocl", "emu"):
            note = second_opinion(p, source, inputs, results["pocl"], results["emu"],
                                  clang_flags)
            outcome.differences[i] = dataclasses.replace(d, note=note)
    return outcome


#: What :func:`second_opinion` concludes.
O0_AGREES_WITH_POCL = "the -O0 build agrees with PoCL: suspect clang's optimisation"
O0_AGREES_WITH_O2 = "the -O0 build agrees with the -O2 one: suspect PoCL, libclc or the emulator"
SOFT_DIVISION_AGREES = ("with its unsigned / and % done by long division the -O2 build agrees "
                        "with PoCL: clang 19's division lowering (llvm-project#194829)")


def _emu_opinion(p: Program, source: str, inputs: dict[str, np.ndarray],
                 flags: tuple[str, ...]) -> dict[str, np.ndarray] | str:
    """``source`` built with ``flags`` and run on the emulator: the outputs, or why not."""
    from ..runtime import Device

    with tempfile.TemporaryDirectory() as tmp:
        src, binary = Path(tmp) / "opinion.cl", Path(tmp) / "opinion.bin"
        src.write_text(source)
        try:
            compile_cl(src, binary, extra_flags=flags)
            device = Device("emu", check_bounds=True, max_instructions=EMU_INSTRUCTION_LIMIT)
            out, _ = _run_device(device, device.load(binary), p, inputs)
        except GpgpuError as exc:
            return _error(exc)[:160]
    return out


def second_opinion(p: Program, source: str, inputs: dict[str, np.ndarray],
                   pocl_out: dict[str, np.ndarray], emu_out: dict[str, np.ndarray],
                   clang_flags: tuple[str, ...] = CLANG_FUZZ_FLAGS) -> str:
    """For a PoCL/emulator mismatch: the program built again by clang at ``-O0`` and run on the
    emulator. When that agrees with PoCL, the optimised code object is the suspect (a
    miscompile, or an emulator bug in an instruction only the optimised code uses); when it
    agrees with the optimised one, PoCL, libclc or an emulator bug common to both builds.
    Unless the -O0 build agrees with the optimised one, a program with unsigned division
    helpers is also built at -O2 with them done by long division (:func:`soft_division`):
    if that agrees with PoCL, the division lowering is the culprit."""
    o0 = _emu_opinion(p, source, inputs, (*clang_flags, "-O0"))
    if isinstance(o0, str):
        note = f"no -O0 opinion: {o0}"
    elif first_mismatch(pocl_out, o0) is None:
        note = O0_AGREES_WITH_POCL
    elif first_mismatch(emu_out, o0) is None:
        return O0_AGREES_WITH_O2
    else:
        note = "the -O0 build agrees with neither"
    soft = soft_division(source)
    if soft != source:
        out = _emu_opinion(p, soft, inputs, clang_flags)
        if not isinstance(out, str) and first_mismatch(pocl_out, out) is None:
            note += "; " + SOFT_DIVISION_AGREES
    return note


_BUILD_FAILED = "PoclError: PoCL build"


def _build_error(programs: Sequence[Program], impl: str, exc: GpgpuError) -> list[Outcome]:
    return [Outcome(p, differences=[Difference(p.seed, p.name, "error", (impl,), _error(exc))])
            for p in programs]


def run_batch(programs: Sequence[Program], *, rtl: Callable[[Program], bool] | None = None,
              workdir: str | Path | None = None, opinions: bool = True) -> list[Outcome]:
    """Compile ``programs`` into one code object and one PoCL program, run each on PoCL and
    the emulator, and on the RTL those for which ``rtl(program)`` is true and the unit can
    run them; compare. Returns one :class:`Outcome` per program, in order. ``opinions``:
    get a :func:`second_opinion` on each PoCL/emulator mismatch (the reducer does without)."""
    if not programs:
        return []
    return _run(programs, batch_source(programs), rtl, workdir, opinions=opinions)


def run_source(program: Program, text: str, *, rtl: bool = False,
               clang_flags: Sequence[str] = CLANG_FUZZ_FLAGS,
               workdir: str | Path | None = None) -> Outcome:
    """Like :func:`run_program`, with the OpenCL source ``text`` (a whole file) instead of
    ``program``'s rendering: ``program`` only gives the kernel name, buffers and launch.
    ``clang_flags``: clang's extra options for the tahiti code object."""
    return _run([program], text, (lambda _: True) if rtl else None, workdir,
                tuple(clang_flags))[0]


def _run(programs: Sequence[Program], text: str, rtl: Callable[[Program], bool] | None,
         workdir: str | Path | None, clang_flags: tuple[str, ...] = CLANG_FUZZ_FLAGS, *,
         opinions: bool = True) -> list[Outcome]:
    from ..isa.codeobj import CodeObject
    from ..runtime import Device

    # thousands of one-off programs: keep them out of PoCL's on-disk kernel cache (the PoCL
    # processes inherit the setting)
    os.environ.setdefault("POCL_KERNEL_CACHE", "0")
    names = [p.name for p in programs]
    if len(set(names)) != len(names):
        raise ValueError("programs in a batch need distinct kernel names")
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        source = Path(tmp) / "batch.cl"
        binary = Path(tmp) / "batch.bin"
        source.write_text(text)
        try:
            compile_cl(source, binary, extra_flags=clang_flags)
            code = CodeObject.load(binary)
        except GpgpuError as exc:
            if len(programs) == 1:
                return _build_error(programs, "clang", exc)
            return [o for p in programs
                    for o in _run([p], render(p), rtl, workdir, clang_flags,
                                  opinions=opinions)]
        start = time.perf_counter()
        references = pocl.run_isolated(
            text, f"{programs[0].name}.cl", POCL_FUZZ_OPTIONS,
            [([_launch(p)], make_inputs(p), _outputs(p)) for p in programs])
        pocl_seconds = (time.perf_counter() - start) / len(programs)
        if len(programs) > 1 and all(isinstance(r, str) and r.startswith(_BUILD_FAILED)
                                     for r in references):
            return [o for p in programs
                    for o in _run([p], render(p), rtl, workdir, clang_flags,
                                  opinions=opinions)]
        device = Device("emu", check_bounds=True, max_instructions=EMU_INSTRUCTION_LIMIT)
        loaded = device.load(binary)
        outcomes = []
        for p, ref in zip(programs, references, strict=True):
            source = text if len(programs) == 1 else render(p)
            outcome = _check_one(p, ref, code, (device, loaded), binary, rtl, source,
                                 clang_flags, opinions)
            outcome.seconds["pocl"] = pocl_seconds
            outcomes.append(outcome)
        return outcomes


def run_program(program: Program, *, rtl: bool = False, workdir: str | Path | None = None
                ) -> Outcome:
    """Run one program (on the RTL too when ``rtl`` and the unit can run it)."""
    return run_batch([program], rtl=(lambda _: True) if rtl else None, workdir=workdir)[0]


def summarize(outcomes: Iterable[Outcome]) -> dict[str, int]:
    """Programs run per implementation, RTL-eligible programs and differences."""
    counts = {"programs": 0, "rtl_eligible": 0, "differences": 0,
              **{f"ran_{n}": 0 for n in IMPLEMENTATIONS}}
    for o in outcomes:
        counts["programs"] += 1
        counts["rtl_eligible"] += o.rtl_eligible
        counts["differences"] += len(o.differences)
        for n in o.ran:
            counts[f"ran_{n}"] += 1
    return counts
