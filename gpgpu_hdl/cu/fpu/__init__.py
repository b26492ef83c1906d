"""The FP32 vector unit: one set of trimmable sub-units per lane.

See :mod:`.ops` for the instructions and their sub-units and :mod:`.common` for the port set
and the rounding every sub-unit shares.
"""

from .common import F32_NAN, FpSubUnit
from .ops import FP_OPS, SUBUNIT_OF, SUBUNITS, FpOp, fp_member

__all__ = ["F32_NAN", "FP_OPS", "SUBUNITS", "SUBUNIT_OF", "FpOp", "FpSubUnit", "fp_member"]
