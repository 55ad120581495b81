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
import subprocess
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from forgeflare.mockapi import start_mock_api, stop_mock_api

__all__ = ["MockAPI", "MockServer", "start_mock_server"]


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
        stop_mock_api(self.process)

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


MockAPI = Callable[[dict[str, Any]], MockServer]
"""The ``mock_api`` fixture's type: it starts a server for a script and returns it."""


def start_mock_server(
    script: dict[str, Any] | Path,
    *,
    directory: Path,
    host: str = "127.0.0.1",
    extra_args: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> MockServer:
    """Write ``script`` (unless it is already a file) into ``directory`` and start a server.

    ``forgeflare.mockapi.start_mock_api`` waits for its ``--port-file`` and raises
    ``MockAPIError`` with the child's stderr if it exits or does not bind in time.
    """
    directory.mkdir(parents=True, exist_ok=True)
    if isinstance(script, Path):
        script_path = script
    else:
        script_path = directory / "script.json"
        script_path.write_text(json.dumps(script, indent=2), encoding="utf-8")
    record_path = directory / "requests.jsonl"
    stdout_path = directory / "stdout.log"
    stderr_path = directory / "stderr.log"
    args = ["--host", host, "--port", "0", "--record", str(record_path), *(extra_args or [])]
    with open(stdout_path, "wb") as out:
        proc, port = start_mock_api(
            script_path,
            port_file=directory / "port",
            stderr_path=stderr_path,
            args=args,
            stdout=out,
            env={**os.environ, **(env or {})},
        )
    return MockServer(
        process=proc,
        port=port,
        host=host,
        script_path=script_path,
        record_path=record_path,
        stdout_path=stdout_path,
        stderr_path=stderr_path,
    )
