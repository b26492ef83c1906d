# amaranth: UnusedElaboratable=no
"""The SoC's prefetch buffer, the board memory, goes to ECP5 block RAM as it is, as Yosys'
``memory_libmap`` decides (run here on the buffer alone): its two sides share the RAM's one
read-write port, so no cross-port collision asks for a behaviour a ``DP16KD`` lacks."""

from __future__ import annotations

import re
import subprocess

import pytest
from amaranth.back import rtlil

from boards.build import tool_command
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


@pytest.mark.parametrize("size", [256, 8192])
def test_prefetch_buffer_maps_to_block_ram(tmp_path, size):
    il = rtlil.convert(PrefetchBuffer(bytes=size), name="t")
    body = re.search(r"^module \\t\n(.*?)^end\n", il, re.M | re.S)[1]
    assert len(re.findall(r"cell \$memwr_v2 ", body)) == 1         # one port writes
    # a DP16KD, or at 64 words its 36-bit simple dual-port mode
    assert mapping(il, tmp_path)["t.ram"] in ("$__DP16KD_", "$__PDPW16KD_")
