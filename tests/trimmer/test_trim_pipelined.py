# amaranth: UnusedElaboratable=no
"""``trim --config pipeline=true``: the pipelined compute unit written, audited and reported.

Converting the pipelined unit to Verilog takes 20-30 s even with 4 lanes, so the module runs
the command twice (a unit trimmed for vecadd, the full integer-only unit), once per session
whatever the number of xdist workers (the first worker to need a run makes it, under a file
lock, the others read its files), and every test reads those runs; the bad requests fail
before any conversion.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from amaranth.hdl import Fragment, MemoryInstance, Shape

from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.cu.plan import BuildPlan
from gpgpu_hdl.cu.pipelined import PipelinedComputeUnit, slow_int_ops
from trimmer.audit import PIPELINED_BLOCKS, AuditError, audit, fp_units, parse_verilog
from trimmer.emit import STYLE
from trimmer.policy import full_unit, trim
from trimmer.profile import Profile

ROOT = Path(__file__).resolve().parents[2]
VECADD = ROOT / "examples" / "kernels" / "vecadd.bin"
BASE = CuConfig(lanes=4, pipeline=True)
FP_PARTS = ("fp_add", "fp_mul", "fp_fma", "fp_cmp", "fp_cvt", "fp_trans")


def run_trim(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trimmer", *args], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, "COLUMNS": "200"})


@dataclasses.dataclass(frozen=True)
class Run:
    """One ``trim`` run: the process, the Verilog it wrote and its JSON report."""

    proc: subprocess.CompletedProcess
    text: str
    report: dict


def _run(factory: pytest.TempPathFactory, worker_id: str, name: str, *args: str) -> Run:
    """``trim ARGS -o cu.v --report r.json``, run once in the session under ``name``."""
    root = factory.getbasetemp()
    if worker_id != "master":                     # the workers' temporary dirs are siblings
        root = root.parent
    where = root / f"trim_pipelined_{name}"
    with open(root / f"trim_pipelined_{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        result = where / "process.json"
        if not result.exists():
            where.mkdir(exist_ok=True)
            proc = run_trim(*args, "-o", "cu.v", "--report", "r.json", cwd=where)
            result.write_text(json.dumps(
                {"args": proc.args, "returncode": proc.returncode, "stdout": proc.stdout,
                 "stderr": proc.stderr}))
    proc = subprocess.CompletedProcess(**json.loads(result.read_text()))
    assert proc.returncode == 0, proc.stderr
    return Run(proc, (where / "cu.v").read_text(), json.loads((where / "r.json").read_text()))


@pytest.fixture(scope="module")
def vecadd_run(tmp_path_factory, worker_id) -> Run:
    """``trim vecadd.bin --config lanes=4 --config pipeline=true -o cu.v``."""
    return _run(tmp_path_factory, worker_id, "vecadd", str(VECADD), "--config", "lanes=4",
                "--config", "pipeline=true")


@pytest.fixture(scope="module")
def vecadd_trim():
    return trim(Profile.from_files([VECADD]), BASE)


@pytest.fixture(scope="module")
def int_run(tmp_path_factory, worker_id) -> Run:
    """``trim --full --config lanes=4,pipeline=true --drop fp_* -o cu.v``: the integer-only
    full unit."""
    drops = [a for part in FP_PARTS for a in ("--drop", part)]
    return _run(tmp_path_factory, worker_id, "int", "--full", "--config",
                "lanes=4,pipeline=true", *drops)


def _amaranth_hierarchy(config: CuConfig) -> tuple[set[str], dict[str, tuple[int, int]]]:
    """Submodule paths and memories (path -> (depth, width)) of the elaborated pipelined unit
    as :mod:`trimmer.emit` builds it: Amaranth's own view of what the Verilog must hold."""
    modules, memories = set(), {}

    def walk(fragment, path):
        for sub, name, _ in fragment.subfragments:
            here = f"{path}.{name}" if path else str(name)
            if isinstance(sub, MemoryInstance):
                memory = sub.origins[0]
                memories[here] = (memory.depth, Shape.cast(memory.shape).width)
            else:
                modules.add(here)
                walk(sub, here)
    unit = PipelinedComputeUnit(config, dsp=STYLE, ram=STYLE)
    walk(Fragment.get(unit, None), "")
    return modules, memories


# --- the unit trimmed for vecadd ----------------------------------------------------------------

def test_vecadd_writes_the_pipelined_unit_and_says_so(vecadd_run, vecadd_trim):
    out, report = vecadd_run.proc.stdout, vecadd_run.report
    assert "Wrote cu.v: the trimmed unit, the pipelined compute unit (PipelinedComputeUnit, " \
           "4 lanes" in " ".join(out.split())
    assert "Unit: the pipelined compute unit (PipelinedComputeUnit, 4 lanes" in out
    assert "estimate for PipelinedComputeUnit" in out
    assert report["unit"] == {"class": "PipelinedComputeUnit", "pipeline": True, "lanes": 4,
                              "style": STYLE}
    assert report["output"]["class"] == "PipelinedComputeUnit"
    assert report["trim"]["trimmed"]["pipeline"] is True
    assert report["audit"]["trimmed"]["ok"]
    assert report["resources"]["trimmed"] == vecadd_trim.config.resources().to_dict()


def test_vecadd_pipelined_audit_passes_and_matches_the_plan(vecadd_run, vecadd_trim):
    t = vecadd_trim
    assert t.config.pipeline and t.config.lds_bytes == 0 and not t.plan.fp_ops
    result = audit(vecadd_run.text, t.config, t.plan)
    assert result.ok
    h = result.hierarchy
    top = h.modules[h.top].instances
    assert set(PIPELINED_BLOCKS) <= set(top)
    assert not [i for i in top if i.startswith("lds") or i.startswith("valu0")]
    assert sorted(i for i in h.at("valu").instances if i.startswith("lane")) == \
        [f"lane{j}" for j in range(4)]
    assert not [i for i in h.at("slow").instances if i.startswith("fp")]
    # vecadd's integer work is all FAST_OPS: the fast lanes run it, the slow unit has no lanes
    assert not slow_int_ops(t.plan)
    assert not [i for i in h.at("slow").instances if i.startswith("int")]
    vgpr_bits = sum(m.bits for p, m in h.memories().items() if p.startswith("vgprs.bank"))
    assert vgpr_bits == t.config.wave_slots * t.config.vgprs * 64 * 32
    subjects = {c.subject for c in result.checks}
    assert {"unit", "fast lanes (valu)", "part lds (dropped)", "VGPR file", "SGPR file",
            "instruction memory", "slow unit, FP lanes (part fp_*)"} <= subjects


def test_vecadd_pipelined_hierarchy_is_amaranths(vecadd_run, vecadd_trim):
    """What the audit parses is the elaborated unit's own hierarchy, memories included."""
    h = parse_verilog(vecadd_run.text)
    parsed = {path for path, _ in h.walk() if path}
    memories = {path: (m.depth, m.width) for path, m in h.memories().items()}
    assert (parsed, memories) == _amaranth_hierarchy(vecadd_trim.config)


def test_pipelined_audit_fails_on_a_mismatch(vecadd_run, vecadd_trim):
    text, t = vecadd_run.text, vecadd_trim
    with pytest.raises(AuditError, match=r"part lds \(kept\)"):
        audit(text, dataclasses.replace(t.config, lds_bytes=4096),
              BuildPlan.of(t.config.profile | {"ds_read_b32"}, lds_bytes=4096))
    fp = BuildPlan.of(t.config.profile | {"v_add_f32"}, lds_bytes=0)
    assert fp_units(fp)
    with pytest.raises(AuditError, match=r"slow unit, FP lanes"):
        audit(text, t.config, fp)
    failed = audit(text, dataclasses.replace(t.config, lanes=8, vgprs=8), t.plan, strict=False)
    assert {c.subject for c in failed.failures} >= {"fast lanes (valu)",
                                                     "VGPR file lanes (vgprs)", "VGPR file"}
    # the multi-cycle unit's audit does not take the pipelined unit's Verilog, nor the reverse
    assert not audit(text, dataclasses.replace(t.config, pipeline=False), t.plan,
                     strict=False).ok


# --- the full integer-only unit -----------------------------------------------------------------

def test_full_without_fp_writes_the_pipelined_unit_without_fp_lanes(int_run):
    f = full_unit(BASE, drop=FP_PARTS)
    assert f.config.pipeline and not f.plan.fp_ops and f.plan.lds
    report, out = int_run.report, " ".join(int_run.proc.stdout.split())
    assert report["unit"]["class"] == "PipelinedComputeUnit"
    assert report["output"]["class"] == "PipelinedComputeUnit"
    assert report["audit"]["full"]["ok"]
    assert "Wrote cu.v: the full unit, the pipelined compute unit" in out
    result = audit(int_run.text, f.config, f.plan)
    h = result.hierarchy
    assert not [i for i in h.at("slow").instances if i.startswith("fp")]
    lds_bits = sum(m.bits for p, m in h.memories().items() if p.startswith("lds.bank"))
    assert lds_bits == f.config.lds_bytes * 8 > 0
    checks = {c.subject: c for c in result.checks}
    assert checks["part lds (kept)"].ok and checks["slow unit, FP lanes (part fp_*)"].ok
    # the same Verilog is not the unit with FP
    assert not audit(int_run.text, BASE, strict=False).ok


# --- bad requests -----------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    (str(VECADD), "--config", "lanes=2", "--config", "pipeline=true"),
    ("--full", "--config", "pipeline=true"),                     # the default 1 lane
], ids=["lanes2", "full-default-lanes"])
def test_pipelined_unit_with_bad_lanes_is_a_one_line_error(tmp_path, args):
    proc = run_trim(*args, "-o", "cu.v", "--report", "r.json", cwd=tmp_path)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "4, 8 or 16 lanes" in lines[0] and "--config lanes=4, 8 or 16" in lines[0]
    assert not list(tmp_path.iterdir())
