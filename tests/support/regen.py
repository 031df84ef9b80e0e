"""`tools/regen.py` for the tests that compare its output with the committed files.

Loaded by path: `tools/` must not be a package, since the seeding runs inside the Hermes
Agent's interpreter with this repository on `PYTHONPATH`, and the agent has its own
top-level `tools` package.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "tools" / "regen.py"


def load_regen() -> ModuleType:
    """The `tools/regen.py` module, loaded once."""
    loaded = sys.modules.get("regen")
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location("regen", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["regen"] = module
    spec.loader.exec_module(module)
    return module
