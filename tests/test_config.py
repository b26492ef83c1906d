"""The compute-unit configuration: defaults, validation messages, fit checks."""

from __future__ import annotations

import dataclasses

import pytest

from gpgpu_hdl.config import DEVICES, ConfigError, CuConfig
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
])
def test_invalid_values_name_the_field(field, value, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        CuConfig(**{field: value})


def test_unfittable_configuration_is_refused():
    with pytest.raises(ConfigError, match="does not fit LFE5U-85F: needs about"):
        CuConfig(lanes=64, wave_slots=40, vgprs=256)
    with pytest.raises(ConfigError, match="does not fit LFE5U-25F"):
        CuConfig(device="LFE5U-25F", wave_slots=16)


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
