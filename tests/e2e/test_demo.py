"""``forgeflare demo``: the whole offline loop, as a user runs it (a real process tree:
demo -> mock-api + loop -> agents -> hooks). A refusal before anything starts runs the command
in this process (the demo above is the real process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from cli_inprocess import run_cli


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_demo_runs_a_complete_loop_offline(tmp_path: Path) -> None:
    project = tmp_path / "demo"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FRESHER_", "ANTHROPIC_"))}
    done = subprocess.run(
        [sys.executable, "-m", "forgeflare", "demo", "--dir", str(project)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert "The loop finished complete." in out
    assert "finish type      complete (exit 0)" in out

    runs = list((project / ".fresher" / "runs").iterdir())
    assert len(runs) == 1
    run = json.loads((runs[0] / "run.json").read_text())
    assert run["finish_type"] == "complete"
    assert run["totals"]["iterations"] >= 2
    assert f"iterations       {run['totals']['iterations']}" in out

    # The demo ends by pointing at its report: the path it prints is the run's HTML report.
    (report_line,) = [line for line in out.splitlines() if line.startswith("report ")]
    report = Path(report_line.removeprefix("report").strip())
    assert report == runs[0] / "report.html"
    page = report.read_text()
    assert page.lower().startswith("<!doctype html>")
    assert run["run_id"] in page
    assert f"forgeflare report --dir {project}" in out

    # Lifecycle hooks fired (and the summary says so).
    hooks = [e["hook"] for e in _jsonl(runs[0] / "events.jsonl") if e["event"] == "hook"]
    assert hooks[0] == "started"
    assert hooks[-1] == "finished"
    assert hooks.count("next_iteration") == run["totals"]["iterations"]

    # The guard blocked a destructive command, and the audit log has it.
    audit = [
        line.split("\t")
        for line in (project / ".forgeflare" / "audit.log").read_text().splitlines()
    ]
    blocked = [row for row in audit if row[2] == "BLOCKED"]
    assert [row[3] for row in blocked] == ["rm -rf build"]
    assert (project / "build").is_dir()

    # All five tools were used, per the audit log and per the session transcripts.
    assert {row[1] for row in audit} == {"Read", "Glob", "Grep", "Edit", "Bash"}
    used: set[str] = set()
    transcripts = list((project / ".entire" / "metadata").glob("*/full.jsonl"))
    assert len(transcripts) == run["totals"]["iterations"]
    for path in transcripts:
        for entry in _jsonl(path):
            content = (entry.get("message") or {}).get("content")
            if isinstance(content, list):
                used |= {b["name"] for b in content if b.get("type") == "tool_use"}
    assert used == {"Read", "Glob", "Grep", "Edit", "Bash"}

    # A PostToolUse signal in the last iteration; the agent stopped on it.
    last = run["iterations"][-1]
    assert [o["signal"] for o in last["observations"]] == ["converged"]
    assert last["stop_reason"] == "convergence_signal"
    conv = json.loads((project / ".forgeflare" / "convergence.json").read_text())
    assert [o["signal"] for o in conv["observations"]] == ["converged"]
    sessions = (project / ".forgeflare" / "sessions.log").read_text()
    assert sessions.count("reason=") == run["totals"]["iterations"]

    # The agent's work is real: the plan is done and the code passes its own tests.
    assert "- [ ]" not in (project / "IMPLEMENTATION_PLAN.md").read_text()

    # The project is a git repository: no warning that commits cannot be counted, and the
    # agent's commit of each task is counted and in the history after the demo's first one.
    assert "not a git repository" not in out + done.stderr
    assert run["totals"]["commits"] == 2
    assert "commits          2" in out
    log = subprocess.run(
        ["git", "log", "--format=%s"], cwd=project, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert log == [
        "calc: mul() with its test; plan: mul() done",
        "calc: add() with its test; plan: add() done",
        "The demo project: a spec and a two-task plan",
    ]
    tests = subprocess.run(
        [sys.executable, "-m", "unittest", "-q"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert tests.returncode == 0, tests.stderr
    assert "Ran 2 tests" in tests.stderr


def test_demo_refuses_a_directory_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine\n")
    done = run_cli(["demo", "--dir", tmp_path], cwd=tmp_path)
    assert done.returncode == 2  # a usage error
    assert done.stderr.strip() == (
        f"forgeflare: error: --dir {tmp_path}: not empty; the demo needs a fresh directory"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]
