"""Nothing left behind, nothing lost: ``forgeflare loop`` as real processes under faults.

A ``setsid`` descendant killed with its agent, a killed supervisor resumed, Ctrl+C twice,
``--resume`` on a live run, a full disk, and the supervisor's git and hook output. Every wait
is a bounded poll of a condition (``wait_for``), never a sleep that hopes a process got there.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from agent_support import with_one_call
from cli_inprocess import forgeflare_here
from forgeflare.templates import init_project
from mockapi_support import MockAPI, MockServer
from project_support import run_text
from supervisor_agents.project import (
    Done,
    Project,
    agent_cmd,
    alive,
    base_env,
    wait_for,
)

ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z ")


def env_for(server: MockServer, **extra: str) -> dict[str, str]:
    return base_env(ANTHROPIC_API_URL=server.url, ANTHROPIC_API_KEY="test-key", **extra)


def unique_tag() -> str:
    """A sleep argument no other process on the machine carries: ``sleep 3712.0418``."""
    return f"{3000 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 10**6:06d}"


def survivors(*needles: str) -> list[str]:
    """Live processes whose command line or environment holds one of ``needles``.

    The environment is where a run's marker lives (``FRESHER_RUN_ID=<run id>``): it finds the
    descendants that left the agent's process group, however they detached.
    """
    found = []
    for proc in psutil.process_iter(["pid", "cmdline", "status"]):
        if proc.pid == os.getpid() or proc.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        cmdline = " ".join(proc.info["cmdline"] or ())
        try:
            environ = proc.environ()
        except (psutil.Error, OSError):
            environ = {}
        if any(n in cmdline or n in environ.values() for n in needles):
            found.append(f"{proc.pid}: {cmdline[:120]}")
    return found


def run_id_of(project: Project) -> str:
    wait_for(lambda: bool(project.run_dirs()))
    return project.run_dirs()[0].name


def current_agent_pid(project: Project) -> int:
    pid: list[int] = []

    def known() -> bool:
        try:
            current = project.record().get("current") or {}
        except (OSError, ValueError):
            return False  # between two atomic writes a reader may find nothing yet
        if current.get("agent_pid"):
            pid.append(current["agent_pid"])
        return bool(pid)

    wait_for(known)
    return pid[0]


def stop_all(*procs: subprocess.Popen[str]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


# -- 1. no descendant survives an iteration ------------------------------------------------


@pytest.mark.linux_only("the setsid command is util-linux")
@pytest.mark.parametrize(
    "ending", ["agent exits", "timeout", "agent kill -9", "supervisor kill -9", "double ctrl-c"]
)
def test_a_setsid_descendant_never_outlives_its_iteration(
    tmp_path: Path, mock_api: MockAPI, ending: str
) -> None:
    """The agent's Bash tool runs ``setsid sleep`` (a new session: the group kill misses it),
    then the iteration ends: the agent's turn ends, the iteration timeout, ``kill -9`` of the
    agent (the loop goes on) or of the supervisor (``--resume``), or a double Ctrl+C."""
    project = Project(tmp_path)
    tag = unique_tag()
    command = (
        f"setsid sleep {tag} >/dev/null 2>&1 </dev/null & echo $! > detached.pid; "
        f'touch "$FRESHER_PROJECT_DIR/bash-ran"'
    )
    if ending != "agent exits":
        command += f"; sleep {tag}"  # the turn goes on until the iteration is ended
    server = mock_api(with_one_call("Bash", {"command": command}))
    env = env_for(server)
    bounds = ["--max-iterations", "1"]
    if ending == "timeout":
        bounds += ["--iteration-timeout", "8s"]
    loop = project.popen(*bounds, env=env)
    try:
        wait_for(lambda: (project.dir / "bash-ran").exists())
        run_id = run_id_of(project)
        if ending in ("agent exits", "timeout"):
            assert loop.wait(timeout=60) == 10
        elif ending == "agent kill -9":
            wait_for(lambda: len(survivors(tag)) >= 2)  # the detached sleep, the foreground one
            os.kill(current_agent_pid(project), signal.SIGKILL)
            assert loop.wait(timeout=60) == 10
        elif ending == "double ctrl-c":
            wait_for(lambda: len(survivors(tag)) >= 2)
            loop.send_signal(signal.SIGINT)
            said = project.run_dirs()[0] / "loop.log"
            wait_for(lambda: "SIGINT: stopping" in said.read_text())  # one signal at a time
            loop.send_signal(signal.SIGINT)
            assert loop.wait(timeout=60) == 130
        else:
            wait_for(lambda: len(survivors(tag)) >= 2)
            loop.kill()
            loop.wait()
            # The agent gets SIGTERM as its supervisor dies (it ends its turn and its Bash
            # command); whatever is left then, --resume ends.
            done = project.run("--resume", "--max-iterations", "1", env=env)
            assert done.code == 10, done.stderr
            assert project.record()["iterations"][0]["outcome"] == "killed"
    finally:
        stop_all(loop)
    assert (project.dir / "detached.pid").read_text().strip().isdigit()
    assert survivors(tag, run_id) == []
    if ending == "timeout":
        assert project.record()["iterations"][0]["timed_out"] is True


# -- 2. Ctrl+C twice: the agent dies at once, `finished` still runs ------------------------

STUBBORN = (
    "import signal, sys, time\n"
    "signal.signal(signal.SIGTERM, lambda *a: open('got-term', 'w').close())\n"
    "sys.stdin.read()\nopen('ready', 'w').close()\n"
    "while True:\n    time.sleep(1)\n"
)
WAITING_FINISHED = (
    'cd "$FRESHER_PROJECT_DIR"; touch hook-started\n'
    "while [ ! -e go ]; do sleep 0.02; done\n"
    'echo "$FRESHER_FINISH_TYPE" > hook-done'
)


@pytest.mark.parametrize("then", ["hook ends", "third ctrl-c"])
def test_double_ctrl_c_kills_the_agent_but_finished_runs(tmp_path: Path, then: str) -> None:
    project = Project(tmp_path)
    script = project.write("stubborn.py", STUBBORN)
    project.hook("finished", WAITING_FINISHED)
    env = base_env(FRESHER_AGENT_KILL_GRACE="60", FRESHER_HOOK_TIMEOUT="60")
    loop = project.popen("--agent-cmd", f"{sys.executable} {script}", env=env)
    try:
        wait_for(lambda: (project.dir / "ready").exists())
        loop.send_signal(signal.SIGINT)
        wait_for(lambda: (project.dir / "got-term").exists())
        loop.send_signal(signal.SIGINT)  # the agent ignores TERM: this one kills it at once
        wait_for(lambda: (project.dir / "hook-started").exists() or loop.poll() is not None)
        if then == "hook ends":
            (project.dir / "go").touch()
        else:
            loop.send_signal(signal.SIGINT)  # a Ctrl+C while `finished` runs ends it
        code = loop.wait(timeout=30)
    finally:
        stop_all(loop)
    assert code == 130
    rec = project.record()
    assert rec["finish_type"] == "manual"
    assert rec["iterations"][0]["exit_code"] == 137  # killed at once, not after the grace
    (finished,) = [h for h in rec["hooks"] if h["name"] == "finished"]
    if then == "hook ends":
        assert (project.dir / "hook-done").read_text().strip() == "manual"
        assert finished["status"] == "ok"
    else:
        assert (project.dir / "hook-started").exists()
        assert not (project.dir / "hook-done").exists()
        assert finished["status"] != "ok"


# -- 3. --resume never takes over a live run -----------------------------------------------

WAIT_FOR_GO = "sh -c 'while [ ! -e \"$FRESHER_PROJECT_DIR/go\" ]; do sleep 0.02; done'"


def test_resume_refuses_a_live_run(tmp_path: Path) -> None:
    project = Project(tmp_path)
    first = project.popen("--agent-cmd", WAIT_FOR_GO, "--max-iterations", "1")
    try:
        wait_for(lambda: any((d / "iteration-001.log").exists() for d in project.run_dirs()))
        run_id = run_id_of(project)
        second = project.run("--resume", "--agent-cmd", WAIT_FOR_GO, "--max-iterations", "1")
        assert second.code == 2, second.stderr
        assert f"run {run_id} is still running, pid {first.pid}" in second.stderr
        assert len(second.stderr.strip().splitlines()) == 1, second.stderr
        (project.dir / "go").touch()
        assert first.wait(timeout=30) == 10
    finally:
        stop_all(first)
    rec = project.record()
    assert rec["resumes"] == 0
    assert [it["outcome"] for it in rec["iterations"]] == ["ok"]


# -- 4. a killed iteration keeps its commits and its log -----------------------------------


def git(project: Project, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=project.dir, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_a_killed_iteration_is_recorded_with_its_commits_and_log(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.git_init()
    start = git(project, "rev-parse", "HEAD")
    pidfile = project.dir / "pids"
    env = base_env(AGENT_PIDFILE=str(pidfile), FRESHER_SMART_TERMINATION="false")
    loop = project.popen(
        "--agent-cmd",
        agent_cmd("--commit@1", "--hang@1", "--final=end_turn"),
        "--max-iterations",
        "2",
        env=env,
    )
    try:
        wait_for(lambda: pidfile.exists() and len(pidfile.read_text().split()) == 2)
        # The iteration's starting HEAD is in the records before its agent started.
        started = [e for e in project.events() if e["event"] == "iteration_started"]
        assert [e["head"] for e in started] == [start]
        loop.kill()
        loop.wait()
    finally:
        stop_all(loop)
    committed = git(project, "rev-parse", "HEAD")
    assert committed != start
    orphans = [int(p) for p in pidfile.read_text().split()]
    done = project.run("--resume", env=env)  # the agent and its bounds as they started
    assert done.code == 10, done.stderr
    assert not any(alive(p) for p in orphans)
    rows = project.record()["iterations"]
    killed = rows[0]
    assert killed["outcome"] == "killed"
    assert killed["head_before"] == start
    # the agent's commit, then the loop's checkpoint of what it left (the pid file)
    assert killed["commits"] == 2
    assert killed["head_after"] == killed["checkpoint"]["sha"]
    assert git(project, "rev-parse", f"{killed['head_after']}~1") == committed
    logs = [row["log"] for row in rows]
    assert len(set(logs)) == len(logs) == 2, logs
    run_dir = project.run_dirs()[0]
    assert "agent iteration 1" in (run_dir / killed["log"]).read_text()
    assert "agent iteration 2" in (run_dir / rows[1]["log"]).read_text()


# -- 5. a full disk: finish properly, say once what failed ----------------------------------


def can_mount_tmpfs(where: Path) -> str | None:
    """``None`` when a tmpfs can be mounted here, else why not (the test is skipped)."""
    if sys.platform != "linux" or os.geteuid() != 0 or shutil.which("mount") is None:
        return "needs root on Linux to mount a small tmpfs"
    where.mkdir(parents=True, exist_ok=True)
    done = run_text(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(where)])
    return None if done.returncode == 0 else f"cannot mount a tmpfs: {done.stderr.strip()}"


@pytest.fixture
def small_tmpfs() -> Iterator[Callable[[Path], Path]]:
    """Mount a 512 KiB tmpfs on a folder (root on Linux), or skip saying why it cannot."""
    mounted: list[Path] = []

    def mount(where: Path) -> Path:
        why = can_mount_tmpfs(where)
        if why:
            pytest.skip(why)
        mounted.append(where)
        return where

    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(folder: Path) -> None:
    """Write zeros into ``folder`` until its file system is full."""
    with (folder / "filler").open("ab") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass


FILL = (
    'dd if=/dev/zero of="$FRESHER_LOG_DIR/../filler" bs=4k 2>/dev/null; '
    "echo 'output after the disk filled up'; echo more output"
)


def test_a_full_disk_finishes_the_run_and_runs_finished(
    tmp_path: Path, small_tmpfs: Callable[[Path], Path]
) -> None:
    project = Project(tmp_path)
    small_tmpfs(tmp_path / ".fresher" / "runs")
    project.hook("finished", 'echo "$FRESHER_FINISH_TYPE" > "$FRESHER_PROJECT_DIR/finish"')
    done = project.run("--agent-cmd", f"sh -c '{FILL}'", "--max-iterations", "3")
    assert done.code != 0
    assert "Traceback" not in done.stderr
    assert (project.dir / "finish").read_text().strip() == "error"
    # One line says what failed (the loop's own log may say it cannot write loop.log as well).
    failed = [line for line in done.stderr.splitlines() if "No space left on device" in line]
    assert [line for line in failed if "error:" in line and "cannot write" in line], done.stderr
    assert len(failed) <= 2, done.stderr
    rec = project.record()
    assert rec["finished_at"] is not None  # not left resumable
    assert rec["finish_type"] == "error"
    again = project.run("--resume", "--agent-cmd", "true")
    assert "no unfinished run" in again.stderr


HOOK_SCRIPTS = sorted(
    p.name
    for p in (
        Path(__file__).parents[2] / "src/forgeflare/templates/files/dot-forgeflare/hooks"
    ).glob("*.py")
)


@pytest.mark.parametrize("script", HOOK_SCRIPTS)
def test_scaffolded_hook_scripts_print_no_traceback_on_a_full_disk(
    tmp_path: Path, small_tmpfs: Callable[[Path], Path], script: str
) -> None:
    scaffold = tmp_path / "scaffold"
    scaffold.mkdir()
    init_project(scaffold)  # the scripts as `forgeflare init` writes them
    project = tmp_path / "project"
    fill(small_tmpfs(project / ".forgeflare"))
    event = {
        "event": "PostToolUse",
        "cwd": str(project),
        "tool": "Bash",
        "input": {"command": "pytest"},
        "is_error": False,
        "reason": "end_turn",
    }
    done = run_text(
        [sys.executable, str(scaffold / ".forgeflare" / "hooks" / script)],
        cwd=project,
        env=base_env(),
        input=json.dumps(event),
        timeout=30,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) <= 1, done.stderr


# -- 6. hooks.log keeps lifecycle hook output ----------------------------------------------


def test_hooks_log_keeps_lifecycle_hook_output_with_utc_times(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.hook("started", "echo hello from started")
    project.hook("next_iteration", 'echo "next $FRESHER_ITERATION"; echo oops >&2')
    project.hook("finished", 'echo "bye $FRESHER_FINISH_TYPE"')
    done = project.run("--agent-cmd", "echo agent output", "--max-iterations", "2")
    assert done.code == 10, done.stderr
    lines = (project.run_dirs()[0] / "hooks.log").read_text().splitlines()
    assert lines
    assert all(ISO_UTC.match(line) for line in lines), lines
    said = [ISO_UTC.sub("", line) for line in lines]
    for needle in ("hello from started", "next 1", "oops", "next 2", "bye max_iterations"):
        assert any(needle in line for line in said), (needle, said)
    assert not any("agent output" in line for line in said)


# -- 7. at most two git processes per iteration --------------------------------------------


def test_at_most_two_git_processes_per_iteration(tmp_path: Path) -> None:
    real_git = shutil.which("git")
    assert real_git is not None
    project = Project(tmp_path / "project")
    project.dir.mkdir()
    project.git_init()
    calls = tmp_path / "git-calls"
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "git $*" >> {calls}\nexec {real_git} "$@"\n')
    wrapper.chmod(0o755)
    # The agent marks where its iteration starts and commits with the real git (not counted).
    agent = project.write(
        "agent.sh",
        f'echo "--- agent $FRESHER_ITERATION" >> {calls}\n'
        'echo "$FRESHER_ITERATION" >> work.txt\n'
        f"{real_git} add work.txt && {real_git} commit -qm work\n",
    )
    env = base_env(
        PATH=f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}", FRESHER_SMART_TERMINATION="false"
    )
    done = project.run("--agent-cmd", f"sh {agent}", "--max-iterations", "3", env=env)
    assert done.code == 10, done.stderr
    assert project.record()["totals"]["commits"] == 3
    text = calls.read_text()
    windows = text.split("--- agent ")[1:]
    # Between one agent's start and the next: the end of one iteration, the start of the next.
    per_iteration = [w.count("\ngit ") for w in windows[:-1]]
    assert len(per_iteration) == 2
    # The checkpoint's status doubles as the snapshot; the check of git's internals asks git
    # for its configuration again only when a file it comes from changed.
    assert all(n <= 2 for n in per_iteration), text


# -- a lifecycle hook that ignores SIGTERM ends at its timeout plus the grace ---------------


def test_a_hook_ignoring_sigterm_ends_at_timeout_plus_grace(tmp_path: Path) -> None:
    project = Project(tmp_path)
    tag = unique_tag()
    project.hook("finished", f"trap '' TERM; sleep {tag} & wait; sleep {tag}")
    env = base_env(FRESHER_HOOK_TIMEOUT="1")
    done = project.run("--agent-cmd", "true", "--max-iterations", "1", env=env)
    assert done.code == 10, done.stderr
    (finished,) = [h for h in project.record()["hooks"] if h["name"] == "finished"]
    assert finished["status"] == "timeout"
    # TERM at 1 s is ignored; KILL follows after the grace (2 s at most): about 3 s, not more.
    assert 1.0 <= finished["duration"] < 4.5, finished
    assert survivors(tag) == []


def test_resume_ends_the_dead_runs_agent_with_term_first(tmp_path: Path) -> None:
    """The agent a killed supervisor left gets TERM (it may save its work), then KILL."""
    project = Project(tmp_path)
    script = project.write(
        "polite.py",
        "import signal, sys, time\n"
        "def bye(*_):\n    open('got-term', 'w').close()\n    sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, bye)\n"
        "sys.stdin.read()\nopen('ready', 'w').close()\n"
        "while True:\n    time.sleep(1)\n",
    )
    agent = f"{sys.executable} {script}"
    loop = project.popen("--agent-cmd", agent, "--max-iterations", "1")
    try:
        wait_for(lambda: (project.dir / "ready").exists())
        pid = current_agent_pid(project)
        loop.kill()
        loop.wait()
    finally:
        stop_all(loop)
    # The agent gets TERM as its supervisor dies (PR_SET_PDEATHSIG); one that outlived it
    # anyway would get it from --resume.
    done = project.run("--resume", "--agent-cmd", agent, "--max-iterations", "1")
    assert done.code == 10, done.stderr
    assert (project.dir / "got-term").exists()
    assert not alive(pid)


# -- 6. a resumed run keeps the settings it started with ----------------------------------

SPENDER = (
    "import json, os, pathlib, sys, time\n"
    "sys.stdin.read()\n"
    "n = int(os.environ['FRESHER_ITERATION'])\n"
    "hung = pathlib.Path(os.environ['FRESHER_PROJECT_DIR'], 'hung')\n"
    "if n == 2 and not hung.exists():\n"
    "    hung.touch()\n"
    "    while True:\n"
    "        time.sleep(1)\n"
    "with open(os.environ['FORGEFLARE_REPORT'], 'w') as f:\n"
    "    json.dump({'outcome': 'ok', 'cost_usd': 0.4}, f)\n"
)


def killed_budget_run(project: Project) -> str:
    """A run capped at $1 (40 cents an iteration) whose supervisor is killed in iteration 2."""
    agent = f"{sys.executable} {project.write('spender.py', SPENDER)}"
    loop = project.popen("--agent-cmd", agent, "--max-cost", "1", "--max-iterations", "10")
    try:
        wait_for(lambda: (project.dir / "hung").exists())
        loop.kill()
        loop.wait()
    finally:
        stop_all(loop)
    return agent


def stopped_on_its_original_budget(project: Project, done: Done) -> None:
    """The resumed run went on with its $1 cap and finished ``budget`` two iterations later."""
    assert done.code == 17, done.stdout + done.stderr
    assert "with the settings it started with" in done.stdout + done.stderr
    rec = project.record()
    assert rec["finish_type"] == "budget"
    assert rec["totals"]["cost_usd"] == pytest.approx(1.2)
    assert [it["outcome"] for it in rec["iterations"]] == ["ok", "killed", "ok", "ok"]


def test_a_resumed_run_given_its_agent_again_stops_on_its_original_budget(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    agent = killed_budget_run(project)
    stopped_on_its_original_budget(project, project.run("--resume", "--agent-cmd", agent))


def test_a_killed_loop_is_dead_and_resumes_with_its_own_settings(tmp_path: Path) -> None:
    """One killed run: ``runs`` says it is dead, a flag contradicting its settings is refused
    before anything changes, and ``--resume`` alone goes on with its original budget."""
    project = Project(tmp_path)
    killed_budget_run(project)
    run_id = run_id_of(project)
    listed = forgeflare_here(project.dir, "runs")  # in-process: its answer is the point
    assert listed.returncode == 0, listed.stderr
    first, reason = listed.stdout.splitlines()[:2]
    assert first.split()[3] == "dead"
    assert reason.strip() == "dead — forgeflare loop --resume"
    refused = project.run("--resume", "--max-cost", "5")
    assert refused.code == 2, refused.stderr
    assert refused.stderr.strip() == (
        f"forgeflare: error: --max-cost 5: run {run_id} started with 1; a resumed run keeps "
        "its settings (leave the flag out, or start a new run)"
    )
    assert project.record()["resumes"] == 0
    stopped_on_its_original_budget(project, project.run("--resume"))
