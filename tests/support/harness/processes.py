"""The backend process groups this Python process started, and stopping them. Each server runs
as the leader of its own session (``start_new_session=True``), so its PID is its process group
id; ``track`` remembers it, ``terminate_group`` sends SIGTERM then SIGKILL to that group and
waits until it is gone, ``live_pids``/``stop_all`` report and stop what is left (``stop_all``
also runs at exit). Invariant: a signal only ever goes to a group this process started and
tracks, by its id; never by a name, and never ``hermes dashboard --stop``.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import threading
import time

STOP_TIMEOUT = 10.0

_LIVE: dict[int, subprocess.Popen[bytes]] = {}
_LIVE_LOCK = threading.Lock()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def terminate_group(proc: subprocess.Popen[bytes], timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM the process group we started, SIGKILL it after *timeout*; reap the leader."""
    pgid = proc.pid  # start_new_session=True: the leader's pid is the group id
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        proc.wait(timeout=timeout)
    deadline = time.monotonic() + timeout
    while _group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _group_alive(pgid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
    with _LIVE_LOCK:
        _LIVE.pop(proc.pid, None)


def track(proc: subprocess.Popen[bytes]) -> None:
    """Remember *proc* (started with ``start_new_session=True``) until ``terminate_group`` stops it."""
    with _LIVE_LOCK:
        _LIVE[proc.pid] = proc


def live_pids() -> list[int]:
    """PIDs of backend process groups started by this process and not yet stopped."""
    with _LIVE_LOCK:
        return sorted(pid for pid, proc in _LIVE.items() if proc.poll() is None or _group_alive(pid))


def stop_all() -> list[int]:
    """Stop every backend this process started and has not stopped yet; return those still running."""
    with _LIVE_LOCK:
        procs = list(_LIVE.values())
    stopped = [p.pid for p in procs if p.poll() is None or _group_alive(p.pid)]
    for proc in procs:
        terminate_group(proc)
    return stopped


atexit.register(stop_all)
