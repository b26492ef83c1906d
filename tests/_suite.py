"""Load ``examples/suite/`` (the reference-check suite, a package) for the tests.

It is loaded by path under a unique module name, registered in ``sys.modules`` before it
runs because its dataclasses look their module up. Its submodules import each other
relatively, so the spec names the package directory as its submodule search location.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "gpgpu_examples_suite"


def load_suite():
    if NAME not in sys.modules:
        package = ROOT / "examples" / "suite"
        spec = importlib.util.spec_from_file_location(
            NAME, package / "__init__.py", submodule_search_locations=[str(package)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[NAME] = module
        spec.loader.exec_module(module)
    return sys.modules[NAME]
