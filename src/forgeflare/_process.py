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
variable every descendant inherits) so are descendants that left the group (``setsid``,
double fork). Cleanup is shielded from cancellation; ``Cancelled`` always propagates.
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
from typing import Any

import trio

from forgeflare._pgroup import (
    POLL_MAX,
    POLL_MIN,
    end_adopted,
    end_marked_processes,
    group_alive,
    kill_group,
    marked_processes,
    spawned,
    term_on_parent_death,
)

__all__ = [
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


async def _term_grace_kill(pgid: int, grace: float, kill: trio.Event | None) -> None:
    """End a group whose leader is already reaped: poll until it is empty, at most ``grace``.

    While the group has members its id (the leader's pid) cannot be reused; once it is
    empty, a recycled pid is a group id only if that new process made itself a leader in the
    moment since the reaping, which the kernel's pid allocation makes practically impossible.
    """
    if grace > 0 and kill_group(pgid, signal.SIGTERM):
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


async def run_child(
    argv: Sequence[str],
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = b"",
    on_output: Callable[[bytes], object] | None = None,
    lines: bool = False,
    stderr: int | None = subprocess.STDOUT,
    timeout: float | None = None,
    grace: float = 2.0,
    stop: trio.Event | None = None,
    kill: trio.Event | None = None,
    marker: tuple[str, str] | None = None,
    drain: float = 2.0,
    on_start: Callable[[trio.Process], None] | None = None,
    die_with_parent: bool = False,
    pass_fds: Sequence[int] = (),
) -> ChildResult:
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
    started = time.monotonic()
    since = time.time()  # descendants adopted later (a subreaper's orphans) started after it
    emit: Callable[[bytes], object] | None = on_output
    splitter = _Lines(on_output) if on_output is not None and lines else None
    if splitter is not None:
        emit = splitter
    why: list[str] = []  # "stopped" or "killed", the first request wins
    run_scope = trio.CancelScope(deadline=trio.current_time() + timeout if timeout else math.inf)
    pump_scope = trio.CancelScope()
    watch_scope = trio.CancelScope()
    leader_done = trio.Event()

    async def deliver_cancel(proc: trio.Process) -> None:
        # trio cancels this as soon as the leader is reaped; the rest of the group is
        # handled after that, below.
        if "killed" in why or (kill is not None and kill.is_set()) or grace <= 0:
            kill_group(proc.pid, signal.SIGKILL)
            return
        kill_group(proc.pid, signal.SIGTERM)
        with trio.move_on_after(grace):
            await _wait_event(kill)
        kill_group(proc.pid, signal.SIGKILL)

    async def runner(*, task_status: trio.TaskStatus[trio.Process]) -> None:
        try:
            with run_scope:
                await trio.run_process(
                    list(argv),
                    stdin=subprocess.DEVNULL if stdin is None else stdin,
                    stdout=subprocess.PIPE if emit is not None else None,
                    stderr=stderr,
                    cwd=None if cwd is None else str(cwd),
                    env=None if env is None else dict(env),
                    check=False,
                    deliver_cancel=deliver_cancel,
                    process_group=0,
                    pass_fds=tuple(pass_fds),
                    task_status=task_status,
                    preexec_fn=term_on_parent_death if die_with_parent else None,
                )
        finally:
            watch_scope.cancel()
            leader_done.set()

    async def watch(event: trio.Event, name: str) -> None:
        await event.wait()
        if not why:
            why.append(name)
        run_scope.cancel()

    async def pump(stream: trio.lowlevel.FdStream, fd: int) -> None:
        assert emit is not None
        with pump_scope:
            while chunk := await stream.receive_some(_CHUNK):
                emit(chunk)
        if pump_scope.cancelled_caught and drain <= 0:
            # Read what the child wrote before it exited, without waiting for EOF.
            with contextlib.suppress(OSError):
                while chunk := os.read(fd, _CHUNK):
                    emit(chunk)

    proc: trio.Process | None = None
    spawn_error: OSError | None = None
    cleaned = False

    async def follow(nursery: trio.Nursery, proc: trio.Process) -> None:
        nonlocal cleaned
        spawned(proc.pid, alive=True)
        if on_start is not None:
            on_start(proc)
        if emit is not None:
            assert isinstance(proc.stdout, trio.lowlevel.FdStream)
            nursery.start_soon(pump, proc.stdout, proc.stdout.fileno())
        with watch_scope:
            async with trio.open_nursery() as watchers:
                if stop is not None:
                    watchers.start_soon(watch, stop, "stopped")
                if kill is not None:
                    watchers.start_soon(watch, kill, "killed")
        await leader_done.wait()
        cleaned = True
        await _cleanup(proc, grace, kill, marker, since)
        if drain > 0:
            pump_scope.deadline = trio.current_time() + drain
        else:
            pump_scope.cancel()

    try:
        async with trio.open_nursery() as nursery:
            try:
                proc = await nursery.start(runner)
            except OSError as exc:  # raised bare below, not wrapped in this nursery's group
                spawn_error = exc
            if proc is not None:
                await follow(nursery, proc)
    finally:
        # Cancelled from outside (or crashed): the nursery has waited for run_process, which
        # delivered the cancel and reaped the leader. End what is left; the error goes on.
        with trio.CancelScope(shield=True):
            if proc is not None and not cleaned:
                await _cleanup(proc, grace, kill, marker, since)
            if proc is not None:
                spawned(proc.pid, alive=False)
            if proc is not None and proc.stdout is not None:
                await proc.stdout.aclose()
        if splitter is not None:
            splitter.flush()
    if spawn_error is not None:
        raise spawn_error
    assert proc is not None
    assert proc.returncode is not None
    return ChildResult(
        returncode=proc.returncode,
        timed_out=bool(run_scope.cancelled_caught and not why),
        stopped=bool(why),
        duration=time.monotonic() - started,
    )


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
        await _term_grace_kill(proc.pid, grace, kill)
        if marker is not None:
            await trio.to_thread.run_sync(partial(end_marked_processes, *marker, grace))
        await trio.to_thread.run_sync(partial(end_adopted, since, grace))


def run_child_blocking(argv: Sequence[str], **options: Any) -> ChildResult:
    """:func:`run_child` for synchronous code outside trio (a CLI, a worker thread)."""
    return trio.run(partial(run_child, argv, **options))
