"""A fleet loop as a real process: started, logged, and nothing it started left behind."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from forgeflare.fleet import FleetRecord, LoopRecord, load_fleet_file
from forgeflare.fleet._run import FleetOptions, _Fleet
from project_support import run_text

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def live(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_fleet_loop_runs_logs_and_leaves_no_detached_process(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True
        )
    child = tmp_path / "child.pid"
    # The agent starts a process in a session of its own, as Claude Code does for its commands.
    agent = f"bash -c 'setsid sleep 600 >/dev/null 2>&1 & echo $! > {child}; cat >/dev/null'"
    (tmp_path / "FLEET.toml").write_text(
        '[fleet]\nname = "t"\nparallel = 1\nland = "none"\n\n'
        '[[loop]]\nname = "one"\nrepo = "repo"\nbase = "main"\nprompt = "p"\n'
        f'max_iterations = 1\nagent_command = "{agent.replace(chr(34), chr(92) + chr(34))}"\n'
    )
    done = run_text(
        [sys.executable, "-m", "forgeflare", "fleet", "run", "FLEET.toml"],
        cwd=tmp_path,
        timeout=120,
    )
    # The loop ends no_changes, so nothing lands: the fleet says so with exit 1.
    assert done.returncode == 1, done.stderr + done.stdout
    assert "one: finished" in done.stdout + done.stderr
    log = tmp_path / ".forgeflare-fleet" / "t" / "logs" / "one.log"
    assert "iteration 1" in log.read_text()
    pid = int(child.read_text())
    deadline = time.monotonic() + 60
    while live(pid) and time.monotonic() < deadline:
        time.sleep(0.02)  # bounded polling: the kill is asynchronous
    assert not live(pid)


@pytest.mark.parametrize("no_sandbox", [False, True])
def test_fleet_run_no_sandbox_reaches_every_loop(tmp_path: Path, no_sandbox: bool) -> None:
    path = tmp_path / "FLEET.toml"
    path.write_text('[fleet]\nname = "t"\n\n[[loop]]\nname = "one"\nprompt = "p"\n')
    spec = load_fleet_file(path)
    record = FleetRecord(name="t", fleet_file=str(path), started_at="2026-11-25T00:00:00Z")
    opts = FleetOptions(fleet_file=path, fleet=spec, no_sandbox=no_sandbox)
    loop = LoopRecord(name="one", worktree=str(tmp_path / "w"))
    argv = _Fleet(opts, record, tmp_path)._argv(spec.loop[0], loop, tmp_path / "task.md")
    assert ("--no-sandbox" in argv) is no_sandbox
