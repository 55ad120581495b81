"""The stop-hook for tests: what a ``forgeflare stop-hook`` process answered Claude Code (a block,
the session going on with a continuation, is exit 0 with the continuation as JSON on stdout,
never exit 2), the console command as a user runs it, the same command run in this process
through its real entry (:func:`stop_hook_here`), and the constants its tests share."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from claude_code_support import claude_env
from cli_inprocess import run_cli
from forgeflare.stophook import continued, state_path
from project_support import run_text

__all__ = [
    "DONE",
    "FORGEFLARE",
    "NOW",
    "blocks",
    "reason_of",
    "stop_hook_cli",
    "stop_hook_for",
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


def stop_hook_for(
    project: Path, *args: str, home: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """:func:`stop_hook_cli`'s twin in this process (:func:`stop_hook_here`): the same command
    and environment, for a test whose process is Claude Code's, not this command's."""
    env = dict(os.environ) if home is None else claude_env(home, "http://127.0.0.1:9")
    return stop_hook_here(*args, "--project-dir", str(project), env=env)


def stop_hook_here(
    *args: str, cwd: Path | None = None, env: Mapping[str, str], input: str = ""
) -> subprocess.CompletedProcess[str]:
    """``forgeflare stop-hook ARGS`` through the real entry, in this process
    (:func:`cli_inprocess.run_cli`): ``input`` on stdin, in ``cwd`` (``None``: this process's
    working directory, as a child started without one inherits it), with exactly ``env``."""
    return run_cli(["stop-hook", *args], cwd=cwd or Path.cwd(), env=env, stdin=input)


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
