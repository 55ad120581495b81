"""One way to run a child process: its own group, streamed output, and nothing left behind.

:func:`run_child` is the only place in forgeflare that starts a child which may outlive a
plain wait (the agent, lifecycle hooks, shell hooks, Bash commands, gates, notify commands).
The child is started by ``trio.run_process`` (through ``nursery.start``, so we hold the
process) in a process group of its own (``process_group=0``, i.e. ``setpgid``; a new session
would give every hook its own scheduler autogroup, measurably slower under load). It ends one
of five ways: it exits; its deadline passes; a stop is requested; a kill is requested; the
calling task is cancelled. Ending means TERM to the group, ``grace`` seconds (or until a kill
request), KILL; ``grace=0`` is KILL at once. Whichever way the leader ended, it is reaped,
what is left of its group is ended the same way, and with a ``marker`` (an environment
variable every descendant inherits; a forgeflare child started with Python also carries it as
a ``-X`` option, since a non-dumpable process hides its environment) so are descendants that
left the group (``setsid``, double fork). Cleanup is shielded from cancellation;
``Cancelled`` always propagates.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypedDict, Unpack

import trio

from forgeflare.platform._pgroup import (
    POLL_MAX,
    POLL_MIN,
    end_adopted,
    end_marked_processes,
    group_alive,
    kill_group,
    marked_processes,
    marker_argv,
    spawned,
    term_on_parent_death,
)
from forgeflare.platform._spawnhere import run_process_here

__all__ = [
    "ChildOptions",
    "ChildResult",
    "end_marked_processes",
    "exit_status",
    "kill_group",
    "marked_processes",
    "run_child",
    "run_child_blocking",
]

_CHUNK = 65536


@dataclass(frozen=True, slots=True)
class ChildResult:
    """How a child ended. ``returncode`` is negative (-N) when signal N killed it."""

    returncode: int
    timed_out: bool
    stopped: bool
    duration: float

    @property
    def exit_code(self) -> int | None:
        """The exit status, or ``None`` when a signal or the supervisor ended it."""
        if self.timed_out or self.stopped or self.returncode < 0:
            return None
        return self.returncode


def exit_status(result: ChildResult) -> int:
    """Shell convention: the exit status, 124 on a timeout, 128+N after signal N."""
    if result.timed_out:
        return 124
    if result.returncode < 0:
        return 128 - result.returncode
    return result.returncode


async def _wait_event(event: trio.Event | None) -> None:
    if event is None:
        await trio.sleep_forever()
    else:
        await event.wait()


async def _term_grace_kill(pgid: int, grace: float, kill: trio.Event | None) -> bool:
    """End a group whose leader is already reaped: poll until it is empty, at most ``grace``.
    Whether the group still had members.

    While the group has members its id (the leader's pid) cannot be reused; once it is
    empty, a recycled pid is a group id only if that new process made itself a leader in the
    moment since the reaping, which the kernel's pid allocation makes practically impossible.
    """
    if grace <= 0:
        return kill_group(pgid, signal.SIGKILL)
    members = kill_group(pgid, signal.SIGTERM)
    if members:
        with trio.move_on_after(grace):
            async with trio.open_nursery() as nursery:

                async def empty() -> None:
                    delay = POLL_MIN
                    while group_alive(pgid):
                        await trio.sleep(delay)
                        delay = min(delay * 2, POLL_MAX)
                    nursery.cancel_scope.cancel()

                nursery.start_soon(empty)
                if kill is not None:
                    await kill.wait()
                    nursery.cancel_scope.cancel()
    kill_group(pgid, signal.SIGKILL)
    return members


class _Lines:
    """Turns chunks into whole lines (the last one may lack its newline) for a callback."""

    def __init__(self, on_line: Callable[[bytes], object]) -> None:
        self._on_line = on_line
        self._buf = b""

    def __call__(self, chunk: bytes) -> None:
        self._buf += chunk
        *lines, self._buf = self._buf.split(b"\n")
        for line in lines:
            self._on_line(line + b"\n")

    def flush(self) -> None:
        if self._buf:
            self._on_line(self._buf)
            self._buf = b""


class ChildOptions(TypedDict, total=False):
    """:func:`run_child`'s options, each with its default in :class:`_ChildRun`."""

    cwd: Path | str | None
    env: Mapping[str, str] | None
    stdin: bytes | None
    on_output: Callable[[bytes], object] | None
    lines: bool
    stderr: int | None
    timeout: float | None
    grace: float
    stop: trio.Event | None
    kill: trio.Event | None
    marker: tuple[str, str] | None
    drain: float
    on_start: Callable[[trio.Process], None] | None
    die_with_parent: bool
    pass_fds: Sequence[int]


async def run_child(argv: Sequence[str], **options: Unpack[ChildOptions]) -> ChildResult:
    """Run ``argv`` to its end as the module docstring says; returns how it ended.

    ``stdin`` bytes are fed and the pipe closed (``None``: /dev/null). With ``on_output`` the
    child's stdout (and stderr, unless ``stderr`` says otherwise: ``None`` inherits it) is
    handed over chunk by chunk, or line by line with ``lines``; without it stdout is
    inherited. ``timeout`` of ``None`` or 0 means no deadline. ``stop`` ends the child with
    the grace, ``kill`` at once; both count as ``stopped``. ``marker`` (name, value) must be in
    ``env`` for descendants to carry it. After the leader exits, output is read for at most
    ``drain`` more seconds (descendants outside the group can hold the pipe for ever; 0 reads
    only what is already in it). ``on_start`` gets the process as soon as it runs. With
    ``die_with_parent`` (Linux) the child gets SIGTERM when this process dies, even by
    ``kill -9``: it ends its turn instead of going on unsupervised, leaving orphans nobody
    would find. ``pass_fds`` are inherited by the child (a secrets descriptor, see
    ``_keychannel``). Raises ``OSError`` when the program cannot start.
    """
    marker = options.get("marker")
    command = list(argv) if marker is None else marker_argv(argv, *marker)
    return await _ChildRun(command, **options).run()


@dataclass
class _ChildRun:
    """One child's run (:func:`run_child`'s arguments): its cancel scopes, what ended it, and
    the tasks that start, watch, read and clean up after it."""

    argv: list[str]
    cwd: Path | str | None = None
    env: Mapping[str, str] | None = None
    stdin: bytes | None = b""
    on_output: Callable[[bytes], object] | None = None
    lines: bool = False
    stderr: int | None = subprocess.STDOUT
    timeout: float | None = None
    grace: float = 2.0
    stop: trio.Event | None = None
    kill: trio.Event | None = None
    marker: tuple[str, str] | None = None
    drain: float = 2.0
    on_start: Callable[[trio.Process], None] | None = None
    die_with_parent: bool = False
    pass_fds: Sequence[int] = ()

    def __post_init__(self) -> None:
        self.started = time.monotonic()
        self.since = (
            time.time()
        )  # descendants adopted later (a subreaper's orphans) started after it
        self.splitter = (
            _Lines(self.on_output) if self.on_output is not None and self.lines else None
        )
        self.emit: Callable[[bytes], object] | None = self.splitter or self.on_output
        self.why: list[str] = []  # "stopped" or "killed", the first request wins
        deadline = trio.current_time() + self.timeout if self.timeout else math.inf
        self.run_scope = trio.CancelScope(deadline=deadline)
        self.pump_scope = trio.CancelScope()
        self.watch_scope = trio.CancelScope()
        self.leader_done = trio.Event()
        self.proc: trio.Process | None = None
        self.cleaned = False

    async def run(self) -> ChildResult:
        """Start the child, follow it to its end, and leave nothing of it behind."""
        spawn_error: OSError | None = None
        try:
            async with trio.open_nursery() as nursery:
                try:
                    self.proc = await nursery.start(self.runner)
                except OSError as exc:  # raised bare below, not wrapped in this nursery's group
                    spawn_error = exc
                if self.proc is not None:
                    await self.follow(nursery, self.proc)
        finally:
            # Cancelled from outside (or crashed): the nursery has waited for run_process, which
            # delivered the cancel and reaped the leader. End what is left; the error goes on.
            with trio.CancelScope(shield=True):
                await self.close()
        if spawn_error is not None:
            raise spawn_error
        assert self.proc is not None
        assert self.proc.returncode is not None
        return ChildResult(
            returncode=self.proc.returncode,
            timed_out=bool(self.run_scope.cancelled_caught and not self.why),
            stopped=bool(self.why),
            duration=time.monotonic() - self.started,
        )

    async def close(self) -> None:
        """What is left after the leader: the group (unless ``follow`` ended it), the pipe."""
        proc = self.proc
        if proc is not None and not self.cleaned:
            await _cleanup(proc, self.grace, self.kill, self.marker, self.since)
        if proc is not None:
            spawned(proc.pid, alive=False)
        if proc is not None and proc.stdout is not None:
            await proc.stdout.aclose()
        if self.splitter is not None:
            self.splitter.flush()

    async def deliver_cancel(self, proc: trio.Process) -> None:
        # trio cancels this as soon as the leader is reaped; the rest of the group is
        # handled after that, in ``follow`` or ``close``.
        kill = self.kill
        if "killed" in self.why or (kill is not None and kill.is_set()) or self.grace <= 0:
            kill_group(proc.pid, signal.SIGKILL)
            return
        kill_group(proc.pid, signal.SIGTERM)
        with trio.move_on_after(self.grace):
            await _wait_event(kill)
        kill_group(proc.pid, signal.SIGKILL)

    async def runner(self, *, task_status: trio.TaskStatus[trio.Process]) -> None:
        try:
            options: dict[str, Any] = {
                "stdout": subprocess.PIPE if self.emit is not None else None,
                "stderr": self.stderr,
                "cwd": None if self.cwd is None else str(self.cwd),
                "env": None if self.env is None else dict(self.env),
                "deliver_cancel": self.deliver_cancel,
                "process_group": 0,
                "pass_fds": tuple(self.pass_fds),
                "task_status": task_status,
            }
            with self.run_scope:
                if self.die_with_parent:
                    # Forked from this thread: the death signal follows the thread that forks.
                    await run_process_here(
                        self.argv, stdin=self.stdin, preexec_fn=term_on_parent_death, **options
                    )
                else:
                    await trio.run_process(
                        self.argv,
                        stdin=subprocess.DEVNULL if self.stdin is None else self.stdin,
                        check=False,
                        **options,
                    )
        finally:
            self.watch_scope.cancel()
            self.leader_done.set()

    async def watch(self, event: trio.Event, name: str) -> None:
        await event.wait()
        if not self.why:
            self.why.append(name)
        self.run_scope.cancel()

    async def pump(self, stream: trio.lowlevel.FdStream, fd: int) -> None:
        emit = self.emit
        assert emit is not None
        with self.pump_scope:
            while chunk := await stream.receive_some(_CHUNK):
                emit(chunk)
        if self.pump_scope.cancelled_caught and self.drain <= 0:
            # Read what the child wrote before it exited, without waiting for EOF.
            with contextlib.suppress(OSError):
                while chunk := os.read(fd, _CHUNK):
                    emit(chunk)

    async def follow(self, nursery: trio.Nursery, proc: trio.Process) -> None:
        spawned(proc.pid, alive=True)
        if self.on_start is not None:
            self.on_start(proc)
        if self.emit is not None:
            assert isinstance(proc.stdout, trio.lowlevel.FdStream)
            nursery.start_soon(self.pump, proc.stdout, proc.stdout.fileno())
        with self.watch_scope:
            async with trio.open_nursery() as watchers:
                if self.stop is not None:
                    watchers.start_soon(self.watch, self.stop, "stopped")
                if self.kill is not None:
                    watchers.start_soon(self.watch, self.kill, "killed")
        await self.leader_done.wait()
        self.cleaned = True
        await _cleanup(proc, self.grace, self.kill, self.marker, self.since)
        if self.drain > 0:
            self.pump_scope.deadline = trio.current_time() + self.drain
        else:
            self.pump_scope.cancel()


async def _cleanup(
    proc: trio.Process,
    grace: float,
    kill: trio.Event | None,
    marker: tuple[str, str] | None,
    since: float,
) -> None:
    """End what the reaped leader left: its group, marked descendants, and, in a subreaper
    (``forgeflare loop``), the orphans it adopted since the child started (shielded)."""
    with trio.CancelScope(shield=True):
        # The orphans first, beside the group: one that left its session and its marker behind
        # (`env -i setsid`) is known only as this process's child, so a kill -9 of this
        # process before it is ended loses it for good. The scan for marked processes reads
        # every process's environment (tens of ms on a busy machine): after, not before.
        async with trio.open_nursery() as nursery:
            nursery.start_soon(partial(trio.to_thread.run_sync, end_adopted, since, grace))
            members = await _term_grace_kill(proc.pid, grace, kill)
        found = []
        if marker is not None:
            found = await trio.to_thread.run_sync(partial(end_marked_processes, *marker, grace))
        if members or found:  # what the processes ended here left behind was adopted meanwhile
            await trio.to_thread.run_sync(partial(end_adopted, since, grace))


def run_child_blocking(argv: Sequence[str], **options: Unpack[ChildOptions]) -> ChildResult:
    """:func:`run_child` for synchronous code outside trio (a CLI, a worker thread)."""
    return trio.run(partial(run_child, argv, **options))
