"""RTL simulation of the generated Verilog with Verilator and cocotb.

- :mod:`gpgpu_hdl.sim.verilator` (host side): build a design once per configuration (cached by
  a hash) and run cocotb test modules on it in a subprocess, parameters in and results out.
- :mod:`gpgpu_hdl.sim.cocotb_io` (simulator side, import-light): ``load_params``,
  ``save_results`` and bulk memory access (``write_words``/``read_words``) for testbenches.

Nothing is imported here, so that the simulator's Python can import ``cocotb_io`` cheaply.
"""
