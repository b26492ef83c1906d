"""The generated documentation (:mod:`gpgpu_hdl.soc.regdoc`): ``docs/regmap.md`` is current,
the module prints it, and it names every register of the SoC's map."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.soc.regdoc import DOC_COMMAND, soc_markdown
from gpgpu_hdl.soc.regmap import soc_register_map

ROOT = Path(__file__).resolve().parents[2]


def test_docs_are_generated():
    text = soc_markdown()
    assert (ROOT / "docs" / "regmap.md").read_text() == text, \
        f"docs/regmap.md is stale: run {DOC_COMMAND}"
    assert DOC_COMMAND == "python -m gpgpu_hdl.soc.regdoc > docs/regmap.md"
    out = subprocess.run([sys.executable, "-m", "gpgpu_hdl.soc.regdoc"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    assert out == text
    rm = soc_register_map(CuConfig(), cus=1, prefetch_bytes=16384)
    for r in rm.registers:
        assert f"| `{r.offset:#06x}` | `{r.name}` |" in text, r.name
