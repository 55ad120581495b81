"""The demo's pure parts: its summary is read from record texts; its story is well formed."""

from __future__ import annotations

import json

from forgeflare.mockapi import parse_script
from forgeflare.supervisor.records import RunRecord
from forgeflare.templates import demo_story_text, seed_files, summarize

RUN = RunRecord.model_validate(
    {
        "run_id": "r1",
        "mode": "building",
        "project_dir": "/p",
        "started_at": "2026-01-01T00:00:00Z",
        "finish_type": "complete",
        "exit_code": 0,
        "totals": {"iterations": 2, "commits": 2},
        "iterations": [
            {"number": 1, "observations": []},
            {
                "number": 2,
                "observations": [{"signal": "converged", "reason": "tests passed"}],
            },
        ],
    }
)
EVENTS = "\n".join(
    json.dumps(e)
    for e in [
        {"event": "run_started"},
        {"event": "hook", "hook": "started", "status": "ok"},
        {"event": "hook", "hook": "next_iteration", "status": "ok"},
        {"event": "iteration"},
        {"event": "hook", "hook": "finished", "status": "ok"},
    ]
)
AUDIT = (
    "2026-01-01T00:00:00Z\tRead\tallowed\tIMPLEMENTATION_PLAN.md\n"
    "2026-01-01T00:00:01Z\tBash\tBLOCKED\trm -rf build\tblocked by guard: destructive\n"
    "2026-01-01T00:00:02Z\tBash\tallowed\tls build\n"
    "a torn line\n"
)
SESSIONS = (
    "2026-01-01T00:00:03Z\treason=end_turn\ttool_iterations=3\ttotal_tokens=10\n"
    "2026-01-01T00:00:04Z\treason=convergence_signal\ttool_iterations=2\ttotal_tokens=5\n"
)


def test_summary_reads_every_record() -> None:
    s = summarize(
        run=RUN,
        events_jsonl=EVENTS + "\nnot json\n",
        audit_log=AUDIT,
        sessions_log=SESSIONS,
        convergence_json=json.dumps(
            {"observations": [], "final": {"reason": "convergence_signal"}}
        ),
    )
    assert s.complete
    assert (s.finish_type, s.exit_code, s.iterations, s.commits) == ("complete", 0, 2, 2)
    assert s.tool_calls == 3
    assert s.tools == {"Bash": 2, "Read": 1}
    assert s.blocked == ["Bash rm -rf build (blocked by guard: destructive)"]
    assert s.signals == ["converged (iteration 2): tests passed"]
    assert s.hooks == ["started ok", "next_iteration ok", "finished ok"]
    assert s.sessions == ["end_turn", "convergence_signal"]
    assert s.last_final == "convergence_signal"


def test_summary_of_missing_or_broken_records_is_empty_not_an_error() -> None:
    s = summarize(run=None, convergence_json="{broken")
    assert not s.complete
    assert (s.iterations, s.tool_calls, s.blocked, s.signals) == (0, 0, [], [])
    assert s.last_final is None


def test_story_is_a_valid_mock_script_using_all_five_tools() -> None:
    text = demo_story_text()
    script = parse_script(json.loads(text), source="story.json")
    assert len(script.responses) >= 10
    story = json.loads(text)
    tools = {
        block["name"]
        for response in story["responses"]
        for block in response.get("content", [])
        if block["type"] == "tool_use"
    }
    assert tools == {"Read", "Glob", "Grep", "Edit", "Bash"}
    commands = [
        block["input"]["command"]
        for response in story["responses"]
        for block in response.get("content", [])
        if block["type"] == "tool_use" and block["name"] == "Bash"
    ]
    assert "rm -rf build" in commands
    # The demo project is a git repository: the agent commits each task it checks off.
    assert sum("git commit" in command for command in commands) == 2


def test_seed_plan_has_two_open_tasks() -> None:
    files = seed_files()
    assert files["IMPLEMENTATION_PLAN.md"].count("- [ ]") == 2
    assert "specs/calculator.md" in files
