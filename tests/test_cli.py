"""The command-line tools as a user runs them: `gpgpu info/disasm/isa/cc` and `trim`.

Bad input must end with one line on stderr (`prog: error: ...`), exit status 1, no traceback
and no output file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpgpu_hdl.isa.codeobj import CodeObject
from gpgpu_hdl.isa.decoder import decode
from gpgpu_hdl.isa.manifest import LAYERS, layer_support
from gpgpu_hdl.isa.table import TABLE
from gpgpu_hdl.toolchain import assemble_text

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "examples" / "kernels"


def cli(prog: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    module = {"gpgpu": "gpgpu_hdl", "trim": "trimmer"}[prog]
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "COLUMNS": "200"})


@pytest.fixture(scope="module")
def bad_inputs(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("bad")
    real = (KERNELS / "vecadd.bin").read_bytes()
    files = {
        "empty": b"",
        "random": bytes(range(256)) * 3,
        "truncated": real[:200],
        "truncated_late": real[:len(real) // 2],
        "text": b"__kernel void k() {}\n",
        "x86": Path("/bin/true").read_bytes(),
    }
    out = {name: d / f"{name}.bin" for name in files}
    for name, data in files.items():
        out[name].write_bytes(data)
    gfx900 = d / "gfx900.bin"
    src = d / "k.cl"
    src.write_text("__kernel void k(__global int *p) { p[0] = 1; }\n")
    subprocess.run(["clang-19", "-cl-std=CL1.2", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx900",
                    "-nogpulib", "-c", str(src), "-o", str(gfx900)], check=True)
    out["gfx900"] = gfx900
    out["missing"] = d / "does-not-exist.bin"
    out["directory"] = d
    return out


def assert_one_line_error(proc: subprocess.CompletedProcess, prog: str) -> None:
    assert proc.returncode == 1, proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error: "), proc.stderr
    assert "Traceback" not in proc.stderr


BAD = ["empty", "random", "truncated", "truncated_late", "text", "x86", "gfx900", "missing",
       "directory"]


@pytest.mark.parametrize("kind", BAD)
def test_gpgpu_refuses_bad_input(bad_inputs, kind, tmp_path):
    out = tmp_path / "out.s"
    for args in (["info", str(bad_inputs[kind])],
                 ["disasm", str(bad_inputs[kind]), "-o", str(out)]):
        assert_one_line_error(cli("gpgpu", *args), "gpgpu")
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", BAD)
def test_trim_refuses_bad_input(bad_inputs, kind, tmp_path):
    report = tmp_path / "r.json"
    proc = cli("trim", str(KERNELS / "vecadd.bin"), str(bad_inputs[kind]), "--report",
               str(report), "-o", str(tmp_path / "cu.v"))
    assert_one_line_error(proc, "trim")
    assert list(tmp_path.iterdir()) == []


def test_gx900_message_names_the_gpu(bad_inputs):
    proc = cli("gpgpu", "info", str(bad_inputs["gfx900"]))
    assert "gfx900" in proc.stderr and "Southern Islands" in proc.stderr


def test_unknown_kernel_is_a_one_line_error():
    proc = cli("gpgpu", "disasm", str(KERNELS / "pooling.bin"), "--kernel", "nope")
    assert_one_line_error(proc, "gpgpu")
    assert "maxpool2x2" in proc.stderr


def test_bad_options_are_usage_errors():
    proc = cli("gpgpu", "isa", "--unit", "warp-drive")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    proc = cli("trim", str(KERNELS / "vecadd.bin"), "--keep", "fpu", "--drop", "fpu")
    assert_one_line_error(proc, "trim")


def test_info_text_and_json_agree_with_loader():
    path = KERNELS / "transpose.bin"
    co = CodeObject.load(path)
    text = cli("gpgpu", "info", str(path)).stdout
    k = co.kernel("transpose")
    assert f"kernel {k.name}" in text
    assert f"{k.header.lds_bytes} bytes static" in text
    data = json.loads(cli("gpgpu", "info", "--json", str(path)).stdout)
    assert data["kernels"][0]["header"]["workitem_vgpr_count"] == k.header.vgpr_count
    assert data["kernels"][0]["code_size"] == len(k.code)


@pytest.mark.parametrize("path", sorted(KERNELS.glob("*.bin")), ids=lambda p: p.stem)
def test_disasm_cli_contract(path, tmp_path):
    """`gpgpu disasm FILE --kernel NAME` assembles with llvm-mc to the kernel's code bytes."""
    co = CodeObject.load(path)
    for k in co.kernels:
        out = tmp_path / f"{k.name}.s"
        proc = cli("gpgpu", "disasm", str(path), "--kernel", k.name, "-o", str(out))
        assert proc.returncode == 0, proc.stderr
        assert assemble_text(out.read_text()) == k.code


def test_isa_manifest_json():
    rows = json.loads(cli("gpgpu", "isa", "--json").stdout)
    assert len(rows) == len(TABLE) == 712
    emu, rtl = (layer_support(p) for p in LAYERS.values())
    for row in rows:
        assert row["decoder"] is True
        assert row["emulator"] == (row["mnemonic"] in emu)
        assert row["rtl"] == (row["mnemonic"] in rtl)
    fpu = json.loads(cli("gpgpu", "isa", "--json", "--unit", "fpu").stdout)
    assert {r["unit"] for r in fpu} == {"fpu"} and len(fpu) == sum(
        1 for e in TABLE if e.unit.value == "fpu")
    text = cli("gpgpu", "isa").stdout
    assert "v_mac_f32" in text and "total" in text


def test_cc_compiles_and_reports(tmp_path):
    src = tmp_path / "k.cl"
    src.write_text("__kernel void twice(__global int *p) { p[get_global_id(0)] *= 2; }\n")
    proc = cli("gpgpu", "cc", str(src))
    assert proc.returncode == 0, proc.stderr
    co = CodeObject.load(tmp_path / "k.bin")
    n = len(decode(co.kernel("twice").code))
    assert f"1 kernel(s), {n} instructions" in proc.stdout
    bad = tmp_path / "bad.cl"
    bad.write_text("__kernel void k( {\n")
    assert_one_line_error(cli("gpgpu", "cc", str(bad), "-o", str(tmp_path / "bad.bin")),
                          "gpgpu")
    assert not (tmp_path / "bad.bin").exists()


def test_trim_histogram_and_report(tmp_path):
    files = [KERNELS / "vecadd.bin", KERNELS / "transpose.bin"]
    report = tmp_path / "r.json"
    proc = cli("trim", *map(str, files), "--report", str(report))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(report.read_text())["profile"]
    expected = {}
    total = 0
    for f in files:
        for k in CodeObject.load(f).kernels:
            for inst in decode(k.code):
                unit, cls = str(inst.info.unit), str(inst.info.op_class)
                expected.setdefault(unit, {}).setdefault(cls, 0)
                expected[unit][cls] += 1
                total += 1
    assert data["histogram"] == expected
    assert data["instructions"] == total
    assert data["resources"]["lds_bytes"] == 1088
    listing = "".join(cli("gpgpu", "disasm", str(f)).stdout for f in files)
    assert data["features"]["barriers"] == listing.count("\ts_barrier")
    assert data["features"]["valu_64bit"] >= listing.count("\tv_lshl_b64") > 0
    assert data["features"]["scalar"] + data["features"]["vector"] == total
    assert "Static instructions per unit and class" in proc.stdout
    assert f"{total}" in proc.stdout


def test_trim_writes_audited_verilog(tmp_path):
    """`trim K.bin -o cu.v` writes the Verilog of the trimmed unit, which parses and whose
    hierarchy is what the printed audit says."""
    from trimmer.audit import parse_verilog

    out = tmp_path / "cu.v"
    proc = cli("trim", str(KERNELS / "vecadd.bin"), "--config", "lanes=1,wave_slots=2",
               "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "Static instructions per unit and class" in proc.stdout
    assert f"Wrote {out}" in proc.stdout and "audit passed" in proc.stdout
    h = parse_verilog(out.read_text())
    assert "lds" not in h.memories() and "valu0" in h.modules[h.top].instances
    assert [p.name for p in tmp_path.iterdir()] == ["cu.v"]


def test_trim_help_lists_parts():
    from gpgpu_hdl.cu.plan import PARTS

    proc = cli("trim", "--help")
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    assert all(part in text for part in PARTS)
    assert "--no-area" in text and "Off by default" in text
