"""Run one child (the agent or a lifecycle hook) in its own process group, the trio way.

The child gets a new session (so Ctrl+C on the terminal reaches only the supervisor, which
decides what to forward), its stdin is fed from bytes and closed, and its stdout and stderr are
one stream handed line by line to a callback. It ends one of four ways: it exits; its deadline
passes (TERM to the group, a grace period, KILL); a stop is requested (same, and a second
request kills at once); or the calling task is cancelled (the group is killed at once, in a
shielded scope, and ``Cancelled`` propagates). In every case the child is reaped and whatever
is left of its group is killed: an iteration leaves no process behind.
"""

from __future__ import annotations

import math
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import trio

from forgeflare._process import kill_group

__all__ = ["ChildResult", "StopControl", "exit_status", "supervise"]

# After the child is gone, how long its output may keep flowing from descendants that left
# its group (setsid) before we stop reading: they can hold the pipe open forever.
_DRAIN_BOUND = 2.0


class StopControl:
    """Ctrl+C / SIGTERM state shared by the loop and every child it runs.

    ``stop`` is set by the first signal (terminate children gracefully, then finish as
    ``manual``); ``kill`` by the second (kill at once).
    """

    def __init__(self) -> None:
        self.stop = trio.Event()
        self.kill = trio.Event()
        self.signal_name: str | None = None

    def request(self, name: str) -> None:
        """Record one stop request (a signal named ``name``)."""
        if self.stop.is_set():
            self.kill.set()
        else:
            self.signal_name = name
            self.stop.set()

    def escalated(self) -> StopControl:
        """A control that ends a child only on a *further* request (for the finished hook)."""
        view = StopControl()
        view.stop = view.kill = self.kill
        return view


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


async def _feed(proc: trio.Process, data: bytes) -> None:
    assert proc.stdin is not None
    try:
        if data:
            await proc.stdin.send_all(data)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass  # the child exited or closed stdin without reading all of it: its business
    finally:
        with trio.CancelScope(shield=True):
            await proc.stdin.aclose()


async def _pump(proc: trio.Process, on_line: Callable[[bytes], None]) -> None:
    assert proc.stdout is not None
    buf = b""
    try:
        while True:
            chunk = await proc.stdout.receive_some(65536)
            if not chunk:
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                on_line(line + b"\n")
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass
    finally:
        if buf:
            on_line(buf)


async def _terminate(proc: trio.Process, *, grace: float, kill: trio.Event | None) -> None:
    """TERM the group, wait up to ``grace`` (or until ``kill``), KILL it, reap the child."""
    kill_group(proc.pid, signal.SIGTERM)
    with trio.move_on_after(grace):
        async with trio.open_nursery() as nursery:

            async def wait_exit() -> None:
                await proc.wait()
                nursery.cancel_scope.cancel()

            async def wait_kill() -> None:
                if kill is not None:
                    await kill.wait()
                    nursery.cancel_scope.cancel()

            nursery.start_soon(wait_exit)
            nursery.start_soon(wait_kill)
    kill_group(proc.pid, signal.SIGKILL)
    await proc.wait()


async def supervise(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin: bytes = b"",
    timeout: float | None = None,
    grace: float = 10.0,
    stop: StopControl | None = None,
    on_line: Callable[[bytes], None] = lambda _line: None,
    on_start: Callable[[int], None] = lambda _pid: None,
) -> ChildResult:
    """Run ``argv`` to its end as described in the module docstring.

    ``timeout`` of ``None`` or 0 means no deadline. ``on_start`` gets the child's pid (its
    process group id) as soon as it runs. Raises ``OSError`` when the program cannot start.
    """
    started = time.monotonic()
    deadline = math.inf if not timeout else trio.current_time() + timeout
    proc = await trio.lowlevel.open_process(
        list(argv),
        cwd=str(cwd),
        env=dict(env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    on_start(proc.pid)
    timed_out = stopped = False
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_feed, proc, stdin)
            nursery.start_soon(_pump, proc, on_line)
            async with trio.open_nursery() as waiters:

                async def wait_exit() -> None:
                    await proc.wait()
                    waiters.cancel_scope.cancel()

                async def wait_stop() -> None:
                    nonlocal stopped
                    if stop is not None:
                        await stop.stop.wait()
                        stopped = True
                        waiters.cancel_scope.cancel()

                waiters.start_soon(wait_exit)
                waiters.start_soon(wait_stop)
                waiters.cancel_scope.deadline = deadline
            if proc.returncode is None:
                timed_out = not stopped
                await _terminate(proc, grace=grace, kill=stop.kill if stop else None)
            # Descendants may outlive the leader: end them, then drain what they wrote.
            kill_group(proc.pid, signal.SIGKILL)
            nursery.cancel_scope.deadline = trio.current_time() + _DRAIN_BOUND
    finally:
        if proc.returncode is None:
            # Cancelled from outside (or crashed): kill at once, reap, let the error go on.
            with trio.CancelScope(shield=True):
                kill_group(proc.pid, signal.SIGKILL)
                await proc.wait()
        kill_group(proc.pid, signal.SIGKILL)
    assert proc.returncode is not None
    return ChildResult(
        returncode=proc.returncode,
        timed_out=timed_out,
        stopped=stopped,
        duration=time.monotonic() - started,
    )
