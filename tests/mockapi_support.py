"""Run the mock Messages API for tests, demos and benchmarks: in a thread, or as the command.

Importable from any test (pytest has ``pythonpath = ["tests"]``)::

    from mockapi_support import MockServer, start_mock_server

    server = start_mock_server({"responses": [...]}, directory=tmp_path)
    try:
        ...  # talk to server.url
        assert len(server.requests()) == 1
    finally:
        server.stop()

``start_mock_server`` serves the script with the command's own server code
(``forgeflare.mockapi.serve``, the coroutine ``forgeflare mock-api`` runs) in a daemon thread
of this process: no process start, the same sockets, HTTP, script and ``--record`` file.
``start_mock_process`` starts the real ``forgeflare mock-api`` child instead, for tests about
the command (its flags, ``--api responses``, signals, exit codes, stderr).

The ``mock_api`` fixture in ``conftest.py`` wraps these and stops every server it started.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any

import trio

from forgeflare.mockapi import MockAPIError, load_script, serve, start_mock_api, stop_mock_api

__all__ = ["MockAPI", "MockProcess", "MockServer", "start_mock_process", "start_mock_server"]

# Generous bounds for 2 busy cores: binding takes milliseconds, stopping one trio checkpoint.
_START_TIMEOUT_S = 30.0
_STOP_TIMEOUT_S = 30.0


class MockServer:
    """A mock Messages API serving in a daemon thread of this process (its own ``trio.run``).

    Attributes: ``url`` (``http://127.0.0.1:PORT``), ``port``, ``host``, ``script_path``,
    ``record_path``. Raises :class:`MockAPIError` (or the script's ``MockScriptError``) when
    the script is invalid or the socket cannot be bound, as the command would.
    """

    def __init__(self, *, script_path: Path, record_path: Path, host: str = "127.0.0.1") -> None:
        self.script_path = script_path
        self.record_path = record_path
        self.host = host
        self.port = 0
        self._script = load_script(script_path)  # a bad script fails here, before any thread
        self._token: trio.lowlevel.TrioToken | None = None
        self._scope: trio.CancelScope | None = None
        self._error: BaseException | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="mock-api", daemon=True)
        self._thread.start()
        if not self._ready.wait(_START_TIMEOUT_S):
            self.stop()
            raise MockAPIError(f"mock-api thread did not listen within {_START_TIMEOUT_S:g} s")
        if self._error is not None:
            self._thread.join()
            raise self._error
        self.url = f"http://{host}:{self.port}"

    def _run(self) -> None:
        try:
            trio.run(self._serve)
        except BaseException as exc:  # reported by __init__ if it came before listening
            # The nursery wraps a start-up failure (port in use, bad record path): the one
            # MockAPIError inside is what the command would print.
            while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
                exc = exc.exceptions[0]
            self._error = exc
        finally:
            self._ready.set()

    async def _serve(self) -> None:
        async with trio.open_nursery() as nursery:
            self.port = await nursery.start(
                partial(serve, self._script, host=self.host, record_path=self.record_path)
            )
            self._scope = nursery.cancel_scope
            self._token = trio.lowlevel.current_trio_token()
            self._ready.set()

    def requests(self) -> list[dict[str, Any]]:
        """Every request recorded so far, parsed (method, path, query, headers, body, ...).

        The server flushes each line before it responds, so a request whose response the
        caller has received is always here. A line still being written (a poll racing the
        server on a long request) has no newline yet and is left for the next call.
        """
        try:
            data = self.record_path.read_bytes()
        except FileNotFoundError:
            return []
        complete = data.split(b"\n")[:-1]
        return [json.loads(line) for line in complete if line.strip()]

    def stop(self) -> None:
        """Stop serving and wait for the thread: the listening socket and every open
        connection are closed (a client then sees its connection refused or reset), as when
        the command's process ends. Idempotent."""
        token, scope = self._token, self._scope
        if token is not None and scope is not None:
            with contextlib.suppress(trio.RunFinishedError):  # already stopped
                token.run_sync_soon(scope.cancel)
        self._thread.join(_STOP_TIMEOUT_S)
        if self._thread.is_alive():
            raise MockAPIError(f"mock-api thread did not stop within {_STOP_TIMEOUT_S:g} s")

    @property
    def running(self) -> bool:
        """Whether the server is still serving."""
        return self._thread.is_alive()

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
        return f"{type(self).__name__}(url={self.url!r}, script={str(self.script_path)!r})"


class MockProcess(MockServer):
    """A running ``forgeflare mock-api`` child process (the command itself), recording to
    ``directory/requests.jsonl``; ``extra_args`` follow its own ``--host``, ``--port 0`` and
    ``--record``, ``env`` is added to this process's environment.

    Besides :class:`MockServer`'s attributes: ``process`` (the ``subprocess.Popen``),
    ``stdout_path`` and ``stderr_path`` (its output). ``forgeflare.mockapi.start_mock_api``
    waits for its ``--port-file`` and raises ``MockAPIError`` with the child's stderr if it
    exits or does not bind in time.
    """

    def __init__(
        self,
        script_path: Path,
        *,
        directory: Path,
        host: str = "127.0.0.1",
        extra_args: list[str] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        # Not MockServer.__init__: the child serves, not a thread of this process.
        self.script_path = script_path
        self.record_path = directory / "requests.jsonl"
        self.stdout_path = directory / "stdout.log"
        self.stderr_path = directory / "stderr.log"
        self.host = host
        args = ["--host", host, "--port", "0", "--record", str(self.record_path)]
        with open(self.stdout_path, "wb") as out:
            self.process, self.port = start_mock_api(
                script_path,
                port_file=directory / "port",
                stderr_path=self.stderr_path,
                args=[*args, *(extra_args or [])],
                stdout=out,
                env={**os.environ, **(env or {})},
            )
        self.url = f"http://{host}:{self.port}"

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after a grace period). Idempotent."""
        stop_mock_api(self.process)

    @property
    def running(self) -> bool:
        """Whether the child process is still alive."""
        return self.process.poll() is None


MockAPI = Callable[[dict[str, Any]], MockServer]
"""The ``mock_api`` fixture's type: it starts a server for a script and returns it."""


def _script_file(script: dict[str, Any] | Path, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    if isinstance(script, Path):
        return script
    path = directory / "script.json"
    path.write_text(json.dumps(script, indent=2), encoding="utf-8")
    return path


def start_mock_server(
    script: dict[str, Any] | Path, *, directory: Path, host: str = "127.0.0.1"
) -> MockServer:
    """Write ``script`` (unless it is already a file) into ``directory`` and serve it in a
    thread of this process, recording to ``directory/requests.jsonl``."""
    script_path = _script_file(script, directory)
    return MockServer(script_path=script_path, record_path=directory / "requests.jsonl", host=host)


def start_mock_process(
    script: dict[str, Any] | Path,
    *,
    directory: Path,
    host: str = "127.0.0.1",
    extra_args: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> MockProcess:
    """Write ``script`` (unless it is already a file) into ``directory`` and start the real
    ``forgeflare mock-api`` command on it (see :class:`MockProcess`)."""
    script_path = _script_file(script, directory)
    return MockProcess(script_path, directory=directory, host=host, extra_args=extra_args, env=env)
