"""The stop-hook for tests: what a ``forgeflare stop-hook`` process answered Claude Code (a block,
the session going on with a continuation, is exit 0 with the continuation as JSON on stdout,
never exit 2), the console command as a user runs it, the same command run in this process
through its real entry (:func:`stop_hook_here`), and the constants its tests share."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from claude_code_support import claude_env
from forgeflare.cli import main
from forgeflare.stophook import continued, state_path
from project_support import run_text

__all__ = [
    "DONE",
    "FORGEFLARE",
    "NOW",
    "blocks",
    "reason_of",
    "stop_hook_cli",
    "stop_hook_here",
    "write_state",
    "write_transcript",
]

DONE = "<loop-done>COMPLETE</loop-done>"
"""The completion tag, as the model writes it."""
NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
"""The clock of the stop-hook's unit tests."""
FORGEFLARE = str(Path(sys.executable).absolute().parent / "forgeflare")
"""The ``forgeflare`` console script of this environment (what a plugin's hook runs)."""


def stop_hook_cli(
    project: Path, *args: str, home: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``forgeflare stop-hook ARGS --project-dir PROJECT``; with ``home``, in the environment a
    Claude Code session in that home has (its key, no reachable API), else in ours."""
    env = None if home is None else claude_env(home, "http://127.0.0.1:9")
    return run_text(
        [FORGEFLARE, "stop-hook", *args, "--project-dir", str(project)], env=env, timeout=60
    )


def stop_hook_here(
    *args: str, cwd: Path | None = None, env: Mapping[str, str], input: str = ""
) -> subprocess.CompletedProcess[str]:
    """``forgeflare stop-hook ARGS`` as the console script runs it (``forgeflare.cli.main``),
    but in this process: ``input`` on stdin, in ``cwd`` (``None``: this process's working
    directory, as a child started without one inherits it), with exactly ``env`` as the
    environment; its status, stdout and stderr as :func:`run_text` gives them. ``SystemExit``
    is the status; any other exception propagates (a traceback fails the test, as a process's
    non-zero status would). The process is left as it was: environment, working directory,
    ``sys`` streams and ``argv``, signal handlers, the root logger."""
    argv = ["stop-hook", *args]
    stdout, stderr = _output(), _output()
    with _process_state(cwd, env, input, stdout, stderr, argv):
        try:
            main(argv)
            code: object = 0
        except SystemExit as exc:
            code = exc.code
        except BaseException as exc:
            exc.add_note(f"stop-hook stderr so far: {_text(stderr)!r}")
            raise
    if code is None:
        code = 0
    elif not isinstance(code, int):  # as the interpreter does: the message, status 1
        print(code, file=stderr)
        code = 1
    return subprocess.CompletedProcess(
        [FORGEFLARE, *argv], code, stdout=_text(stdout), stderr=_text(stderr)
    )


def _output() -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    """What was written, read back as ``subprocess`` reads text (universal newlines)."""
    stream.flush()
    raw = stream.buffer.getvalue()  # type: ignore[attr-defined]
    return io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8").read()


_SIGNALS = sorted(signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP})


@contextlib.contextmanager
def _process_state(
    cwd: Path | None,
    env: Mapping[str, str],
    stdin: str,
    stdout: io.TextIOWrapper,
    stderr: io.TextIOWrapper,
    argv: list[str],
) -> Iterator[None]:
    """This process as a ``forgeflare`` start would see it (environment, folder, streams,
    ``argv``, logging), and back afterwards."""
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    cwd, env = cwd or Path(saved_cwd), dict(env)  # a copy: ``env`` may be os.environ itself
    saved_streams = (sys.stdin, sys.stdout, sys.stderr, sys.argv)
    saved_signals = {sig: signal.getsignal(sig) for sig in _SIGNALS}
    root = logging.getLogger()
    saved_logging = (root.level, list(root.handlers), logging.root.manager.disable)
    os.environ.clear()
    os.environ.update(env)
    # Logging as a fresh process has it: no handler (a warning goes to stderr through
    # logging's last resort, not to pytest's capture), the default level.
    root.handlers[:] = []
    root.setLevel(logging.WARNING)
    logging.disable(logging.NOTSET)
    try:
        os.chdir(cwd)
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8")
        sys.stdout, sys.stderr = stdout, stderr
        sys.argv = [FORGEFLARE, *argv]
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr, sys.argv = saved_streams
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for sig, handler in saved_signals.items():
            if handler is not None and signal.getsignal(sig) is not handler:
                signal.signal(sig, handler)
        root.setLevel(saved_logging[0])
        root.handlers[:] = saved_logging[1]
        logging.disable(saved_logging[2])


def blocks(out: subprocess.CompletedProcess[str]) -> bool:
    """Whether the hook kept the session going (exit 0 and a continuation on stdout)."""
    return out.returncode == 0 and continued(out.stdout) is not None


def reason_of(out: subprocess.CompletedProcess[str]) -> str:
    """The continuation the hook gave the model; fails the test when it let the stop happen
    (no continuation, or one on a non-zero exit, which Claude Code does not read)."""
    reason = continued(out.stdout)
    assert out.returncode == 0, (out.returncode, out.stdout, out.stderr)
    assert reason is not None, (out.returncode, out.stdout, out.stderr)
    return reason


def write_state(project: Path, *, updated_at: str = "2026-01-01T11:59:00Z", **top: Any) -> Path:
    """A running loop's state file in ``project``: one frame at iteration 1 of 5, ``top`` over it
    (written a minute before :data:`NOW` unless ``updated_at`` says otherwise)."""
    frame = {"mode": "loop", "iter": 1, "max": 5, "prompt": "Fix it.", **top}
    doc = {"schema": 1, "event": "STATE", "run_id": "r", "updated_at": updated_at}
    path = state_path(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**doc, "stack": [frame]}), encoding="utf-8")
    return path


def write_transcript(path: Path, text: str, message_id: str = "m2") -> Path:
    """A transcript at ``path`` of one finished turn: the prompt, then the final ``text``."""
    entries = [
        {"type": "user", "message": {"role": "user", "content": "Fix it."}},
        {
            "type": "assistant",
            "message": {
                "id": message_id,
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
            },
        },
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path
