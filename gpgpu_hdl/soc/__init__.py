"""The SoC shell around the compute units: host registers on AXI4-Lite, global memory on AXI4,
the BRAM prefetch buffer, the clock-domain crossings and the multi-CU block scheduler."""
