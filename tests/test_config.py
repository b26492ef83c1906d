"""The compute-unit configuration: defaults, validation messages, fit checks."""

from __future__ import annotations

import dataclasses

import pytest

from gpgpu_hdl.config import DEVICES, ConfigError, CuConfig, Resources
from gpgpu_hdl.cu.block_rams import pipelined_block_rams
from gpgpu_hdl.cu.fpu.ops import FP_OPS
from gpgpu_hdl.isa.table import TABLE


def test_default_fits_ecp5_85f_with_room():
    cfg = CuConfig()
    assert cfg.is_full and len(cfg.profile) == len(TABLE)
    assert cfg.passes == 64 // cfg.lanes
    # independent estimate: 8 slots x 64 VGPRs x 64 lanes x 4 bytes in one lane bank
    assert cfg.lanes == 1
    vgpr_ebr = -(-8 * 64 * 64 * 4 // 2048)
    assert cfg.resources().vgpr_ebr == vgpr_ebr
    assert cfg.resources().ebr <= DEVICES["LFE5U-85F"].ebr // 2


@pytest.mark.parametrize("field, value, message", [
    ("lanes", 3, "lanes must be one of 1, 2, 4, 8, 16, 32, 64, not 3"),
    ("wave_slots", 41, "wave_slots must be an integer from 1 to 40"),
    ("vgprs", 30, "vgprs must be an integer from 4 to 256 and a multiple of 4, not 30"),
    ("sgprs", 112, "sgprs must be an integer from 8 to 104"),
    ("lds_bytes", 3000, "lds_bytes must be 0 or a power of two"),
    ("imem_bytes", 0, "imem_bytes must be a power of two"),
    ("shifter", "funnel", "shifter must be one of barrel, multiplier, not 'funnel'"),
    ("device", "XC7A35T", "device must be one of"),
    ("profile", {"v_add_f32", "v_frobnicate"}, "v_frobnicate"),
    ("lanes", True, "lanes must be one of"),
    ("vgpr_sides", 3, "vgpr_sides must be one of 1, 2, not 3"),
    ("vgpr_sides", 1, "vgpr_sides=1 is the pipelined unit's"),
    ("lds_width", 3, "lds_width must be one of 1, 2, 4, 8, 16, not 3"),
    ("lds_width", 2, "lds_width=2 is the pipelined unit's"),
])
def test_invalid_values_name_the_field(field, value, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        CuConfig(**{field: value})


def test_unfittable_configuration_is_refused():
    with pytest.raises(ConfigError, match="does not fit LFE5U-85F: needs about"):
        CuConfig(lanes=64, wave_slots=40, vgprs=256)
    with pytest.raises(ConfigError, match="does not fit LFE5U-25F"):
        CuConfig(device="LFE5U-25F", wave_slots=16)


def test_multi_cycle_estimate_is_yosys_count():
    # docs/synth.md: Yosys maps the 16-lane multi-cycle unit's memories to 90 DP16KD
    # (VGPRs 64, SGPRs 2, LDS 16, instructions 8), and its constant tables to logic
    res = CuConfig(lanes=16).resources()
    assert res == Resources(vgpr_ebr=64, sgpr_ebr=2, lds_ebr=16, imem_ebr=8)
    assert res.ebr == 90 and res.landing_ebr == res.decode_ebr == 0
    assert res.breakdown() == "VGPRs 64, SGPRs 2, LDS 16, instructions 8"


def _integer(**kwargs) -> CuConfig:
    """The pipelined unit of ``bench/synth_cu.py --config pipeline=true ... --no-fp``."""
    full = CuConfig(pipeline=True, **kwargs)
    return dataclasses.replace(full, profile=full.profile - frozenset(FP_OPS))


def test_pipelined_estimate_is_yosys_count_at_4_lanes():
    # Yosys 0.70 (synth_ecp5) on the 4-lane pipelined integer unit (bench/synth_cu.py --target
    # ecp5 --config lanes=4 pipeline=true --no-fp --no-pnr; 8 wave slots, 64 VGPRs, 104 SGPRs,
    # 32 KiB LDS, 16 KiB instructions): 120 DP16KD, by their cells' names in the netlist
    measured = {"vgprs": 64, "sgprs": 6, "lds.bank": 16, "lds.land_data": 8,
                "lsu.land_data": 11, "imem": 8, "decoder.table": 5, "salu_decode": 2}
    config = _integer(lanes=4)
    assert pipelined_block_rams(config) == measured
    res = config.resources()
    assert res.ebr == 120 == sum(measured.values())
    assert (res.vgpr_ebr, res.sgpr_ebr, res.lds_ebr, res.imem_ebr, res.landing_ebr,
            res.decode_ebr) == (64, 6, 16, 8, 19, 7)
    assert CuConfig(lanes=4, pipeline=True).resources() == res      # FP adds no block RAM


def test_pipelined_estimate_is_yosys_count_at_16_lanes():
    # Yosys 0.70 on the 16-lane pipelined integer unit at 403dbb5 (docs/cu.md): 168 EBR. The
    # decoder's table became a ROM in block RAM after it (15d9114, 5 EBR in the 4-lane unit's
    # netlist: the same ROM whatever the lanes)
    config = _integer(lanes=16)
    parts = pipelined_block_rams(config)
    assert parts["decoder.table"] == 5
    assert config.resources().ebr - parts["decoder.table"] == 168


def test_pipelined_estimate_without_lds():
    for lanes in (4, 8, 16):
        with_lds = CuConfig(lanes=lanes, pipeline=True).resources()
        res = CuConfig(lanes=lanes, pipeline=True, lds_bytes=0).resources()
        assert res.lds_ebr == 0 < with_lds.lds_ebr
        assert res.landing_ebr < with_lds.landing_ebr         # the LDS unit's landing RAM
        assert res.vgpr_ebr == with_lds.vgpr_ebr and res.decode_ebr == with_lds.decode_ebr


def test_pipelined_configuration_that_does_not_fit_is_refused():
    # the multi-cycle unit of these sizes fits the 45F (108 EBR); the pipelined one does not
    assert CuConfig(lanes=4, device="LFE5U-45F").resources().ebr <= DEVICES["LFE5U-45F"].ebr
    with pytest.raises(ConfigError) as info:
        CuConfig(lanes=4, pipeline=True, device="LFE5U-45F")
    message = str(info.value)
    assert message == (
        "does not fit LFE5U-45F: needs about 120 EBR (VGPRs 64, SGPRs 6, LDS 16, "
        "instructions 8, landing RAMs 19, decode tables 7) of 108; reduce wave_slots, vgprs, "
        "lanes or lds_bytes")
    assert "\n" not in message
    CuConfig(lanes=4, pipeline=True, device="LFE5U-45F", lds_bytes=0)           # 96 EBR


def test_pipelined_configuration_its_memories_refuse():
    with pytest.raises(ConfigError, match=r"^the pipelined compute unit's LDS cannot be built: "
                                          r"need 1 <= slots <= 16"):
        CuConfig(lanes=4, pipeline=True, wave_slots=20)
    with pytest.raises(ConfigError, match=r"^the pipelined compute unit's VGPR file cannot be "
                                          r"built: depth must be from 1 to 16384, not 20480$"):
        CuConfig(lanes=4, pipeline=True, wave_slots=20, vgprs=256, lds_bytes=0)


def test_profile_and_frozen():
    cfg = CuConfig(profile={"v_add_i32", "s_endpgm"}, lds_bytes=0)
    assert cfg.profile == frozenset({"v_add_i32", "s_endpgm"}) and not cfg.is_full
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.lanes = 4
    with pytest.raises(TypeError):
        CuConfig(16)                                          # keyword-only


def test_kernel_requirements():
    cfg = CuConfig(vgprs=16)
    cfg.check_kernel("small", 16, 20, 1024)
    with pytest.raises(ConfigError, match="kernel big needs 20 VGPRs; this compute unit has 16"):
        cfg.check_kernel("big", 20, 20, 0)
    with pytest.raises(ConfigError, match="bytes of LDS"):
        CuConfig(lds_bytes=0).check_kernel("lds", 4, 8, 256)


def test_vgpr_sides_is_in_the_key_only_when_not_the_default():
    """Caches named by the configurations before ``vgpr_sides`` keep their keys."""
    two, one = CuConfig(lanes=4, pipeline=True), CuConfig(lanes=4, pipeline=True, vgpr_sides=1)
    assert "vgpr_sides" not in two.key() and "vgpr_sides=1" in one.key()
    assert two.key() != one.key() and "vgpr_sides" not in CuConfig().key()


def test_lds_width_is_in_the_key_only_when_not_the_default_and_fits_the_lanes():
    four, two = CuConfig(lanes=4, pipeline=True), CuConfig(lanes=4, pipeline=True, lds_width=2)
    assert "lds_width" not in four.key() and "lds_width=2" in two.key()
    assert "lds_width" not in CuConfig().key()
    with pytest.raises(ConfigError, match="lds_width=8 is more than the 4 lanes"):
        CuConfig(lanes=4, pipeline=True, lds_width=8)
