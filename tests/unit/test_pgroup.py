"""Process groups and markers: the marker option on a forgeflare child's argv, finding marked
processes, a group ended with grace then KILL, liveness by pid and start time."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid

import pytest

from forgeflare.platform import end_popen, popen_in_group
from forgeflare.platform._pgroup import (
    MARKER_XOPTION,
    _own_children,
    group_alive,
    is_alive,
    kill_group,
    marked_processes,
    marker_argv,
    process_started,
)
from platform_support import alive


@pytest.mark.parametrize(
    ("argv", "marked"),
    [
        (["/py", "-P", "-m", "forgeflare", "run"], True),
        (["/py", "-m", "forgeflare", "loop"], True),
        (["bash", "-c", "forgeflare -m"], False),
        (["/bin/agent"], False),
    ],
)
def test_only_a_python_started_forgeflare_gets_the_option(argv: list[str], marked: bool) -> None:
    out = marker_argv(argv, "N", "v")
    assert (out[1:3] == ["-X", f"{MARKER_XOPTION}=N=v"]) is marked
    assert [a for a in out if not a.startswith(("-X", MARKER_XOPTION))] == [
        a for a in argv if a != "-X"
    ]


def test_popen_in_group_ended_with_grace_then_kill() -> None:
    code = "trap '' TERM; sleep 600 & echo $!; wait"
    proc = popen_in_group(["bash", "-c", code], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    child = int(proc.stdout.readline())
    assert os.getpgid(proc.pid) == proc.pid
    end_popen(proc, grace=0.3)
    assert proc.returncode == -9
    deadline = time.monotonic() + 60
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.01)  # bounded polling: the kernel delivers the KILL asynchronously
    assert not alive(child)
    proc.stdout.close()
    end_popen(proc, grace=0.3)  # idempotent


def test_end_popen_reaps_a_child_that_exited() -> None:
    proc = popen_in_group(["true"])
    while alive(proc.pid):  # exited, still unreaped: a zombie
        time.sleep(0.01)
    end_popen(proc, grace=5)
    assert proc.returncode == 0


def test_a_marked_child_is_found_and_an_unmarked_one_is_not() -> None:
    value = uuid.uuid4().hex
    env = {**os.environ, "FF_PGROUP_TEST": value}
    hold = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    marked = subprocess.Popen(hold, env=env, stdin=subprocess.PIPE)
    plain = subprocess.Popen(hold, stdin=subprocess.PIPE)
    try:
        found = marked_processes("FF_PGROUP_TEST", value)
        assert marked.pid in found
        assert plain.pid not in found
        assert marked_processes("FF_PGROUP_TEST", "other") == []
    finally:
        for proc in (marked, plain):
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait()


def test_liveness_is_the_same_process_by_its_start_time() -> None:
    me = process_started(os.getpid())
    assert me is not None
    assert is_alive(os.getpid(), None)
    assert is_alive(os.getpid(), me)
    assert not is_alive(os.getpid(), me - 60)  # a pid reused by another process
    assert not is_alive(None, None)
    assert process_started(None) is None


@pytest.mark.parametrize("pid", [0, -1])
def test_no_start_time_for_a_pid_no_process_has(pid: int) -> None:
    # -1 is what lock_holder says of a lock taken before its holder wrote its pid: a watch
    # started just before its loop read it and died on psutil's ValueError.
    assert process_started(pid) is None
    assert not is_alive(pid, None)


def test_a_killed_group_is_not_alive() -> None:
    proc = popen_in_group(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    assert group_alive(proc.pid)
    assert kill_group(proc.pid)
    proc.wait()
    assert not group_alive(proc.pid)
    assert not kill_group(proc.pid)  # already gone: said, not raised
    assert proc.stdin is not None
    proc.stdin.close()


@pytest.mark.linux_only("/proc/self/task/TID/children")
def test_own_children_are_every_threads_children_as_psutil_sees_them() -> None:
    """The cheap list of children (one small read per thread) that ``end_adopted`` looks at
    first holds what psutil's scan of every process finds: a child started by a worker
    thread is that thread's in /proc, and is still listed."""
    import psutil

    started: list[subprocess.Popen[bytes]] = [subprocess.Popen(["sleep", "600"])]
    worker_done, release = threading.Event(), threading.Event()

    def worker() -> None:
        started.append(subprocess.Popen(["sleep", "600"]))
        worker_done.set()
        release.wait(60)  # alive while we look: the child stays this thread's

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        assert worker_done.wait(60)
        mine = {p.pid for p in started}
        seen = _own_children()
        assert seen is not None
        assert mine <= seen
        assert seen == {p.pid for p in psutil.Process().children()}
    finally:
        release.set()
        thread.join()
        for proc in started:
            proc.kill()
            proc.wait()
    assert not mine & (_own_children() or set())
