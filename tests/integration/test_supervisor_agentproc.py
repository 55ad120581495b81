"""Child supervision: process groups, deadlines, stop requests, cancellation, reaping."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import trio
import trio.testing

from forgeflare.supervisor.agents import ChildResult, StopControl, exit_status, supervise
from supervisor_agents.project import alive

PY = sys.executable
# A child that starts a grandchild in the same group, reports both pids, then waits for ever.
FAMILY = (
    "import subprocess, sys, time\n"
    "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
    "print(__import__('os').getpid(), c.pid, flush=True)\n"
    "time.sleep(600)\n"
)


def pids_of(lines: list[bytes]) -> list[int]:
    return [int(p) for p in lines[0].split()]


async def wait_gone(pids: list[int]) -> None:
    # A bound on polling, not a timing claim: generous, as the machine may be loaded.
    with trio.fail_after(120):
        while any(alive(p) for p in pids):
            await trio.sleep(0.02)


async def test_stdin_in_output_out(tmp_path: Path) -> None:
    lines: list[bytes] = []
    big = b"x" * 300_000  # more than a pipe buffer: fed by its own task
    result = await supervise(
        [
            PY,
            "-c",
            "import sys; d = sys.stdin.buffer.read(); print(len(d)); "
            "sys.stderr.write('no newline at end')",
        ],
        cwd=tmp_path,
        env=dict(os.environ),
        stdin=big,
        on_line=lines.append,
    )
    assert result == ChildResult(0, False, False, result.duration)
    assert lines == [b"300000\n", b"no newline at end"]
    assert exit_status(result) == 0


async def test_exit_status_conventions(tmp_path: Path) -> None:
    result = await supervise([PY, "-c", "raise SystemExit(7)"], cwd=tmp_path, env={})
    assert (result.exit_code, exit_status(result)) == (7, 7)
    result = await supervise(
        [PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"], cwd=tmp_path, env={}
    )
    assert (result.exit_code, exit_status(result)) == (None, 137)


async def test_deadline_kills_the_whole_group(tmp_path: Path) -> None:
    lines: list[bytes] = []
    result = await supervise(
        [PY, "-c", FAMILY], cwd=tmp_path, env={}, timeout=1.0, grace=0.5, on_line=lines.append
    )
    assert result.timed_out
    assert exit_status(result) == 124
    await wait_gone(pids_of(lines))


async def test_stop_then_kill(tmp_path: Path) -> None:
    stop = StopControl()
    lines: list[bytes] = []
    code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n" + FAMILY
    got: list[ChildResult] = []

    async def run() -> None:
        got.append(
            await supervise(
                [PY, "-c", code], cwd=tmp_path, env={}, grace=60, stop=stop, on_line=lines.append
            )
        )

    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run)
            while not lines:
                await trio.sleep(0.02)
            stop.request("SIGINT")
            assert stop.signal_name == "SIGINT"
            await trio.testing.wait_all_tasks_blocked()  # TERM sent (and ignored), grace running
            stop.request("SIGINT")
    assert got[0].stopped
    assert got[0].exit_code is None
    assert exit_status(got[0]) == 137
    await wait_gone(pids_of(lines))


async def test_cancellation_kills_reaps_and_propagates(tmp_path: Path) -> None:
    lines: list[bytes] = []
    with trio.move_on_after(120) as outer:
        async with trio.open_nursery() as nursery:

            async def run() -> None:
                await supervise([PY, "-c", FAMILY], cwd=tmp_path, env={}, on_line=lines.append)
                raise AssertionError("supervise returned although cancelled")

            nursery.start_soon(run)
            while not lines:
                await trio.sleep(0.02)
            nursery.cancel_scope.cancel()
    assert not outer.cancelled_caught
    await wait_gone(pids_of(lines))


async def test_missing_program_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        await supervise([str(tmp_path / "nope")], cwd=tmp_path, env={})


def test_escalated_control_waits_for_a_further_request() -> None:
    stop = StopControl()
    stop.request("SIGTERM")
    view = stop.escalated()
    assert not view.stop.is_set()
    stop.request("SIGTERM")
    assert view.stop.is_set()
    assert view.kill.is_set()


async def test_lifecycle_hook_descendant_in_its_own_session_ends_with_it(tmp_path: Path) -> None:
    from forgeflare.supervisor.run._lifecycle import HookStatus, run_lifecycle_hook

    hooks = tmp_path / "hooks"
    hooks.mkdir()
    script = hooks / "finished"
    script.write_text("#!/bin/bash\nsetsid sleep 600 > /dev/null 2>&1 &\necho $! > child\n")
    script.chmod(0o755)
    result = await run_lifecycle_hook(
        "finished", hooks_dir=hooks, cwd=tmp_path, env=dict(os.environ), timeout=30
    )
    assert result.status is HookStatus.OK
    await wait_gone([int((tmp_path / "child").read_text())])
