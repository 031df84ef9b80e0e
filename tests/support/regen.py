"""The scripts of `tools/` for the tests that call them: `tools/regen.py` for the tests that
compare its output with the committed files, `tools/lowest_constraints.py` for the
dependency-range tests.

Loaded by path: `tools/` must not be a package, since the seeding runs inside the Hermes
Agent's interpreter with this repository on `PYTHONPATH`, and the agent has its own
top-level `tools` package.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def load_tool(name: str) -> ModuleType:
    """The module `tools/NAME.py`, loaded once (as the top-level module NAME)."""
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_regen() -> ModuleType:
    """The `tools/regen.py` module, loaded once."""
    return load_tool("regen")
