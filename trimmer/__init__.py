"""The trimmer: profiles kernel binaries and trims the compute unit to them."""
