"""Hardware of the compute unit (Amaranth 0.5).

Each module holds one kind of functional unit as a :class:`amaranth.lib.wiring.Component`:

* :mod:`.shifter`: 32- and 64-bit shifters, either a barrel shifter or the eGPU
  multiplier-based shifter, chosen by the configuration's shifter style.
* :mod:`.multiplier`: a 33x33 signed multiplier tiled from DSP-sized 18x18 pieces, and the
  unit implementing the Southern Islands 32-bit and 24-bit integer multiplies on top of it.

The integer semantics these units implement are those of the golden model,
:mod:`gpgpu_hdl.emu.valu_ops` and :mod:`gpgpu_hdl.emu.salu`.
"""
