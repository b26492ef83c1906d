# amaranth: UnusedElaboratable=no
"""The trimmer end to end: policy decisions on the example kernels, emitted Verilog that is
reproducible and audited with pyverilog, the ``trim`` command and its JSON report, bad inputs.

Elaboration uses small units (one or two lanes) so that each conversion takes seconds; area
with real Yosys runs is ``slow``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from amaranth.hdl import Fragment, MemoryInstance, Shape

from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.cu.core import ComputeUnit
from gpgpu_hdl.cu.decode import SUPPORTED_MNEMONICS
from gpgpu_hdl.cu.plan import PARTS, BuildPlan
from gpgpu_hdl.cu.valu import IntLaneAlu
from gpgpu_hdl.isa.table import TABLE, Unit
from trimmer.audit import AuditError, audit, lane_units, parse_verilog
from trimmer.cli import main, parse_config
from trimmer.emit import emit_verilog
from trimmer.policy import DROPPED, TrimError, full_unit, part_members, trim
from trimmer.profile import Profile

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "examples" / "kernels"
SMALL = CuConfig(lanes=1, wave_slots=2)
SMALL_ARGS = ("--config", "lanes=1", "--config", "wave_slots=2")
DS = frozenset(i.mnemonic for i in TABLE if i.unit is Unit.LDS)


def profile_of(*names: str, kernels: tuple[str, ...] = ()) -> Profile:
    p = Profile.from_files([KERNELS / f"{n}.bin" for n in names])
    if kernels:
        p = Profile(tuple(k for k in p.kernels if k.name in kernels))
    return p


def run_trim(*args: str, cwd: Path | None = None,
             env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trimmer", *args], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, "COLUMNS": "200", **(env or {})})


@pytest.fixture
def trim_in_process(capsys, monkeypatch):
    """Run ``trim`` in this process: ``(exit code, stdout, stderr)``."""
    monkeypatch.setenv("COLUMNS", "200")

    def run(*args: str) -> tuple[int, str, str]:
        code = 0
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code
        out = capsys.readouterr()
        return code, out.out, out.err
    return run


# --- policy on the example kernels ------------------------------------------------------------

@pytest.mark.parametrize("path", sorted(KERNELS.glob("*.bin")), ids=lambda p: p.stem)
def test_policy_keeps_exactly_the_parts_the_kernels_use(path):
    """Each part is kept iff some kernel instruction needs it (per the plan's own membership),
    the trimmed unit decodes exactly the implemented instructions of the kernels, and the
    register file and LDS hold what every kernel header asks for."""
    p = Profile.from_files([path])
    t = trim(p, SMALL, allow_unsupported=True)
    used = set(p.mnemonics)
    decided = {d.part: d.kept for d in t.decisions}
    assert list(decided) == list(PARTS)
    for part in PARTS:
        needed = bool(used & part_members(part))
        if part in ("lds", "lds_atomics"):
            needed = needed and t.config.lds_bytes > 0
        assert decided[part] == needed, part
        assert (part in t.plan.kept) == needed
    assert t.plan.profile == frozenset(used) - set(t.unsupported)
    for k in p.kernels:
        t.config.check_kernel(k.name, k.vgprs, k.sgprs, k.lds_bytes)
    assert t.config.shifter == ("multiplier" if "multiplier" in t.plan.kept else "barrel")


def test_vecadd_needs_no_multiplier_and_no_lds():
    t = trim(profile_of("vecadd"), SMALL)
    dropped = {d.part: d.reason for d in t.decisions if not d.kept}
    assert {"multiplier", "lds", "funnel"} <= set(dropped)
    assert t.config.lds_bytes == 0 and t.sizing["lds_bytes"]["trimmed"] == 0
    assert t.config.shifter == "barrel"
    assert t.config.resources().ebr < t.base.resources().ebr


def test_matmul_int_keeps_the_multiplier_and_the_shifter_rides_on_it():
    p = profile_of("matmul", kernels=("matmul_int",))
    t = trim(p, SMALL)
    assert "multiplier" in t.plan.kept
    assert t.config.shifter == "multiplier"
    assert "v_mul_lo_u32" in dict((d.part, d.reason) for d in t.decisions)["multiplier"]
    assert not IntLaneAlu(ops=t.plan.valu_ops, shifter="multiplier").units & {"shift32"}


def f64_kernel() -> Path:
    """A code object whose kernel uses FP64, which the compute unit does not build."""
    from tests._suite import load_suite
    suite = load_suite()
    return suite.code_object(suite.CASES_BY_NAME["scale_f64"])


def test_matmul_float_keeps_the_fp_multiplier_and_adder_only():
    t = trim(profile_of("matmul"), SMALL)
    kept = set(t.plan.kept)
    assert {"fp_mul", "fp_add"} <= kept            # v_mac_f32: the unfused multiply-add
    assert not kept & {"fp_fma", "fp_cmp", "fp_cvt", "fp_trans"}


def test_fp64_needs_allow_unsupported():
    p = Profile.from_files([f64_kernel()])
    with pytest.raises(TrimError, match="v_mul_f64"):
        trim(p, SMALL)
    t = trim(p, SMALL, allow_unsupported=True)
    assert "v_mul_f64" in t.unsupported
    assert "v_mul_f64" not in t.config.profile


def test_writelane_needs_allow_unsupported(tmp_path):
    """v_writelane_b32 (clang's -O0 SGPR spills) is not built: the trimmer reports it."""
    from gpgpu_hdl.toolchain import assemble_kernel
    path = tmp_path / "spill.bin"
    path.write_bytes(assemble_kernel("v_writelane_b32 v1, s2, 3\ns_endpgm", "k"))
    p = Profile.from_files([path])
    with pytest.raises(TrimError, match="v_writelane_b32"):
        trim(p, SMALL)
    t = trim(p, SMALL, allow_unsupported=True)
    assert t.unsupported == {"v_writelane_b32": (f"{path}:k",)}
    assert "v_writelane_b32" not in t.config.profile


def test_keep_and_drop():
    p = profile_of("vecadd")
    t = trim(p, SMALL, keep=["multiplier"], drop=["shifter"])
    why = {d.part: (d.kept, d.reason) for d in t.decisions}
    assert why["multiplier"] == (True, "kept by --keep")
    needed = sorted(part_members("shifter") & set(p.mnemonics))
    assert why["shifter"] == (False, f"{DROPPED}; the kernels' {', '.join(needed)} will trap")
    assert not part_members("shifter") & t.config.profile
    assert part_members("multiplier") <= t.config.profile
    with pytest.raises(TrimError, match="unknown part"):
        trim(p, SMALL, keep=["fpu"])


def test_drop_of_a_part_no_kernel_needs_names_no_instruction():
    t = trim(profile_of("vecadd"), SMALL, drop=["funnel"])
    assert {d.part: d.reason for d in t.decisions}["funnel"] == DROPPED


# --- emission and audit -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def vecadd_trim():
    return trim(profile_of("vecadd"), SMALL)


@pytest.fixture(scope="module")
def trimmed_text(vecadd_trim):
    return emit_verilog(vecadd_trim.config)


@pytest.fixture(scope="module")
def full_text():
    return emit_verilog(SMALL)


def _amaranth_hierarchy(config: CuConfig) -> tuple[set[str], dict[str, tuple[int, int]]]:
    """Submodule paths and memories (path -> (depth, width)) of the elaborated unit:
    Amaranth's own view, the reference the parsed Verilog is compared with."""
    modules, memories = set(), {}

    def walk(fragment, path):
        for sub, name, _ in fragment.subfragments:
            here = f"{path}.{name}" if path else str(name)
            if isinstance(sub, MemoryInstance):
                memory = sub.origins[0]             # the amaranth.lib.memory.Memory
                memories[here] = (memory.depth, Shape.cast(memory.shape).width)
            else:
                modules.add(here)
                walk(sub, here)
    walk(Fragment.get(ComputeUnit(config), None), "")
    return modules, memories


def test_parsed_hierarchy_is_amaranths(vecadd_trim, trimmed_text):
    h = parse_verilog(trimmed_text)
    parsed = {path for path, _ in h.walk() if path}
    memories = {path: (m.depth, m.width) for path, m in h.memories().items()}
    assert (parsed, memories) == _amaranth_hierarchy(vecadd_trim.config)


def test_audit_passes_and_matches_the_plan(vecadd_trim, trimmed_text):
    result = audit(trimmed_text, vecadd_trim.config, vecadd_trim.plan)
    assert result.ok and result.checks
    h = result.hierarchy
    lanes = [i for i in h.modules[h.top].instances if i.startswith("valu")]
    assert len(lanes) == SMALL.lanes
    for lane in lanes:
        units = set(h.at(lane).instances)
        assert units == set(IntLaneAlu(ops=vecadd_trim.plan.valu_ops,
                                       shifter=vecadd_trim.config.shifter).units)
        assert "mul" not in units                   # vecadd: multiplier dropped
    assert "lds" not in h.memories()


def test_audit_of_the_full_unit(full_text):
    result = audit(full_text, SMALL)
    assert result.ok
    assert "lds" in result.hierarchy.memories()
    assert lane_units(SMALL) <= set(result.hierarchy.at("valu0").instances)


def test_audit_fails_when_dropped_parts_are_present(vecadd_trim, full_text):
    with pytest.raises(AuditError) as info:
        audit(full_text, vecadd_trim.config, vecadd_trim.plan)
    message = str(info.value)
    assert "part multiplier (dropped)" in message and "part lds (dropped)" in message
    assert "\n" not in message
    result = audit(full_text, vecadd_trim.config, vecadd_trim.plan, strict=False)
    assert not result.ok
    assert {c.subject for c in result.failures} >= {"part multiplier (dropped)",
                                                     "part lds (dropped)", "VGPR file"}


def test_audit_fails_when_kept_parts_are_missing(vecadd_trim, trimmed_text):
    keeps_all = BuildPlan.of(SMALL.profile, lds_bytes=SMALL.lds_bytes)
    with pytest.raises(AuditError, match="part lds \\(kept\\)"):
        audit(trimmed_text, vecadd_trim.config, keeps_all)


def test_integer_kernel_unit_has_no_fp_unit(vecadd_trim, trimmed_text):
    h = audit(trimmed_text, vecadd_trim.config, vecadd_trim.plan).hierarchy
    assert not [i for i in h.modules[h.top].instances if i.startswith("fpu")]
    assert not [p for p in vecadd_trim.plan.kept if p.startswith("fp_")]


def test_float_add_only_kernel_keeps_only_the_adder():
    t = trim(profile_of("matadd", kernels=("matadd_float",)), SMALL)
    assert [p for p in t.plan.kept if p.startswith("fp_")] == ["fp_add"]
    result = audit(emit_verilog(t.config), t.config, t.plan)
    h = result.hierarchy
    fpus = [i for i in h.modules[h.top].instances if i.startswith("fpu")]
    assert len(fpus) == SMALL.lanes
    for fpu in fpus:
        assert set(h.at(fpu).instances) == {"arith"}
        assert set(h.at(f"{fpu}.arith").instances) == {"add"}
    assert {"FP units", "sub-units of fpu0"} <= {c.subject for c in result.checks}


def test_audit_catches_an_fp_sub_unit_the_plan_dropped(full_text):
    """The full unit's Verilog against the plan of a float-add-only kernel: every other FP
    sub-unit is reported."""
    t = trim(profile_of("matadd", kernels=("matadd_float",)), SMALL)
    result = audit(full_text, t.config, t.plan, strict=False)
    failed = {c.subject: c for c in result.failures}
    assert "sub-units of fpu0" in failed
    assert "trans" in failed["sub-units of fpu0"].found


def test_audit_rejects_text_that_does_not_parse():
    with pytest.raises(AuditError, match="does not parse"):
        audit("module compute_unit(a); input a; wire ; endmodule\n", SMALL)
    with pytest.raises(AuditError, match="no module 'compute_unit'"):
        parse_verilog("module other(a);\n  input a;\nendmodule\n")


def test_parse_verilog_reads_attributes_escaped_names_and_memories():
    text = (
        "module top(clk);\n"
        "  input clk;\n"
        "  reg [7:0] mem [0:15];\n"
        "  reg [31:0] big [32'd1023:0];\n"
        "  always @* begin\n"
        "    (* full_case = 32'd1 *)\n"
        "    case (clk)\n"
        "      1'h0: ;\n"
        "    endcase\n"
        "  end\n"
        "  \\top.sub  sub (.clk(clk));\n"
        "endmodule\n"
        "(* enum_base_type = \"Op\" *)\n"
        "module \\top.sub (clk);\n"
        "  input clk;\n"
        "endmodule\n")
    h = parse_verilog(text, "top")
    assert h.modules["top"].instances == {"sub": "top.sub"}
    assert h.memories() == {"mem": h.modules["top"].memories[0],
                            "big": h.modules["top"].memories[1]}
    assert [(m.depth, m.width) for m in h.memories().values()] == [(16, 8), (1024, 32)]
    assert [p for p, _ in h.walk()] == ["", "sub"]


def test_emit_is_reproducible_across_processes(tmp_path, trimmed_text):
    """Two processes with different hash seeds write the same bytes, and they are what
    emit_verilog gives in this one."""
    digests = []
    for seed in ("1", "2"):
        out = tmp_path / f"cu{seed}.v"
        proc = run_trim(str(KERNELS / "vecadd.bin"), *SMALL_ARGS, "-o", str(out),
                        env={"PYTHONHASHSEED": seed})
        assert proc.returncode == 0, proc.stderr
        digests.append(hashlib.sha256(out.read_bytes()).hexdigest())
    assert digests[0] == digests[1] == hashlib.sha256(trimmed_text.encode()).hexdigest()
    assert str(ROOT) not in trimmed_text and str(Path.home()) not in trimmed_text


# --- the command ------------------------------------------------------------------------------

def test_trim_writes_audited_verilog_and_report(tmp_path, trim_in_process, vecadd_trim,
                                                 trimmed_text):
    out, report = tmp_path / "cu.v", tmp_path / "r.json"
    code, stdout, _ = trim_in_process(str(KERNELS / "vecadd.bin"), *SMALL_ARGS,
                                      "-o", str(out), "--report", str(report))
    assert code == 0
    assert out.read_text() == trimmed_text
    data = json.loads(report.read_text())
    t = vecadd_trim
    assert data["trim"] == json.loads(json.dumps(t.to_dict()))
    assert data["trim"]["parts"] == [{"part": d.part, "kept": d.kept, "reason": d.reason}
                                     for d in t.decisions]
    assert data["profile"] == json.loads(json.dumps(t.profile.to_dict()))
    assert data["decoder"]["instructions"] == {"base": len(t.base_plan.profile),
                                               "trimmed": len(t.plan.profile)}
    assert data["resources"]["trimmed"]["ebr"] == t.config.resources().ebr
    assert data["output"]["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    assert data["output"]["unit"] == "trimmed"
    assert data["audit"]["trimmed"]["ok"] is True
    assert data["audit"]["trimmed"]["checks"] == [
        {"subject": c.subject, "expected": c.expected, "found": c.found, "ok": c.ok}
        for c in audit(trimmed_text, t.config, t.plan).checks]
    assert data["area"] is None
    for d in t.decisions:
        assert d.reason in stdout
    assert "Audit of the trimmed unit" in stdout and "Sizing" in stdout
    assert f"{len(t.plan.profile)} of {len(t.base_plan.profile)} instructions" in stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cu.v", "r.json"]


def test_trim_full_writes_the_untrimmed_unit(tmp_path, trim_in_process, full_text):
    out = tmp_path / "cu.v"
    code, stdout, _ = trim_in_process(str(KERNELS / "vecadd.bin"), "--config",
                                      "lanes=1,wave_slots=2", "--full", "-o", str(out))
    assert code == 0
    assert out.read_text() == full_text
    assert "Audit of the base unit" in stdout


FP_PARTS = ("fp_add", "fp_mul", "fp_fma", "fp_cmp", "fp_cvt", "fp_trans")


def test_trim_full_without_kernels_drops_whole_parts(tmp_path, trim_in_process):
    """``trim --full --drop ...`` needs no kernel: the base unit without the FP32 unit. Checked
    against the table (no FPU instruction decodes, every implemented integer one still does)
    and the Verilog's own hierarchy (no FP module instance anywhere)."""
    out, report = tmp_path / "int.v", tmp_path / "r.json"
    drops = [a for p in FP_PARTS for a in ("--drop", p)]
    code, stdout, err = trim_in_process(*SMALL_ARGS, "--full", *drops, "-o", str(out),
                                        "--report", str(report))
    assert code == 0, err
    data = json.loads(report.read_text())
    assert data["output"]["unit"] == "full" and data["audit"]["full"]["ok"] is True
    assert data["drop"] == list(FP_PARTS) and data["kernels"] == []
    for part in PARTS:
        assert data["parts"][part]["kept"] is (part not in FP_PARTS), part
    fpu = {i.mnemonic for i in TABLE if i.unit is Unit.FPU}
    wanted = {i.mnemonic for i in TABLE if i.unit is not Unit.FPU}
    kept = BuildPlan.of(frozenset(wanted), lds_bytes=SMALL.lds_bytes).profile
    text = out.read_text()
    assert text == emit_verilog(CuConfig(lanes=1, wave_slots=2, profile=kept))
    hierarchy = parse_verilog(text)
    assert not [path for path, _ in hierarchy.walk() if "fpu" in path or "fp_" in path]
    assert not fpu & set(kept) and len(kept) > 300
    assert DROPPED in stdout and "Audit of the full unit" in stdout
    assert data["full_unit"]["config"]["profile"] == sorted(kept)
    implemented = BuildPlan.of(SMALL.profile, lds_bytes=SMALL.lds_bytes).profile
    assert f"{len(kept)} of {len(implemented)} instructions" in stdout


INT16 = ("--full", "--config", "lanes=16", *(a for p in FP_PARTS for a in ("--drop", p)))


def test_int16_unit_of_the_issue_decodes_every_integer_instruction_and_no_fp(
        tmp_path, trim_in_process):
    """The command of the issue (``trim --full --config lanes=16 --drop fp_add ...``), without
    ``-o`` (elaborating 16 lanes takes a minute): its profile, checked against the instruction
    table, has no FP32 instruction and every implemented instruction of the other units; the
    report says the FP parts were dropped on request."""
    report = tmp_path / "r.json"
    code, stdout, err = trim_in_process(*INT16, "--report", str(report))
    assert code == 0, err
    full = json.loads(report.read_text())["full_unit"]
    assert full["base"]["lanes"] == full["config"]["lanes"] == 16
    profile = set(full["config"]["profile"])
    fp = {i.mnemonic for i in TABLE if i.unit in (Unit.FPU, Unit.FPU64)}
    integer = {i.mnemonic for i in TABLE if i.unit not in (Unit.FPU, Unit.FPU64)}
    assert fp & SUPPORTED_MNEMONICS                   # the table's FP32 unit is built...
    assert not profile & fp                           # ...and all of it is dropped
    assert profile == integer & SUPPORTED_MNEMONICS
    assert set(full["dropped_instructions"]) == fp & SUPPORTED_MNEMONICS
    assert full["drop"] == list(FP_PARTS)
    reasons = {d["part"]: d["reason"] for d in full["parts"]}
    for part in PARTS:
        assert (reasons[part] == DROPPED) is (part in FP_PARTS), part
    for part in FP_PARTS:
        assert re.search(rf"^{part}\s+dropped\s+{re.escape(DROPPED)}", stdout, re.M), part
    assert "no area measured" in stdout and list(tmp_path.iterdir()) == [report]


def test_full_without_lds_has_no_lds_to_size():
    """Dropping ``lds`` from the full unit takes the LDS's block RAM with it (the
    unimplemented DS instructions of the base profile do not keep it)."""
    f = full_unit(SMALL, drop=["lds"])
    assert f.config.lds_bytes == 0 and not f.config.profile & DS - SUPPORTED_MNEMONICS
    assert f.config.resources().lds_ebr == 0 < SMALL.resources().lds_ebr
    assert {d.part: d.kept for d in f.decisions}["lds_atomics"] is False


def test_full_leaves_nothing_when_the_audit_fails(tmp_path, trim_in_process, monkeypatch):
    """An error after the slow work (here the audit of Verilog that does not parse) leaves
    neither -o nor --report, nor a temporary file."""
    monkeypatch.setattr("trimmer.cli.emit_verilog", lambda config: "module broken(;\n")
    code, _, err = trim_in_process(*SMALL_ARGS, "--full", "--drop", "fp_trans", "-o",
                                   str(tmp_path / "cu.v"), "--report", str(tmp_path / "r.json"))
    lines = err.strip().splitlines()               # the status lines of the steps, the error
    assert code == 1 and lines[-1].startswith("trim: error: the Verilog does not parse"), err
    assert not [line for line in lines[:-1] if "error" in line or "Traceback" in line]
    assert list(tmp_path.iterdir()) == []


def test_trim_full_with_kernels_writes_the_full_unit_less_the_drops(tmp_path, trim_in_process):
    out = tmp_path / "cu.v"
    code, _, err = trim_in_process(str(KERNELS / "vecadd.bin"), *SMALL_ARGS, "--full",
                                   "--drop", "lds", "--drop", "lds_atomics", "-o", str(out))
    assert code == 0, err
    memories = parse_verilog(out.read_text()).memories()
    assert "lds" not in memories and "imem" in memories
    assert any(path.startswith("vgpr") for path in memories)


def test_trim_kernel_selection(tmp_path, trim_in_process):
    report = tmp_path / "r.json"
    code, _, err = trim_in_process(str(KERNELS / "matmul.bin"), "--kernel",
                                   "matmul_int", "--report", str(report))
    assert code == 0, err
    data = json.loads(report.read_text())
    assert data["kernels"] == [f"{KERNELS / 'matmul.bin'}:matmul_int"]
    expected = trim(profile_of("matmul", kernels=("matmul_int",)))
    assert data["trim"] == json.loads(json.dumps(expected.to_dict()))
    assert data["output"] is None and data["audit"] is None


def test_trim_lds_bytes_and_config(tmp_path, trim_in_process):
    report = tmp_path / "r.json"
    code, _, err = trim_in_process(str(KERNELS / "transpose.bin"), "--lds-bytes",
                                   "4096", "--config", "lanes=4", "--config", "shifter=barrel",
                                   "--keep", "funnel", "--report", str(report))
    assert code == 0, err
    data = json.loads(report.read_text())["trim"]
    assert data["base"]["lanes"] == data["trimmed"]["lanes"] == 4
    assert data["base"]["shifter"] == "barrel"
    assert data["trimmed"]["lds_bytes"] == 4096
    assert {"part": "funnel", "kept": True, "reason": "kept by --keep"} in data["parts"]


def test_parse_config_types():
    assert parse_config(["lanes=2", "wave_slots=3,shifter=barrel"]) == CuConfig(
        lanes=2, wave_slots=3, shifter="barrel")
    assert parse_config([]) == CuConfig()


BAD_REQUESTS = {
    "unknown kernel": (["--kernel", "nope"], "matmul_int"),
    "unknown part": (["--keep", "fpu"], "parts are salu"),
    "keep and drop": (["--keep", "lds", "--drop", "lds"], "both --keep and --drop"),
    "config syntax": (["--config", "lanes"], "NAME=VALUE"),
    "config field": (["--config", "warp=2"], "no field 'warp'"),
    "config type": (["--config", "lanes=two"], "takes an integer"),
    "config value": (["--config", "lanes=3"], "lanes must be one of"),
    "config profile": (["--config", "profile=full"], "profile comes from the kernels"),
    "lds bytes type": (["--lds-bytes", "lots"], "--lds-bytes"),
    "lds bytes value": (["--lds-bytes", "300"], "lds_bytes must be"),
    "too few vgprs": (["--config", "vgprs=4"], "VGPRs"),
    "unsupported": ([], "v_mul_f64"),
    "output dir missing": (["-o", "{tmp}/no/cu.v"], "does not exist"),
    "output under a file": (["-o", "{tmp}/file/cu.v"], "does not exist"),
    "output is a dir": (["-o", "{tmp}"], "is a directory"),
    "output unwritable": (["-o", "/proc/cu.v"], "cannot write"),
    "report unwritable": (["--report", "/proc/r.json"], "cannot write"),
    "same output twice": (["-o", "{tmp}/x", "--report", "{tmp}/x"], "same file"),
}


FULL_REQUESTS = {
    "no kernels": ((), "no kernels given"),
    "keep with full": (("--full", "--keep", "lds"), "keeps every part already"),
    "lds bytes with full": (("--full", "--lds-bytes", "512"), "--lds-bytes is about kernels"),
    "kernel with full": (("--full", "--kernel", "vecadd"), "--kernel is about kernels"),
    "unknown part with full": (("--full", "--drop", "fpu"), "parts are salu"),
    "bogus part with full": (("--full", "--drop", "bogus"),
                             "unknown part 'bogus'; parts are " + ", ".join(PARTS)),
    "bad lanes with full": (("--full", "--config", "lanes=17"), "lanes must be one of"),
    "lanes not a number with full": (("--full", "--config", "lanes=sixteen"),
                                     "lanes takes an integer"),
}


@pytest.mark.parametrize("case", FULL_REQUESTS, ids=lambda c: c.replace(" ", "_"))
def test_trim_without_kernels_refuses_bad_requests(case, tmp_path, trim_in_process):
    args, needle = FULL_REQUESTS[case]
    code, _, err = trim_in_process(*SMALL_ARGS, *args, "-o", str(tmp_path / "cu.v"))
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and lines[0].startswith("trim: error: "), err
    assert needle in lines[0]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("case", BAD_REQUESTS, ids=lambda c: c.replace(" ", "_"))
def test_trim_refuses_bad_requests(case, tmp_path, trim_in_process):
    """One line on stderr, exit status 1, no file written (the directory stays as it was)."""
    args, needle = BAD_REQUESTS[case]
    (tmp_path / "file").write_text("not a directory\n")
    before = sorted(tmp_path.iterdir())
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    kernel = ([str(f64_kernel())] if case == "unsupported"
              else [str(KERNELS / "matmul.bin"), "--kernel", "matmul_int"])
    code, _, err = trim_in_process(*kernel, *SMALL_ARGS, *args)
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and lines[0].startswith("trim: error: "), err
    assert needle in lines[0]
    assert sorted(tmp_path.iterdir()) == before


# --- area ---------------------------------------------------------------------------------------

def test_area_report_with_a_model_of_yosys(tmp_path, trim_in_process, monkeypatch, full_text,
                                           trimmed_text):
    """The area plumbing (order, percentages, JSON, progress lines), with ``synthesize``
    replaced by a model whose counts are a function of the Verilog."""
    import gpgpu_hdl.synth

    calls = []

    def model(text, top, target, progress=None, **_):
        calls.append((target, top))
        progress(f"yosys: synth_{target}", 0.0)
        progress("yosys: abc9", 1.0)
        progress("yosys: done", 2.0)
        n = len(text)
        return SimpleNamespace(luts=n // 100, ffs=n // 300, block_rams=n // 50000,
                               block_ram_18k=n // 50000, dsps=n // 90000, carries=n // 700,
                               distributed_rams=0, total_cells=n // 60, seconds=2.0,
                               cached=False, key="0" * 16, tool="model")

    monkeypatch.setattr(gpgpu_hdl.synth, "synthesize", model)
    report = tmp_path / "r.json"
    code, stdout, err = trim_in_process(str(KERNELS / "vecadd.bin"), *SMALL_ARGS,
                                        "--xilinx", "--report", str(report))
    assert code == 0, err
    assert calls == [("ecp5", "compute_unit")] * 2 + [("xilinx", "compute_unit")] * 2
    area = json.loads(report.read_text())["area"]
    texts = {"base": full_text, "trimmed": trimmed_text}
    for target in ("ecp5", "xilinx"):
        for unit, text in texts.items():
            assert area[target][unit]["luts"] == len(text) // 100
        base, trimmed = len(texts["base"]) // 100, len(texts["trimmed"]) // 100
        assert area[target]["saved_percent"]["luts"] == round(100 * (base - trimmed) / base, 1)
    assert "Area, ECP5" in stdout and "Area, Xilinx 7" in stdout and "saved" in stdout
    assert "Yosys ECP5, base unit: yosys: abc9" in err
    assert "Yosys Xilinx 7, trimmed unit: yosys: done" in err


@pytest.mark.slow
def test_area_with_yosys(tmp_path):
    """Real Yosys on a one-lane, one-wave unit (several minutes): the trimmed vecadd unit
    is smaller than the full one in every ECP5 counter, and the report says so."""
    report = tmp_path / "r.json"
    proc = run_trim(str(KERNELS / "vecadd.bin"), "--config",
                    "lanes=1,wave_slots=1,vgprs=4,sgprs=16,imem_bytes=256,lds_bytes=256",
                    "--area", "--report", str(report), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    area = json.loads(report.read_text())["area"]["ecp5"]
    for field in ("luts", "ffs", "carries", "total_cells"):
        assert area["trimmed"][field] < area["base"][field], field
        assert area["saved_percent"][field] > 0
    assert "yosys: abc9" in proc.stderr
    assert "Area, ECP5" in proc.stdout
