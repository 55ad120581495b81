"""Start a real ``forgeflare mock-api`` subprocess for tests, demos and benchmarks.

Importable from any test (pytest has ``pythonpath = ["tests"]``)::

    from mockapi_support import MockServer, start_mock_server

    server = start_mock_server({"responses": [...]}, directory=tmp_path)
    try:
        ...  # talk to server.url
        assert len(server.requests()) == 1
    finally:
        server.stop()

The ``mock_api`` fixture in ``conftest.py`` wraps this and stops every server it started.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["MockServer", "MockServerError", "start_mock_server"]

# The server starts in well under a second; the bound is generous because tests run on
# 2 busy cores beside other workers.
_START_TIMEOUT_S = 30.0
_STOP_TIMEOUT_S = 10.0


class MockServerError(RuntimeError):
    """The mock server did not start (its stderr is in the message)."""


class MockServer:
    """A running ``forgeflare mock-api`` child process.

    Attributes: ``url`` (``http://127.0.0.1:PORT``), ``port``, ``script_path``, ``record_path``,
    ``process`` (the ``subprocess.Popen``), ``stdout_path`` and ``stderr_path`` (its output).
    """

    def __init__(
        self,
        *,
        process: subprocess.Popen[bytes],
        port: int,
        host: str,
        script_path: Path,
        record_path: Path,
        stdout_path: Path,
        stderr_path: Path,
    ) -> None:
        self.process = process
        self.port = port
        self.host = host
        self.url = f"http://{host}:{port}"
        self.script_path = script_path
        self.record_path = record_path
        self.stdout_path = stdout_path
        self.stderr_path = stderr_path

    def requests(self) -> list[dict[str, Any]]:
        """Every request recorded so far, parsed (method, path, query, headers, body, ...).

        The server flushes each line before it responds, so a request whose response the
        caller has received is always here.
        """
        try:
            text = self.record_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after a grace period). Idempotent."""
        proc = self.process
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=_STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    @property
    def running(self) -> bool:
        """Whether the child process is still alive."""
        return self.process.poll() is None

    def __enter__(self) -> MockServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"MockServer(url={self.url!r}, script={str(self.script_path)!r})"


def start_mock_server(
    script: dict[str, Any] | Path,
    *,
    directory: Path,
    host: str = "127.0.0.1",
    extra_args: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> MockServer:
    """Write ``script`` (unless it is already a file) into ``directory`` and start a server.

    Waits for ``--port-file`` by bounded polling; raises ``MockServerError`` with the child's
    stderr if it exits or does not bind in time.
    """
    directory.mkdir(parents=True, exist_ok=True)
    if isinstance(script, Path):
        script_path = script
    else:
        script_path = directory / "script.json"
        script_path.write_text(json.dumps(script, indent=2), encoding="utf-8")
    record_path = directory / "requests.jsonl"
    port_path = directory / "port"
    stdout_path = directory / "stdout.log"
    stderr_path = directory / "stderr.log"
    port_path.unlink(missing_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "forgeflare",
        "mock-api",
        "--script",
        str(script_path),
        "--host",
        host,
        "--port",
        "0",
        "--record",
        str(record_path),
        "--port-file",
        str(port_path),
        *(extra_args or []),
    ]
    child_env = dict(os.environ)
    if env:
        child_env.update(env)
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=child_env
        )
    deadline = time.monotonic() + _START_TIMEOUT_S
    delay = 0.005
    while True:
        if port_path.exists():
            text = port_path.read_text(encoding="utf-8").strip()
            if text:
                port = int(text)
                break
        if proc.poll() is not None:
            raise MockServerError(
                f"mock-api exited with status {proc.returncode}: "
                + stderr_path.read_text(encoding="utf-8", errors="replace").strip()
            )
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            raise MockServerError(
                f"mock-api did not write its port file within {_START_TIMEOUT_S:.0f} s: "
                + stderr_path.read_text(encoding="utf-8", errors="replace").strip()
            )
        time.sleep(delay)  # bounded polling for the port file, not synchronisation by sleep
        delay = min(delay * 2, 0.05)
    return MockServer(
        process=proc,
        port=port,
        host=host,
        script_path=script_path,
        record_path=record_path,
        stdout_path=stdout_path,
        stderr_path=stderr_path,
    )
