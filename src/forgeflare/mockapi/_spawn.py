"""Start ``forgeflare mock-api`` as a child process and stop it again.

``forgeflare demo`` and the test suite both run the server this way: the child writes its port
to ``--port-file`` once it listens, and the parent polls for that file (bounded) instead of
parsing stdout. Nothing here imports trio or h11: a parent that only spawns the server does not
pay for them.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from forgeflare.mockapi._errors import MockAPIError
from forgeflare.platform import end_popen, popen_in_group

__all__ = ["start_mock_api", "stop_mock_api"]

# The server starts in well under a second; the bound is generous because tests run on
# 2 busy cores beside other workers.
_START_TIMEOUT_S = 30.0
_STOP_TIMEOUT_S = 10.0


def _tail(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def _read_port(port_file: Path) -> int | None:
    try:
        text = port_file.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return int(text) if text.isdigit() else None


def start_mock_api(
    script: Path,
    *,
    port_file: Path,
    stderr_path: Path,
    args: Sequence[str] = (),
    stdout: int | IO[bytes] = subprocess.DEVNULL,
    python: str = sys.executable,
    env: Mapping[str, str] | None = None,
) -> tuple[subprocess.Popen[bytes], int]:
    """Start ``python -m forgeflare mock-api --script SCRIPT --port-file PORT_FILE ARGS...``.

    Returns the process and the port it listens on. The child's stderr goes to
    ``stderr_path``; ``env`` ``None`` inherits this process's environment. Raises
    :class:`MockAPIError` with that stderr if the child exits, or does not write its port
    file within 30 s (it is killed then). It runs in a process group of its own, so Ctrl+C
    on the terminal does not reach it: its parent decides when it stops.
    """
    port_file.unlink(missing_ok=True)
    cmd = [python, "-P", "-m", "forgeflare", "mock-api", "--script", str(script)]
    cmd += ["--port-file", str(port_file), *args]
    with open(stderr_path, "wb") as err:
        proc = popen_in_group(cmd, stdin=subprocess.DEVNULL, stdout=stdout, stderr=err, env=env)
    deadline = time.monotonic() + _START_TIMEOUT_S
    delay = 0.005
    while (port := _read_port(port_file)) is None:
        if proc.poll() is not None:
            raise MockAPIError(
                f"forgeflare mock-api exited with status {proc.returncode}: {_tail(stderr_path)}"
            )
        if time.monotonic() > deadline:
            end_popen(proc, grace=0)
            raise MockAPIError(
                "forgeflare mock-api did not write its port file within "
                f"{_START_TIMEOUT_S:g} s: {_tail(stderr_path)}"
            )
        time.sleep(delay)  # bounded polling for the port file, not synchronisation by sleep
        delay = min(delay * 2, 0.05)
    return proc, port


def stop_mock_api(proc: subprocess.Popen[bytes], *, timeout: float = _STOP_TIMEOUT_S) -> None:
    """SIGTERM (the server stops cleanly on it), then SIGKILL after ``timeout``; reaped.

    Idempotent: a child that has already exited is only reaped.
    """
    end_popen(proc, grace=timeout)
