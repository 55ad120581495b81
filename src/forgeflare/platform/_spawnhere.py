"""``trio.run_process`` for a child that must die with this process, started from this thread.

Linux's ``PR_SET_PDEATHSIG`` (:func:`~forgeflare.platform._pgroup.term_on_parent_death`)
fires when the *thread* that forked the child ends, not the process. ``trio.run_process`` forks
in one of
trio's worker threads, and trio ends a worker after 10 s without work: the agent then got
SIGTERM in the middle of its iteration, at random, whenever its spawning thread was the one
left idle. :func:`run_process_here` forks in the calling thread (the one running
``trio.run``, alive as long as the loop is) and otherwise behaves like ``trio.run_process``
under ``nursery.start``: ``stdin`` bytes are fed and closed, ``stdout=PIPE`` is readable from
the started process, and a cancellation goes through ``deliver_cancel`` until the child is
reaped.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import trio

__all__ = ["run_process_here"]


def _create(popen: subprocess.Popen[bytes], stdout: trio.lowlevel.FdStream | None) -> trio.Process:
    # trio.Process has no public constructor; ``_create`` is how trio itself builds one (and
    # how its wait() gets a pidfd on Linux). Its stdin is fed here, not through it.
    create: Callable[..., trio.Process] = trio.Process._create
    return create(popen, None, stdout, None)


async def run_process_here(
    argv: Sequence[str],
    *,
    stdin: bytes | None,
    stdout: int | None,
    deliver_cancel: Callable[[trio.Process], Awaitable[object]],
    task_status: trio.TaskStatus[trio.Process] = trio.TASK_STATUS_IGNORED,
    **options: Any,
) -> None:
    """Run ``argv`` to its end; ``stdout`` is ``subprocess.PIPE`` (a trio stream on the
    started process) or what ``subprocess.Popen`` takes. ``options`` go to ``Popen``."""
    close_after: list[int] = []
    stdin_stream: trio.lowlevel.FdStream | None = None
    stdout_stream: trio.lowlevel.FdStream | None = None
    child_stdin: int = subprocess.DEVNULL
    child_stdout: int | None = stdout
    try:
        if stdin is not None:
            child_stdin, write_end = os.pipe()
            close_after.append(child_stdin)
            stdin_stream = trio.lowlevel.FdStream(write_end)
        if stdout == subprocess.PIPE:
            read_end, child_stdout = os.pipe()
            close_after.append(child_stdout)
            stdout_stream = trio.lowlevel.FdStream(read_end)
        # A fork of this process takes a few milliseconds: done here, not in a worker thread.
        popen = subprocess.Popen(argv, stdin=child_stdin, stdout=child_stdout, **options)  # noqa: ASYNC220
    except BaseException:
        for stream in (stdin_stream, stdout_stream):
            if stream is not None:
                await stream.aclose()
        raise
    finally:
        for fd in close_after:
            with contextlib.suppress(OSError):
                os.close(fd)
    proc = _create(popen, stdout_stream)

    async def feed(stream: trio.lowlevel.FdStream, data: bytes) -> None:
        async with stream:
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await stream.send_all(data)

    async with trio.open_nursery() as nursery:
        try:
            if stdin_stream is not None:
                nursery.start_soon(feed, stdin_stream, stdin or b"")
            task_status.started(proc)
            await proc.wait()
        except BaseException:
            with trio.CancelScope(shield=True):
                killer_scope = trio.CancelScope(shield=True)

                async def killer() -> None:
                    with killer_scope:
                        await deliver_cancel(proc)

                nursery.start_soon(killer)
                await proc.wait()
                killer_scope.cancel()
                raise
