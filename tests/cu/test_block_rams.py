# amaranth: UnusedElaboratable=no
"""The pipelined unit's block-RAM count (:mod:`gpgpu_hdl.cu.block_rams`) against the unit
itself: elaborated as the ECP5 bench builds it (``ram="ecp5"``), its ``DP16KD`` instances
counted by the submodule that holds them, and its inferred memories (instruction banks, the
decoder's ROM) mapped from their own shapes and contents; and the mapping rule against the
shapes Yosys 0.70 chose for the 4-lane unit (the netlist of ``bench/synth_cu.py --target ecp5
--config lanes=4 pipeline=true --no-fp --no-pnr``). The totals against Yosys' own figures are
in ``tests/test_config.py``."""

from __future__ import annotations

import collections
import re

import pytest
from amaranth.hdl import Fragment, Instance, MemoryInstance, Shape

from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.cu.block_rams import PARTS, mapped_ebrs, pipelined_block_rams
from gpgpu_hdl.cu.pipelined import PipelinedComputeUnit

#: a small unit: every size off its default, a profile without FP, LDS atomics or most formats
SMALL = dict(lanes=8, wave_slots=4, vgprs=32, sgprs=48, lds_bytes=4096, imem_bytes=4096,
             profile={"s_load_dwordx4", "s_waitcnt", "s_endpgm", "s_add_u32", "v_add_i32",
                      "v_mov_b32", "v_lshlrev_b32", "buffer_load_dword", "buffer_store_dword",
                      "ds_read_b32", "ds_write_b32", "s_barrier"})


def _elaborated(config: CuConfig) -> tuple[dict[str, int], set[str]]:
    """The unit's block RAMs by part: ``DP16KD`` instances under each part's submodule, and
    the instruction banks and decoder ROM mapped from the memories Amaranth built; and the
    unit's top-level submodule names."""
    found: collections.Counter = collections.Counter()
    top = set()

    def walk(fragment, path):
        for sub, name, _ in fragment.subfragments:
            here = (*path, str(name))
            if not path:
                top.add(str(name))
            if isinstance(sub, Instance):
                if sub.type == "DP16KD":
                    part = here[0] if here[0] in PARTS else re.sub(r"\d+$", "",
                                                                    ".".join(here[:2]))
                    found[part] += 1
            elif isinstance(sub, MemoryInstance):
                memory = sub.origins[0]
                width = Shape.cast(memory.shape).width
                if here[0] in ("imem0", "imem1"):
                    found["imem"] += mapped_ebrs(width, memory.depth)
                elif ".".join(here) == "decoder.table":
                    used = 0
                    for row in memory.init:
                        used |= row
                    found["decoder.table"] += mapped_ebrs(bin(used).count("1"), memory.depth,
                                                          rom=True)
            else:
                walk(sub, here)

    walk(Fragment.get(PipelinedComputeUnit(config, ram="ecp5", dsp="ecp5"), None), ())
    return dict(found), top


@pytest.mark.parametrize("config", [
    CuConfig(lanes=4, pipeline=True),
    CuConfig(lanes=16, pipeline=True, lds_bytes=0),
    CuConfig(pipeline=True, **SMALL),
], ids=["4-lanes", "16-lanes-no-lds", "8-lanes-small"])
def test_counts_the_memories_the_unit_builds(config):
    parts = pipelined_block_rams(config)
    found, top = _elaborated(config)
    # the ScalarDecode table is a Switch that Yosys turns into a ROM: not seen here
    assert {p: n for p, n in parts.items() if n and p != "salu_decode"} == found
    held = {p.split(".")[0] for p, n in parts.items() if n} - {"imem"} | {"imem0", "imem1"}
    assert held <= top
    assert parts["salu_decode"] == 2


def test_yosys_shapes_of_the_4_lane_unit():
    # Yosys 0.70 on the 4-lane integer unit: the decoder's ROM (1,457 rows, 52 bits not
    # constant 0) in 5 PDPW16KD of 36 bits, ScalarDecode's (128 rows of 44 bits) in 2, each
    # instruction bank (2,048 x 32) in 4 DP16KD of 9 bits
    assert mapped_ebrs(52, 1457, rom=True) == 5
    assert mapped_ebrs(44, 128, rom=True) == 2
    assert mapped_ebrs(32, 2048) == 4


def test_a_small_rom_stays_logic():
    # memory_libmap: a ROM bit in logic costs 1/16 of a block's 128
    assert mapped_ebrs(16, 64, rom=True) == 0
    assert mapped_ebrs(16, 512, rom=True) == 1
