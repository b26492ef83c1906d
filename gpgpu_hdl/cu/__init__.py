"""Hardware of the compute unit (Amaranth 0.5).

* :mod:`.core`: the compute unit (:class:`~.core.ComputeUnit`): code loader, hardware
  dispatcher, wave scheduler, fetch/decode, register files, the sequencer and its LSU.
* :mod:`.decode`: the instruction decoder, generated from the instruction table for a profile.
* :mod:`.salu` / :mod:`.valu`: the scalar ALU and the per-lane integer vector ALU.
* :mod:`.shifter`: 32- and 64-bit shifters, either a barrel shifter or the eGPU
  multiplier-based shifter, chosen by the configuration's shifter style.
* :mod:`.multiplier`: a 33x33 signed multiplier tiled from DSP-sized 18x18 pieces, and the
  unit implementing the Southern Islands 32-bit and 24-bit integer multiplies on top of it.
* :mod:`.harness`: the simulation top (compute unit + memory model) used under Verilator.

The semantics these units implement are those of the golden model (:mod:`gpgpu_hdl.emu`).
``SUPPORTED_MNEMONICS`` lists the table entries the RTL executes (the ``rtl`` column of
``gpgpu isa``).
"""


def __getattr__(name: str):
    if name == "SUPPORTED_MNEMONICS":
        from .decode import SUPPORTED_MNEMONICS
        return SUPPORTED_MNEMONICS
    raise AttributeError(name)
