"""``forgeflare watch`` against a live loop: piped (plain lines) and in a pseudo-terminal, both on
one loop at once; on a finished or dead run, in the test process. The loop whose log is read
while it grows runs in the test process too."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest
import trio

from cli_inprocess import forgeflare_here
from supervisor_agents.project import Done, Project, agent_cmd, base_env, wait_for

# Waits for the test's go-ahead file: the loop is live, mid-iteration, while the test watches.
AGENT = (
    'sh -c \'echo "[tool] Bash: waiting for go"; '
    'while [ ! -e "$FRESHER_PROJECT_DIR/go" ]; do sleep 0.02; done\''
)


def start_loop(project: Project) -> subprocess.Popen[str]:
    proc = project.popen("--agent-cmd", AGENT, "--max-iterations", "2", "--mode", "planning")
    wait_for(lambda: any((d / "run.json").exists() for d in project.run_dirs()))
    return proc


def finished_run(project: Project) -> Done:
    """An earlier run, finished (max_iterations), by the loop in this process: what watch must
    not show, or must show once no loop starts."""
    return trio.run(
        project.arun, "--agent-cmd", "true", "--max-iterations", "1", "--mode", "planning"
    )


def watch_args(project: Project) -> list[str]:
    return ["watch", "--dir", str(project.dir), "--interval", "0.05"]


def watch_argv(project: Project) -> list[str]:
    return [sys.executable, "-m", "forgeflare", *watch_args(project)]


RUNNING = "running · Bash waiting for go"


@dataclass
class Watched:
    """One live loop, watched from its first iteration to its end by two ``forgeflare watch``
    processes at once: one piped, one in a pseudo-terminal."""

    piped_before: list[str]
    """The piped watcher's lines up to the one saying the agent is waiting for its go."""
    piped_rest: str
    """What the piped watcher printed after that line, to its end."""
    piped_code: int
    terminal: str
    """All the terminal watcher drew."""
    terminal_saw_it_wait: bool
    """The terminal showed the agent waiting before the test let it go on."""
    terminal_code: int
    loop_code: int


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> Watched:
    """The live loop both watch tests read (read-only): the agent goes on once both watchers
    showed it waiting; both are read until they end (bounded: 120 s)."""
    project = Project(tmp_path_factory.mktemp("watched"))
    loop = start_loop(project)
    piped = subprocess.Popen(watch_argv(project), stdout=subprocess.PIPE, env=base_env())
    leader, follower = pty.openpty()
    terminal = subprocess.Popen(
        watch_argv(project), stdout=follower, stderr=follower, env={**base_env(), "TERM": "xterm"}
    )
    os.close(follower)
    assert piped.stdout is not None
    pipe = piped.stdout.fileno()
    got = {pipe: b"", leader: b""}
    reading = set(got)
    went = False
    deadline = time.monotonic() + 120
    while reading and time.monotonic() < deadline:
        ready, _, _ = select.select(list(reading), [], [], 0.1)
        for fd in ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # a pseudo-terminal's leader, once its follower is closed
                chunk = b""
            if not chunk:
                reading.discard(fd)
            got[fd] += chunk
        if not went and RUNNING.encode() in got[pipe] and b"waiting for go" in got[leader]:
            (project.dir / "go").touch()
            went = True
    os.close(leader)
    lines = got[pipe].decode().splitlines(keepends=True)
    upto = next((n + 1 for n, line in enumerate(lines) if RUNNING in line), len(lines))
    return Watched(
        piped_before=lines[:upto],
        piped_rest="".join(lines[upto:]),
        piped_code=piped.wait(timeout=30),
        terminal=got[leader].decode("utf-8", "replace"),
        terminal_saw_it_wait=went,
        terminal_code=terminal.wait(timeout=30),
        loop_code=loop.wait(timeout=30),
    )


def test_watch_piped_follows_a_live_loop(watched: Watched) -> None:
    lines, rest = watched.piped_before, watched.piped_rest
    assert lines[-1].split(" ", 1)[1].startswith(f"iteration 1/2 · {RUNNING}")
    assert watched.piped_code == 0
    assert watched.loop_code == 10
    assert (
        rest.strip()
        .splitlines()[-1]
        .endswith("finished: max_iterations · tokens 0 · cost unknown · commits 0")
    )
    # one timestamped line per change, no terminal control codes
    assert all(line[:4].isdigit() for line in (lines + rest.splitlines()) if line.strip())
    assert "\x1b[" not in rest


def test_watch_in_a_terminal_redraws_until_the_end(watched: Watched) -> None:
    assert watched.terminal_code == 0
    assert watched.loop_code == 10
    text = watched.terminal
    assert watched.terminal_saw_it_wait
    assert "iteration 1/2" in text
    assert "finished: max_iterations" in text


# Counts its iterations in a file, says which one it is, and waits for that iteration's go file.
COUNTING_AGENT = (
    "sh -c 'n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n > count; "
    'echo "agent says $n"; '
    'while [ ! -e "$FRESHER_PROJECT_DIR/go.$n" ]; do sleep 0.02; done\''
)
ISO_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|\+00:00) ")


async def _until(predicate: Callable[[], bool]) -> None:
    """Poll ``predicate`` while the loop runs in this process (bounded: 120 s)."""
    with trio.fail_after(120):
        while not predicate():
            await trio.sleep(0.02)


def _holds(path: Path, text: str) -> bool:
    return path.exists() and text in path.read_text()


async def test_loop_log_grows_across_iterations_with_a_utc_time_on_every_line(
    tmp_path: Path,
) -> None:
    # The loop runs in this process (its log is the point; the agent stays a real child).
    project = Project(tmp_path)
    result: list[Done] = []

    async def loop() -> None:
        args = ("--agent-cmd", COUNTING_AGENT, "--max-iterations", "2", "--mode", "planning")
        result.append(await project.arun(*args))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(loop)
        await _until(lambda: any((d / "loop.log").exists() for d in project.run_dirs()))
        (run_dir,) = project.run_dirs()
        log = run_dir / "loop.log"
        await _until(lambda: _holds(log, "agent says 1"))
        first = log.read_text()
        inode = log.stat().st_ino
        (project.dir / "go.1").touch()
        await _until(lambda: _holds(log, "agent says 2"))
        second = log.read_text()
        # One file for `tail -f`: the same file, appended to, not rewritten per iteration.
        assert log.stat().st_ino == inode
        assert second.startswith(first)
        assert len(second) > len(first)
        (project.dir / "go.2").touch()
    (done,) = result
    assert done.code == 10, done.stderr
    text = log.read_text()
    assert text.startswith(second)
    lines = text.splitlines()
    assert lines
    bad = [line for line in lines if not ISO_UTC.match(line)]
    assert bad == []
    assert text.index("agent says 1") < text.index("agent says 2")


def test_watch_waits_for_the_run_the_lock_announces(tmp_path: Path) -> None:
    from forgeflare._clock import utc_timestamp
    from forgeflare.supervisor.records import RunRecord, RunStore
    from forgeflare.supervisor.run._preflight import project_lock

    project = Project(tmp_path)
    done = finished_run(project)
    assert done.code == 10, done.stderr  # an earlier run, finished
    # A loop holds the lock (this test, as `forgeflare loop` does) and has not opened its run;
    # its id sorts before the earlier run's, so "the newest run" would be the wrong one.
    with project_lock(project.dir):
        watcher = subprocess.Popen(
            watch_argv(project), stdout=subprocess.PIPE, text=True, env=base_env()
        )
        new = RunStore(project.dir / ".fresher" / "runs" / "20000101-000000-beef")
        new.create()
        record = RunRecord(
            run_id="20000101-000000-beef",
            mode="planning",
            project_dir=str(project.dir),
            started_at=utc_timestamp(),
            max_iterations=1,
            supervisor_pid=os.getpid(),
        )
        new.save(record)
        wait_for(lambda: (new.dir / "run.json").exists())
        record.finished_at, record.finish_type = utc_timestamp(), "stopped"
        new.save(record)
        out, _ = watcher.communicate(timeout=60)
    assert watcher.returncode == 0
    assert "finished: stopped" in out
    assert "max_iterations" not in out  # never the earlier run


def _read_until(stream: IO[str], needle: str, *, timeout: float = 120.0) -> list[str]:
    """Lines of ``stream`` up to the one holding ``needle`` (bounded: a select per line)."""
    deadline = time.monotonic() + timeout
    lines: list[str] = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], 0.5)
        if not ready:
            continue
        line = stream.readline()
        if not line:
            break
        lines.append(line)
        if needle in line:
            return lines
    raise AssertionError(f"{needle!r} not seen; got {lines}")


def test_watch_started_first_follows_the_loop_started_after_it(tmp_path: Path) -> None:
    project = Project(tmp_path)
    done = finished_run(project)
    assert done.code == 10, done.stderr  # an earlier run, finished: what watch used to show
    watcher = subprocess.Popen(
        [*watch_argv(project), "--wait", "10m"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=base_env(),
    )
    assert watcher.stdout is not None
    assert watcher.stderr is not None
    said = _read_until(watcher.stderr, "waiting up to 10m")
    assert said[-1].strip() == (
        f"waiting up to 10m 00s for a loop to take {project.dir / '.fresher' / 'loop.lock'} "
        "(--wait 0 shows the newest run at once)"
    )
    # Only now the loop (a real process), with the scripted agent: its final reports 100 tokens.
    agent = agent_cmd("--final=end_turn")
    loop = project.popen("--agent-cmd", agent, "--max-iterations", "1", "--mode", "planning")
    out, err = watcher.communicate(timeout=120)
    assert loop.wait(timeout=120) == 10, loop.stderr.read() if loop.stderr else ""
    assert watcher.returncode == 0, err
    assert len(project.run_dirs()) == 2
    last = out.strip().splitlines()[-1]
    # the new run (the agent's 100 tokens), never the earlier one (no tokens)
    assert last.split(" ", 1)[1].startswith("iteration 1/1 · finished: max_iterations · tokens 100")
    assert out.count("finished") == 1  # the earlier run was never shown


def watch_once(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    """``forgeflare watch ARGS`` to its end (a finished or dead run), exit 0: in the test
    process, as no live loop is watched."""
    done = forgeflare_here(project.dir, *watch_args(project), *args)
    assert done.returncode == 0, done.stderr
    return done


def test_watch_with_no_loop_starting_shows_the_newest_run_after_its_wait(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    done = finished_run(project)
    assert done.code == 10, done.stderr
    watched = watch_once(project, "--wait", "1s")
    lock = project.dir / ".fresher" / "loop.lock"
    assert watched.stderr.splitlines() == [
        f"waiting up to 1s for a loop to take {lock} (--wait 0 shows the newest run at once)",
        f"no loop took {lock} in 1s",
    ]
    assert "finished: max_iterations · tokens 0" in watched.stdout
    at_once = watch_once(project, "--wait", "0")
    assert at_once.stderr == ""
    assert at_once.stdout.split(" ", 1)[1] == watched.stdout.split(" ", 1)[1]  # past the time


def test_watch_ends_on_a_run_whose_loop_died(tmp_path: Path) -> None:
    from forgeflare._clock import utc_timestamp
    from forgeflare.supervisor.records import RunRecord, RunStore

    project = Project(tmp_path)
    dead = subprocess.Popen(["true"])
    dead.wait()
    store = RunStore(project.dir / ".fresher" / "runs" / "20260101-000000-dead")
    store.create()
    store.save(
        RunRecord(
            run_id="20260101-000000-dead",
            mode="building",
            project_dir=str(project.dir),
            started_at=utc_timestamp(),
            max_iterations=3,
            supervisor_pid=dead.pid,
            supervisor_started=1.0,  # long ago: even a reused pid is not this loop
        )
    )
    watched = watch_once(project, "--wait", "0")
    assert "finished: dead — forgeflare loop --resume" in watched.stdout
