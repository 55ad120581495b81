"""``run_process_here``: like ``trio.run_process`` under ``nursery.start`` but forked in the
calling thread: stdin fed and closed, stdout a stream of the started process, a cancel
delivered until the child is reaped, a spawn failure raised with nothing left open."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import trio

from forgeflare.platform._spawnhere import run_process_here

PY = sys.executable


async def _never(proc: trio.Process) -> None:
    raise AssertionError("no cancel was asked for")


async def _read_all(stream: trio.abc.ReceiveStream) -> bytes:
    out = b""
    while chunk := await stream.receive_some():
        out += chunk
    return out


async def test_stdin_is_fed_and_stdout_read_from_the_started_process() -> None:
    async with trio.open_nursery() as nursery:
        proc = await nursery.start(
            lambda task_status: run_process_here(
                [PY, "-c", "import sys; sys.stdout.write(sys.stdin.read().upper())"],
                stdin=b"the prompt",
                stdout=subprocess.PIPE,
                deliver_cancel=_never,
                task_status=task_status,
            )
        )
        assert proc.stdout is not None
        assert await _read_all(proc.stdout) == b"THE PROMPT"
    assert proc.returncode == 0


async def test_the_fork_happens_in_the_calling_thread(tmp_path: Path) -> None:
    # A child's parent-death signal follows the forking thread: it must be this one, which
    # lives as long as trio.run does (not a trio worker thread, which ends when idle). The
    # child is a copy of the forking thread: its thread id is that thread's.
    noted = tmp_path / "forked-by"

    def note() -> None:
        noted.write_text(str(threading.get_ident()))

    await run_process_here(
        [PY, "-c", "pass"], stdin=None, stdout=None, deliver_cancel=_never, preexec_fn=note
    )
    assert int(noted.read_text()) == threading.get_ident()


async def test_a_cancel_is_delivered_and_the_child_reaped() -> None:
    delivered: list[int] = []

    async def terminate(proc: trio.Process) -> None:
        delivered.append(proc.pid)
        proc.send_signal(signal.SIGTERM)

    async with trio.open_nursery() as nursery:
        proc = await nursery.start(
            lambda task_status: run_process_here(
                [PY, "-c", "import time; time.sleep(600)"],
                stdin=None,
                stdout=None,
                deliver_cancel=terminate,
                task_status=task_status,
            )
        )
        nursery.cancel_scope.cancel()
    assert delivered == [proc.pid]
    assert proc.returncode == -signal.SIGTERM


@pytest.mark.linux_only("/proc/self/fd")
async def test_a_spawn_failure_raises_and_leaves_no_pipe_open() -> None:
    before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(FileNotFoundError):
        await run_process_here(
            ["/nonexistent/agent"], stdin=b"x", stdout=subprocess.PIPE, deliver_cancel=_never
        )
    assert set(os.listdir("/proc/self/fd")) <= before


async def test_a_child_that_does_not_read_its_stdin_is_no_error() -> None:
    await run_process_here(
        [PY, "-c", "import os; os.close(0)"],
        stdin=b"x" * 1_000_000,
        stdout=subprocess.DEVNULL,
        deliver_cancel=_never,
    )
