"""gpgpu_hdl: an application-aware soft GPGPU for FPGAs that runs AMD Southern Islands binaries.

Layers (each importable on its own):

- :mod:`gpgpu_hdl.isa`: the instruction table, decoder/disassembler and code-object loader.
- :mod:`gpgpu_hdl.toolchain`: thin wrappers around the stock LLVM tools (clang-19, llvm-mc-19).
"""

__version__ = "0.1.0"
