"""The Bash tool: one command under ``bash -c``, streamed, time-limited, group-killed.

Each command runs in its own session (``start_new_session``), so it and everything it starts
share one process group that can be signalled as a whole. The group lives as long as the
command: when bash exits, background jobs it left behind are stopped too (TERM, then KILL
after a grace period), so no command outlives its tool call and no stray process keeps the
output pipe open. On timeout, and from :func:`terminate_running_commands`, the same
TERM-grace-KILL sequence runs at once.

The leader (bash) is only reaped after its group has been signalled for the last time and
removed from the registry: while it is an unreaped zombie its pid, which is the group id,
cannot be reused, so a signal can never reach an unrelated process group.
"""

from __future__ import annotations

import codecs
import os
import select
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from forgeflare._process import kill_group
from forgeflare.agent.tools._guard import denied_reason
from forgeflare.agent.tools._inputs import BashInput, parse_input
from forgeflare.agent.tools._sandbox import sandbox_argv, sandbox_mode
from forgeflare.agent.tools._types import ToolError, ToolOutput

__all__ = [
    "BASH_TIMEOUT",
    "MAX_BASH_OUTPUT",
    "bash_tool",
    "cap_output",
    "run_bash",
    "terminate_running_commands",
]

BASH_TIMEOUT = 120.0
"""Seconds a command may run before its process group is killed."""

MAX_BASH_OUTPUT = 100 * 1024
"""Characters of output sent to the model (head and tail kept, the middle elided)."""

KILL_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL when a command's process group is stopped."""

# How long one select() may block before the loop looks at exit, deadline and stop flag.
_POLL = 0.05
# After SIGKILL the pipe closes at once, unless something outside the group holds it.
_DRAIN_AFTER_KILL = 1.0
_READ_SIZE = 65536


class _Running:
    """One command in flight, as the registry sees it."""

    __slots__ = ("pgid", "proc", "stop")

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.pgid = proc.pid  # start_new_session makes the child its group's leader
        self.stop = threading.Event()


_lock = threading.Lock()
_unregistered = threading.Condition(_lock)
_running: set[_Running] = set()


def bash_tool(
    data: dict[str, Any], *, cwd: Path, on_output: Callable[[str], None] | None = None
) -> ToolOutput:
    """The Bash tool on a tool_use input (``command``; ``description`` is only for display)."""
    command = parse_input(BashInput, "Bash", data).command
    if not command.strip():
        raise ToolError("Bash: 'command' is empty")
    return run_bash(command, cwd=cwd, on_output=on_output)


def run_bash(
    command: str,
    *,
    cwd: Path,
    on_output: Callable[[str], None] | None = None,
    timeout: float = BASH_TIMEOUT,
    kill_grace: float = KILL_GRACE,
) -> ToolOutput:
    """Run ``command`` with ``bash -c`` in ``cwd``; stdout and stderr merged.

    Output reaches ``on_output`` chunk by chunk as it arrives (decoded as UTF-8, undecodable
    bytes replaced). A non-zero exit, a timeout and a denied command are errors; partial
    output is kept in all three.
    """
    reason = denied_reason(command)
    if reason is not None:
        return ToolOutput(
            f"Command denied by forgeflare's safety guard: {reason}. Nothing was run.", True
        )
    if not cwd.is_dir():
        return ToolOutput(f"Bash: working directory does not exist: {cwd}", True)
    try:
        argv = ["bash", "-c", command]
        mode = sandbox_mode()
        if mode is not None:
            argv = sandbox_argv(cwd, argv, network=mode == "network")
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=_command_env(),
        )
    except OSError as exc:
        return ToolOutput(f"Bash: could not start bash: {exc.strerror or exc}", True)
    run = _Running(proc)
    with _lock:
        _running.add(run)
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    buffer = _HeadTail(MAX_BASH_OUTPUT)
    decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(data: bytes) -> None:
        text = decoder.decode(data, final=not data)
        if text:
            buffer.add(text)
            if on_output is not None:
                on_output(text)

    outcome = "exited"
    eof = False
    try:
        deadline = time.monotonic() + timeout
        while not _has_exited(proc) and not run.stop.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                outcome = "timeout"
                break
            if eof:  # bash closed its output but runs on: only exit, stop or time can end it
                run.stop.wait(min(_POLL, remaining))
            else:
                eof = _read_some(fd, feed, min(_POLL, remaining))
        if run.stop.is_set():  # also when the command exited as it was being stopped
            outcome = "terminated"
        # Stop the group: leftover background jobs when bash exited, everything otherwise.
        _signal(run, signal.SIGTERM)
        grace_end = time.monotonic() + kill_grace
        while time.monotonic() < grace_end and not (eof and _has_exited(proc)):
            if eof:  # only the leader's exit is missing; it is dying from the signal
                time.sleep(0.01)
            else:
                eof = _read_some(fd, feed, max(0.0, min(_POLL, grace_end - time.monotonic())))
        _signal(run, signal.SIGKILL)
        drain_end = time.monotonic() + _DRAIN_AFTER_KILL
        while not eof and time.monotonic() < drain_end:
            eof = _read_some(fd, feed, _POLL)
    finally:
        _signal(run, signal.SIGKILL)  # a no-op on the normal path; vital if feed() raised
        with _lock:
            _running.discard(run)
            _unregistered.notify_all()
        proc.stdout.close()
        returncode = proc.wait()
    feed(b"")
    return _result(buffer.render(), outcome, returncode, timeout)


def terminate_running_commands(*, grace: float = KILL_GRACE) -> None:
    """Stop every running Bash command's process group: TERM now, KILL after ``grace``.

    Thread-safe; returns once every command has been killed (the threads running them then
    return their partial output, marked as terminated).
    """
    with _lock:
        runs = list(_running)
        for run in runs:
            run.stop.set()
            _signal_locked(run, signal.SIGTERM)
        end = time.monotonic() + grace
        while _running.intersection(runs):
            remaining = end - time.monotonic()
            if remaining <= 0:
                break
            _unregistered.wait(remaining)
        for run in _running.intersection(runs):
            _signal_locked(run, signal.SIGKILL)


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
    if outcome == "terminated":
        note = "[command terminated because the agent is stopping; output above is partial]"
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


def _read_some(fd: int, feed: Callable[[bytes], None], wait: float) -> bool:
    """Read what is available within ``wait`` seconds; True at end of file."""
    poller = select.poll()  # not select(): that fails on descriptors above FD_SETSIZE
    poller.register(fd, select.POLLIN)
    if not poller.poll(max(0, int(wait * 1000))):
        return False
    data = os.read(fd, _READ_SIZE)
    if not data:
        return True
    feed(data)
    return False


def _has_exited(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the leader has exited, without reaping it (see the module docstring)."""
    if proc.returncode is not None:
        return True
    if not hasattr(os, "waitid"):  # pragma: no cover - every supported Unix has it
        return proc.poll() is not None
    try:
        info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


def _signal(run: _Running, sig: signal.Signals) -> None:
    with _lock:
        _signal_locked(run, sig)


def _signal_locked(run: _Running, sig: signal.Signals) -> None:
    if run not in _running:
        return
    kill_group(run.pgid, sig)


def _command_env() -> dict[str, str]:
    env = dict(os.environ)
    # Nothing can answer a prompt or page through output: stdin is /dev/null.
    env.setdefault("PAGER", "cat")
    env.setdefault("GIT_PAGER", "cat")
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env
