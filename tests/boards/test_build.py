# amaranth: UnusedElaboratable=no
"""The board build's netlist change: the SoC's prefetch buffer (two ports that both write)
goes to ECP5 block RAM only once its cross-port collisions are undefined, as Yosys'
``memory_libmap`` decides (run here on the buffer alone); memories with one write port are
left alone."""

from __future__ import annotations

import re
import subprocess

from amaranth.back import rtlil

from boards.build import relax_cross_port_collisions, tool_command
from gpgpu_hdl.soc.memsys import PrefetchBuffer


def mapping(il: str, tmp_path) -> dict[str, str]:
    """``{memory: how}`` as Yosys' ECP5 flow maps the memories of ``il`` (top ``t``)."""
    (tmp_path / "t.il").write_text(il)
    (tmp_path / "t.ys").write_text(
        "read_rtlil t.il\nsynth_ecp5 -nowidelut -top t -run :map_ram\n"
        "memory_libmap -lib +/lattice/lutrams_trellis.txt -lib +/lattice/brams_16kd.txt\n")
    subprocess.run([*tool_command("yosys"), "-q", "-l", "t.log", "t.ys"], cwd=tmp_path,
                   check=True, capture_output=True)
    log = (tmp_path / "t.log").read_text()
    found = dict(re.findall(r"^mapping memory (\S+) via (\S+)$", log, re.MULTILINE))
    found.update((m, "FF") for m in re.findall(r"^using FF mapping for memory (\S+)$", log,
                                                re.MULTILINE))
    return found


def test_prefetch_buffer_maps_to_block_ram_once_relaxed(tmp_path):
    il = rtlil.convert(PrefetchBuffer(bytes=8192), name="t")
    relaxed, changed = relax_cross_port_collisions(il)
    assert changed == ["t.ram"]
    assert mapping(il, tmp_path)["t.ram"] == "FF"
    assert mapping(relaxed, tmp_path)["t.ram"] == "$__DP16KD_"


def _module(il: str, name: str) -> str:
    return re.search(rf"^module \\{re.escape(name)}\n(.*?)^end\n", il, re.M | re.S)[1]


def test_only_the_other_sides_write_port_is_relaxed():
    il = rtlil.convert(PrefetchBuffer(bytes=8192), name="t")
    relaxed, _ = relax_cross_port_collisions(il)
    # the buffer's answer queue (one write port) is as it was
    assert _module(relaxed, "t.answers") == _module(il, "t.answers")
    relaxed = _module(relaxed, "t")
    writes = {}
    for body in re.findall(r"cell \$memwr_v2 \S+\n(.*?)\n  end", relaxed, re.DOTALL):
        port = int(re.search(r"PORTID (\d+)", body)[1])
        writes[port] = re.search(r"connect \\ADDR (.*)", body)[1]
    reads = re.findall(r"cell \$memrd_v2 \S+\n(.*?)\n  end", relaxed, re.DOTALL)
    assert len(reads) == 2 and len(writes) == 2
    for body in reads:
        addr = re.search(r"connect \\ADDR (.*)", body)[1]
        mask = re.search(r"COLLISION_X_MASK 2'([01]{2})", body)[1]
        for port, waddr in writes.items():
            assert mask[-1 - port] == ("0" if waddr == addr else "1")
