"""Chaos: ``kill -9`` of a random process of a committing loop's tree every 2-6 s.

The supervisor is resumed each time it is the one killed. At the end no process of the loop is
left, and every commit made since the start is attributed to an iteration in the records.
``FORGEFLARE_CHAOS_SECONDS`` (default 20) sets how long the kills go on (1800 is the 30-minute
soak), and ``FORGEFLARE_CHAOS_SEED`` (default 12) the seed of the random choices, so a failure
replays. The agent and the started hook also leave ``env -i setsid`` children: no marker, no
group, no session of the loop's.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import random
import signal
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import psutil
import pytest

from supervisor_agents.project import Project, base_env, wait_for

SECONDS = float(os.environ.get("FORGEFLARE_CHAOS_SECONDS", "20"))
SEED = int(os.environ.get("FORGEFLARE_CHAOS_SEED", "12"))

# The agent commits three times per iteration (the pauses are its work, not synchronisation),
# then checks a plan box it leaves to the loop's checkpoint to commit, and leaves detached
# processes behind, as Claude Code's Bash commands do (`setsid`), one of
# them with a clean environment (`env -i`: the run's marker is gone too). That one is started
# last: the loop adopts it (as subreaper) the moment the script exits and ends it at once.
# Only a kill -9 of the loop itself in the few ms between could lose it; a kill -9 while the
# agent still runs is covered by the `escaped` events that --resume reads.
AGENT = """\
rm -f .git/index.lock
for step in 1 2 3; do
  echo "$FRESHER_ITERATION.$step" >> work.txt
  git add work.txt && git commit -qm "iteration $FRESHER_ITERATION step $step"
  sleep 0.3
done
sed -i '0,/- \\[ \\]/s//- [x]/' IMPLEMENTATION_PLAN.md
setsid sleep {tag} >/dev/null 2>&1 </dev/null &
sleep 0.3
env -i setsid sleep {tag} >/dev/null 2>&1 </dev/null &
"""
STARTED_HOOK = "env -i setsid sleep {tag} >/dev/null 2>&1 </dev/null &\nexit 0\n"


def loop_processes(supervisor: int, run_ids: list[str], tag: str) -> list[psutil.Process]:
    """The supervisor, its descendants, and whatever carries a run's marker or the tag."""
    found: dict[int, psutil.Process] = {}
    if supervisor > 0:
        try:
            root = psutil.Process(supervisor)
            found[root.pid] = root
            found.update({p.pid: p for p in root.children(recursive=True)})
        except psutil.Error:
            pass
    for proc in psutil.process_iter(["pid", "cmdline", "status"]):
        if proc.pid == os.getpid() or proc.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        try:
            environ = proc.environ()
        except (psutil.Error, OSError):
            environ = {}
        if tag in " ".join(proc.info["cmdline"] or ()) or set(run_ids) & set(environ.values()):
            found[proc.pid] = proc
    return [p for p in found.values() if p.is_running()]


def records(project: Project) -> list[dict[str, Any]]:
    out = []
    for run_dir in project.run_dirs():
        path = run_dir / "run.json"
        if path.exists():
            out.append(json.loads(path.read_text()))
    return out


def git_lines(project: Project, *args: str) -> list[str]:
    done = subprocess.run(
        ["git", *args], cwd=project.dir, capture_output=True, text=True, check=True
    )
    return done.stdout.split()


def _running_or_ended(proc: subprocess.Popen[str], project: Project) -> bool:
    """The resumed supervisor has ended, or has opened its run (the record names its pid).

    Holding the lock is not enough: a Ctrl+C between taking the lock and reopening the record
    leaves the run as it was, still unfinished (under load that gap took every attempt)."""
    if proc.poll() is not None:
        return True
    try:
        return any(r.get("supervisor_pid") == proc.pid for r in records(project))
    except (OSError, ValueError):  # a record being replaced: ask again
        return False


def _ended(supervisor: subprocess.Popen[str], project: Project, tag: str) -> None:
    """Wait for the stopped supervisor; if it does not end, fail with what it was doing: the
    end of its log and the processes of the loop still there."""
    try:
        supervisor.communicate(timeout=60)
    except subprocess.TimeoutExpired as exc:
        run_ids = [d.name for d in project.run_dirs()]
        left = []
        for proc in loop_processes(supervisor.pid, run_ids, tag):
            with contextlib.suppress(psutil.Error):
                left.append(f"{proc.pid} {proc.status()} {' '.join(proc.cmdline())[:120]}")
        read = exc.stderr or b""  # the bytes read so far, even in text mode
        log = read.decode(errors="replace") if isinstance(read, bytes) else str(read)
        pytest.fail(f"the stopped loop did not end in 60 s; processes: {left}\nlog:\n{log[-4000:]}")


@pytest.mark.linux_only("the agent detaches with the setsid command (util-linux)")
@pytest.mark.timeout(SECONDS + 580)
def test_kill_9_anywhere_loses_no_commit_and_leaves_no_process(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    project = Project(tmp_path)
    project.git_init()
    project.write("IMPLEMENTATION_PLAN.md", "".join(f"- [ ] task {i}\n" for i in range(10**4)))
    subprocess.run(["git", "add", "-A"], cwd=project.dir, check=True)
    subprocess.run(["git", "commit", "-qm", "plan"], cwd=project.dir, check=True)
    start = git_lines(project, "rev-parse", "HEAD")[0]
    tag = f"{4000 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 10**6:06d}"
    agent = project.write("agent.sh", AGENT.format(tag=tag))
    project.hook("started", STARTED_HOOK.format(tag=tag))
    env = base_env(
        FRESHER_SMART_TERMINATION="false",
        FRESHER_MAX_CONSECUTIVE_ERRORS="100000",
        FRESHER_AGENT_KILL_GRACE="1",
    )
    args = ("--agent-cmd", f"sh {agent}", "--max-iterations", "100000")
    supervisor = project.popen(*args, env=env)
    kills: list[str] = []
    resumes = 0
    deadline = time.monotonic() + SECONDS
    try:
        while time.monotonic() < deadline:
            time.sleep(rng.uniform(2, 6))  # the chaos schedule, not a synchronisation
            if supervisor.poll() is not None:  # it finished by itself: resume or start again
                resumable = any(r.get("finished_at") is None for r in records(project))
                supervisor = project.popen(*(("--resume",) if resumable else ()), *args, env=env)
                continue
            run_ids = [d.name for d in project.run_dirs()]
            procs = loop_processes(supervisor.pid, run_ids, tag)
            if not procs:
                continue
            victim = rng.choice(sorted(procs, key=lambda p: p.pid))
            try:
                kills.append(" ".join(victim.cmdline())[:80])
                victim.send_signal(signal.SIGKILL)
            except psutil.Error:
                continue
            if victim.pid == supervisor.pid:
                supervisor.communicate()
                supervisor = project.popen("--resume", *args, env=env)
                resumes += 1
        # The last kill may have been the supervisor's: its successor may still be starting.
        # A Ctrl+C before it watches for signals is Python's KeyboardInterrupt, or nothing at
        # all where the suite was started with SIGINT ignored (a background job of a script:
        # the loop went on for good, 2 of 14 runs four at a time).
        wait_for(functools.partial(_running_or_ended, supervisor, project))
        if supervisor.poll() is None:
            supervisor.send_signal(signal.SIGINT)
        _ended(supervisor, project, tag)
        # A run the last kill cut short: a resume that ends at once closes it properly.
        for _ in range(5):
            if all(r.get("finished_at") for r in records(project)):
                break
            # The resumed run keeps its own agent and bounds: once it runs, Ctrl+C ends it.
            supervisor = project.popen("--resume", env=env)
            wait_for(functools.partial(_running_or_ended, supervisor, project))
            if supervisor.poll() is None:
                supervisor.send_signal(signal.SIGINT)
            _ended(supervisor, project, tag)
            assert supervisor.returncode in (0, 1, 10, 130), supervisor.returncode
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.communicate()
    assert kills, "the chaos killed nothing"
    run_ids = [d.name for d in project.run_dirs()]
    left = loop_processes(-1, run_ids, tag)
    assert left == [], [" ".join(p.cmdline()) for p in left]
    made = set(git_lines(project, "rev-list", f"{start}..HEAD"))
    attributed: set[str] = set()
    for rec in records(project):
        assert rec["finished_at"] is not None
        for row in rec["iterations"]:
            before, after = row.get("head_before"), row.get("head_after")
            if before and after and before != after:
                attributed |= set(git_lines(project, "rev-list", f"{before}..{after}"))
    missing = made - attributed
    plan = (project.dir / "IMPLEMENTATION_PLAN.md").read_text()
    checked = plan.count("- [x]")
    print(f"chaos: {len(kills)} kills, {resumes} resumes, {len(made)} commits, {checked} boxes")
    assert not missing, f"{len(missing)} of {len(made)} commits in no record ({len(kills)} kills)"
    # Every box checked in the work tree is in HEAD: in a commit a record names (above).
    committed = subprocess.run(
        ["git", "show", "HEAD:IMPLEMENTATION_PLAN.md"],
        cwd=project.dir,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert committed.count("- [x]") == checked, f"{checked - committed.count('- [x]')} boxes"
