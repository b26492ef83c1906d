"""Hand-written kernels as llvm-mc text, for the loader and disassembler tests.

Unlike :func:`gpgpu_hdl.toolchain.assemble_kernel` (one kernel, a complete object with
``.type``/``.size``), :func:`kernel_asm` gives the text of one kernel to combine with others
and with data sections in one object; its symbol has no size, as hand-written objects often
have.
"""

from __future__ import annotations


def kernel_asm(name: str, body: str, **code_t: int) -> str:
    """``.globl``, 256-byte alignment, the ``amd_kernel_code_t`` header and ``body`` (the
    instruction lines, ending with a newline) of kernel ``name``. The header enables the
    private segment buffer and the kernarg segment pointer (6 user SGPRs), plus the fields
    ``code_t`` names by their llvm-mc names (for example ``enable_sgpr_workgroup_id_x=1``)."""
    fields = {"enable_sgpr_private_segment_buffer": 1, "enable_sgpr_kernarg_segment_ptr": 1,
              "user_sgpr_count": 6, **code_t}
    header = "".join(f"  {key} = {value}\n" for key, value in fields.items())
    return (f".globl {name}\n.p2align 8\n.amdgpu_hsa_kernel {name}\n{name}:\n"
            f".amd_kernel_code_t\n{header}.end_amd_kernel_code_t\n{body}")
