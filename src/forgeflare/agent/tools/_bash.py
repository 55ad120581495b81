"""The Bash tool: one command under ``bash -c``, streamed, time-limited, group-ended.

An async tool on :func:`forgeflare.platform._process.run_child`: each command runs in its own
process group, with a per-command marker in its environment, so it and everything it starts (also
what left the group for a session of its own) end with it. When bash exits, background jobs
it left behind are stopped (TERM, then KILL after a grace period), so no command outlives its
tool call and no stray process keeps the output pipe open. On timeout, and when the calling
task is cancelled (the agent is stopping), the same TERM-grace-KILL sequence runs at once.
"""

from __future__ import annotations

import codecs
import functools
import os
import secrets
import signal
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from forgeflare.agent.tools._guard import denied_reason
from forgeflare.agent.tools._inputs import BashInput, parse_input
from forgeflare.agent.tools._limits import BASH_TIMEOUT, MAX_BASH_OUTPUT
from forgeflare.agent.tools._types import ToolError, ToolOutput
from forgeflare.platform import run_child
from forgeflare.security import sandbox_argv, sandbox_mode

__all__ = ["bash_tool", "cap_output", "run_bash"]

KILL_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL when a command's process group is stopped."""

# A fresh token per command in its environment: finds its descendants however they detached.
_MARKER_ENV = "FORGEFLARE_BASH_ID"

# After bash exits, how long its output may keep flowing (the group is being ended).
_DRAIN_AFTER_EXIT = 1.0

_TERMINATED = "[command terminated because the agent is stopping; output above is partial]"


async def bash_tool(
    data: dict[str, Any], *, cwd: Path, on_output: Callable[[str], None] | None = None
) -> ToolOutput:
    """The Bash tool on a tool_use input (``command``; ``description`` is only for display)."""
    command = parse_input(BashInput, "Bash", data).command
    if not command.strip():
        raise ToolError("Bash: 'command' is empty")
    return await run_bash(command, cwd=cwd, on_output=on_output)


async def run_bash(
    command: str,
    *,
    cwd: Path,
    on_output: Callable[[str], None] | None = None,
    timeout: float = BASH_TIMEOUT,
    kill_grace: float = KILL_GRACE,
) -> ToolOutput:
    """Run ``command`` with ``bash -c`` in ``cwd``; stdout and stderr merged, no stdin.

    Output reaches ``on_output`` chunk by chunk as it arrives (decoded as UTF-8, undecodable
    bytes replaced). A non-zero exit, a timeout and a denied command are errors; partial
    output is kept in all three. Cancellation ends the command's group (TERM, grace, KILL),
    streams the "terminated" note and propagates.
    """
    # Checked here too, not only by the built-in PreToolUse guard: a user's hook may rewrite
    # the command (updated_input) after that guard ran, and run_bash is callable on its own.
    reason = denied_reason(command, cwd=cwd)
    if reason is not None:
        return ToolOutput(
            f"Command denied by forgeflare's safety guard: {reason}. Nothing was run.", True
        )
    if not os.path.isdir(cwd):  # noqa: ASYNC240 - one stat, not worth a thread
        return ToolOutput(f"Bash: working directory does not exist: {cwd}", True)
    argv = ["bash", "-c", command]
    mode = sandbox_mode()
    if mode is not None:
        # The plan reads the file system (/proc/net/unix, stats): a thread, not the loop.
        argv = await trio.to_thread.run_sync(
            functools.partial(sandbox_argv, Path(cwd), argv, network=mode == "network")
        )
    token = secrets.token_hex(8)
    buffer = _HeadTail(MAX_BASH_OUTPUT)
    decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(data: bytes) -> None:
        text = decoder.decode(data, final=not data)
        if text:
            buffer.add(text)
            if on_output is not None:
                on_output(text)

    ended = False
    try:
        result = await run_child(
            argv,
            cwd=cwd,
            env={**_command_env(), _MARKER_ENV: token},
            stdin=None,
            on_output=feed,
            timeout=timeout,
            grace=kill_grace,
            marker=(_MARKER_ENV, token),
            drain=_DRAIN_AFTER_EXIT,
        )
        ended = True
    except OSError as exc:
        ended = True
        return ToolOutput(f"Bash: could not start bash: {exc.strerror or exc}", True)
    finally:
        # Cancelled (the agent is stopping; trio may wrap it in a group): say so on the way.
        if not ended and on_output is not None:
            feed(b"")
            on_output(f"\n{_TERMINATED}\n")
    feed(b"")
    outcome = "timeout" if result.timed_out else "exited"
    return _result(buffer.render(), outcome, result.returncode, timeout)


def cap_output(text: str, limit: int = MAX_BASH_OUTPUT) -> str:
    """``text`` cut to about ``limit`` characters: its head and tail with a marker between."""
    buffer = _HeadTail(limit)
    buffer.add(text)
    return buffer.render()


class _HeadTail:
    """Keeps the first and last ``limit / 2`` characters of a stream, and its total length."""

    def __init__(self, limit: int) -> None:
        self._head_limit = limit // 2
        self._tail_limit = limit - self._head_limit
        self._head: list[str] = []
        self._head_len = 0
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self._total = 0

    def add(self, text: str) -> None:
        self._total += len(text)
        if self._head_len < self._head_limit:
            take = text[: self._head_limit - self._head_len]
            self._head.append(take)
            self._head_len += len(take)
            text = text[len(take) :]
        if text:
            self._tail.append(text)
            self._tail_len += len(text)
            while self._tail and self._tail_len - len(self._tail[0]) >= self._tail_limit:
                self._tail_len -= len(self._tail.popleft())

    def render(self) -> str:
        head = "".join(self._head)
        tail = "".join(self._tail)
        if self._total <= self._head_limit + self._tail_limit:
            return head + tail
        tail = tail[-self._tail_limit :]
        omitted = self._total - len(head) - len(tail)
        return f"{head}\n\n[... {omitted:,} characters of output omitted ...]\n\n{tail}"


def _result(output: str, outcome: str, returncode: int, timeout: float) -> ToolOutput:
    body = output.rstrip("\n")
    if outcome == "timeout":
        note = (
            f"[command timed out after {timeout:g} s; its process group was killed; "
            "the output above is partial]"
        )
        return ToolOutput(f"{body}\n{note}" if body else note, True)
    if returncode == 0:
        return ToolOutput(body if body else "(no output)")
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        note = f"[command killed by {name}]"
    else:
        note = f"[exit code {returncode}]"
    return ToolOutput(f"{body}\n{note}" if body else note, True)


def _command_env() -> dict[str, str]:
    env = dict(os.environ)
    # Nothing can answer a prompt or page through output: stdin is /dev/null.
    env.setdefault("PAGER", "cat")
    env.setdefault("GIT_PAGER", "cat")
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env
