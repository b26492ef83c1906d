"""The dispatch ABI in hardware: what a wave's SGPRs start with, as the code object's header
asks (the hardware side of :func:`gpgpu_hdl.dispatch.wave_start`), shared by the multi-cycle
unit's dispatcher and the pipelined unit's :class:`~gpgpu_hdl.cu.launcher.WaveLauncher`.
"""

from amaranth.hdl import Const, Mux, Signal

from ..isa.codeobj import SYSTEM_SGPR_SLOTS, USER_SGPR_SLOTS

__all__ = ["sgpr_init_values"]


def sgpr_init_values(d, *, group_id, nwaves, wave,
                     wave_offset=None) -> tuple[list, list[tuple]]:
    """The dwords a wave's SGPRs start with, in the fixed order of the header's slots:
    ``(enable, value, restart)`` each, ``enable`` a bit of ``d.user_enables`` or
    ``d.system_enables``; the enabled ones fill ``s0``, ``s1``, ... and the first system
    value (``restart``) starts again at ``s[d.user_sgpr_count]``.

    ``d`` is a :data:`~gpgpu_hdl.cu.core.DispatchLayout` value, ``group_id`` the workgroup's
    three ids, ``nwaves`` its wave count and ``wave`` the wave's index in it. Returns the
    statements that compute the shared terms (for ``m.d.comb``) and the list."""
    scratch_on = Signal(name="scratch_on")
    dw3 = Signal(32, name="dw3")
    setup = [(scratch_on.eq((d.private_segment_size != 0) & (d.scratch_address != 0))),
              dw3.eq((1 << 15) | (d.private_element_size << 19) | (3 << 21) | (1 << 23))]
    user_values = {
        "private_segment_buffer": [d.scratch_address, Const(1 << 31, 32),
                                   Const(0xFFFFFFFF, 32), dw3],
        "dispatch_ptr": [d.packet_address, 0], "queue_ptr": [0, 0],
        "kernarg_segment_ptr": [d.kernarg_address, 0], "dispatch_id": [0, 0],
        "flat_scratch_init": [0, 0], "private_segment_size": [d.private_segment_size],
        "grid_workgroup_count_x": [d.group_counts[0]],
        "grid_workgroup_count_y": [d.group_counts[1]],
        "grid_workgroup_count_z": [d.group_counts[2]],
    }
    out = []
    for i, (name, count) in enumerate(USER_SGPR_SLOTS):
        for k in range(count):
            v = user_values[name][k]
            if name == "private_segment_buffer":
                v = Mux(scratch_on, v, 0)
            out.append((d.user_enables[i], v, False))
    system_values = {"workgroup_id_x": group_id[0], "workgroup_id_y": group_id[1],
                     "workgroup_id_z": group_id[2], "workgroup_info": nwaves,
                     "private_segment_wave_byte_offset": (wave * d.scratch_wave_bytes
                                                          if wave_offset is None
                                                          else wave_offset)}
    for i, (name, _) in enumerate(SYSTEM_SGPR_SLOTS):
        out.append((d.system_enables[i], system_values[name], i == 0))
    return setup, out
