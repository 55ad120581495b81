"""``forgeflare fleet land``: a loop left on its branch is landed later, through the gate.

Real ``forgeflare loop`` processes in real git worktrees, each with a shell agent that commits
and checks off its plan (what the own agent's scripted turn would run); the gate fails at
landing (a file it needs is missing), is fixed, and ``fleet land`` lands it. The landing that
lands and the first report are real processes (test_fleet starts ``fleet run``); the other
reads, runs and refusals run in-process (their loops are processes).
"""

from __future__ import annotations

import json
from pathlib import Path

from test_fleet import completing_agent, fleet, fleet_file, fleet_here, loop, make_repo, state

from project_support import git
from supervisor_agents.project import base_env


def test_a_loop_left_unlanded_lands_with_fleet_land(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "one")
    one = loop("one", **completing_agent("one", "one.txt", "one"))
    # The landing gate runs in the box, whose /tmp and /var/tmp are its own: the fix it looks
    # for is made where the box sees the host (the repository's git directory).
    ok = repo / ".git" / "gate-ok"
    path = fleet_file(tmp_path, "night", [one], gate=f"test -f {ok}")
    env = base_env()
    ran = fleet_here("run", str(path), env=env)
    assert ran.returncode == 1, ran.stderr
    rec = state(path, "night")
    assert rec["one"]["status"] == "gate_failed", rec
    assert git(repo, "log", "--format=%s", "main").splitlines() == ["init"]

    # The morning's list says how to retry it (not `git switch` to the branch it has).
    report = fleet("report", str(path), env=env)
    assert f"→  forgeflare fleet land {path} one" in report.stdout, report.stdout
    assert "switch" not in report.stdout.split("\n\n")[0]

    # Still red: one line, exit 1, nothing moves.
    again = fleet_here("land", str(path), "one", env=env)
    assert again.returncode == 1, again.stderr
    assert again.stdout.startswith("one: gate_failed: gate `test -f "), again.stdout
    assert len(again.stdout.splitlines()) == 1
    assert git(repo, "log", "--format=%s", "main").splitlines() == ["init"]

    ok.write_text("")  # the gate is fixed
    landed = fleet("land", str(path), "one", env=env)
    assert landed.returncode == 0, landed.stderr + landed.stdout
    assert landed.stdout == "one: landed: 1 commit(s) fast-forwarded into main\n"
    assert git(repo, "log", "--format=%s", "main").splitlines() == ["write one.txt", "init"]
    assert state(path, "night")["one"]["status"] == "landed"
    after = fleet_here("report", str(path), env=env)
    assert "Nothing needs you" in after.stdout, after.stdout
    assert fleet_here("land", str(path), "one", env=env).returncode == 0  # landed stays landed


def test_fleet_land_refuses_what_it_cannot_land(tmp_path: Path) -> None:
    make_repo(tmp_path, "one")
    path = fleet_file(tmp_path, "night", [loop("one", **completing_agent("one", "one.txt", "one"))])
    env = base_env()
    not_yet = fleet_here("land", str(path), "one", env=env)
    assert not_yet.returncode == 2
    assert "has not run yet" in not_yet.stderr
    assert fleet_here("run", str(path), env=env).returncode == 0
    unknown = fleet_here("land", str(path), "nope", env=env)
    assert unknown.returncode == 2
    (line,) = unknown.stderr.strip().splitlines()
    assert "no loop 'nope' (its loops: one)" in line, line
    assert "Traceback" not in unknown.stderr
    assert json.loads((path.parent / ".forgeflare-fleet/night/fleet.json").read_text())
