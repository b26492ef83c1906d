"""Differential testing with generated kernels (gpgpu_hdl.fuzz)."""
