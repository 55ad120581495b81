"""A real ``fleet run`` killed with -9 while its landing gate runs, then ``--resume``: the old
gate does not run beside the new one, the finished loop is not run again, and it lands."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from platform_support import sleep_token, sleeping
from project_support import git, new_repo

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _fleet_json(tmp_path: Path) -> dict[str, object]:
    path = tmp_path / ".forgeflare-fleet" / "t" / "fleet.json"
    try:
        return json.loads(path.read_text())  # type: ignore[no-any-return]
    except (OSError, ValueError):
        return {}


def test_a_fleet_killed_while_landing_lands_once_on_resume(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    # What is tried is the landing step across a kill, not the box: the gates must see each
    # other's pid and files outside the worktree, so they run unconfined here.
    (repo / ".fresher").mkdir()
    (repo / ".fresher" / "config.toml").write_text('[security]\nsandbox = "off"\n')
    git(repo, "add", ".fresher/config.toml")
    git(repo, "commit", "-qm", "unconfined gates")
    started, old_pid = tmp_path / "gate-started", tmp_path / "old-gate.pid"
    token = sleep_token(600)
    # The first gate blocks (a slow test suite); the resumed one passes only when the first
    # is gone: two gates at once fail it.
    gate = (
        # (a gate ended with its dead fleet may linger as a zombie of an init that does not
        # reap: that one is gone too)
        f'if [ -e {started} ]; then p="$(cat {old_pid})"; '
        f'! {{ kill -0 "$p" 2>/dev/null && ! grep -q zombie "/proc/$p/status"; }}; '
        f"else echo $$ > {old_pid}; touch {started}; exec sleep {token}; fi"
    )
    # The agent commits its work, then answers as Codex does (complete).
    agent = shlex.join(
        [
            "sh",
            "-c",
            "echo w > w.txt && git add w.txt && "
            "git -c user.name=t -c user.email=t@t commit -qm w && "
            f'exec {shlex.quote(sys.executable)} {FIXTURES / "fake_codex.py"} "$@"',
            "sh",
        ]
    )
    (tmp_path / "FLEET.toml").write_text(
        f'[fleet]\nname = "t"\nparallel = 1\ngate = {json.dumps(gate)}\n\n'
        '[[loop]]\nname = "one"\nrepo = "repo"\nbase = "main"\nprompt = "p"\n'
        f'mode = "planning"\nbackend = "codex"\nagent_command = {json.dumps(agent)}\n'
    )
    argv = [sys.executable, "-m", "forgeflare", "fleet", "run", "FLEET.toml"]
    fleet = subprocess.Popen(
        argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        deadline = time.monotonic() + 120
        while not started.exists() and fleet.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # bounded polling for the gate to start (no timing asserted)
        assert started.exists(), fleet.communicate()[0] if fleet.poll() is not None else ""
        loops = _fleet_json(tmp_path).get("loops")
        assert isinstance(loops, list)
        assert loops[0]["status"] == "landing"
        fleet.send_signal(signal.SIGKILL)
        fleet.communicate()
    finally:
        if fleet.poll() is None:
            fleet.kill()
            fleet.communicate()
    try:
        resumed = subprocess.run(
            [*argv, "--resume"], cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        out = resumed.stdout + resumed.stderr
        assert resumed.returncode == 0, out
        loop = _fleet_json(tmp_path)["loops"][0]  # type: ignore[index]
        assert loop["status"] == "landed", out
        assert "one: starting" not in out  # the finished loop was not run again
        assert git(repo, "log", "--format=%s", "main").splitlines() == [
            "w",
            "unconfined gates",
            "init",
        ]
        assert sleeping(token) == []
    finally:
        for proc in sleeping(token):
            proc.kill()
