"""Completion you can trust, with the real agent against ``forgeflare mock-api``: a claim the
gate refuses, a claim the reviewer refuses, a reviewer that fails, and a loop that stalls.

What the next iteration is told is read where the model would read it: in the requests the
mock API recorded. The loops whose point is the supervisor's evidence (gate, reviewer, stall)
run in the test process (``Project.arun``: the agent stays a real ``forgeflare run`` child),
the keyless reviewer's refusal through the CLI's entry point in-process; the planted git alias
starts the loop as a real process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_support import text_response, tick_response, tool_response
from cli_inprocess import forgeflare_here
from mockapi_support import MockAPI, MockServer
from supervisor_agents.project import Project, base_env, env_for, forgeflare

# A failing test the gate reports the same way every time (a pytest-like summary line).
RED_GATE = (
    "echo 'collected 3 items'; "
    "echo 'FAILED tests/test_calc.py::test_divide - ZeroDivisionError'; exit 3"
)


def first_user_text(request: dict[str, Any]) -> str:
    return json.dumps(request["body"]["messages"][0])


def agent_requests(server: MockServer) -> list[dict[str, Any]]:
    return [
        r for r in server.requests() if r["body"].get("tools", [{}])[0].get("name") != "verdict"
    ]


def config(project: Project, body: str) -> None:
    project.write(".fresher/config.toml", body)


async def test_a_claim_with_a_red_gate_goes_on_and_the_next_prompt_shows_the_failure(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    project = Project(tmp_path)
    project.write("IMPLEMENTATION_PLAN.md", "- [ ] one\n")
    config(project, f"[limits]\ngate = {RED_GATE!r}\nstall_after = 0\n")
    server = mock_api(
        {"responses": [tick_response(), text_response("done"), text_response("again")]}
    )
    done = await project.arun("--max-iterations", "2", env=env_for(server))
    assert done.code == 10, done.stderr  # max_iterations: the claim never completed
    rec = project.record()
    first = rec["iterations"][0]
    assert first["outcome"] == "ok"
    assert first["decision"] == "continue"
    assert first["claim"]["by"] == "plan"
    assert first["claim"]["accepted"] is False
    assert first["claim"]["rejected_by"] == "gate"
    assert "exit 3" in first["claim"]["why"]
    # The second iteration's prompt starts with the gate, its exit code and its failing tail.
    second = first_user_text(server.requests()[2])
    assert second.count("claimed completion") == 1  # said once, not again after the preamble
    assert "exited 3" in second
    assert "test_calc.py::test_divide - ZeroDivisionError" in second
    assert "test_divide" not in first_user_text(server.requests()[0])
    (run_dir,) = project.run_dirs()
    assert "ZeroDivisionError" in (run_dir / "gate-001.log").read_text()


async def test_a_loop_repeating_one_failing_test_finishes_stalled(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    project = Project(tmp_path)  # no plan, no git: the gate is the only measure
    config(project, f"[limits]\ngate = {RED_GATE!r}\nstall_after = 3\n")
    server = mock_api({"responses": [text_response(f"tried again {i}") for i in range(8)]})
    done = await project.arun("--max-iterations", "8", env=env_for(server))
    assert done.code == 19, done.stderr
    rec = project.record()
    assert rec["finish_type"] == "stalled"
    assert len(rec["iterations"]) == 3
    assert [r["progress"]["no_progress"] for r in rec["iterations"]] == [1, 2, 3]
    assert "test_calc.py::test_divide" in rec["finish_reason"]
    assert "stalled" in done.stdout + done.stderr
    # The iteration before the limit was told the loop is not moving, and what repeats.
    prompts = [first_user_text(r) for r in server.requests()]
    assert "not moving" not in prompts[1]
    assert "not moving" in prompts[2]
    assert "test_calc.py::test_divide" in prompts[2]
    report = forgeflare_here(project.dir, "report").stdout
    assert "#3 no progress: the same gate failures" in report
    assert "3 in a row" in report


def reviewer_script(verdict: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "conversations": [
            {"match": "verdict", "responses": verdict},
            {
                "match": "Bash",
                "responses": [tick_response(), text_response("done"), text_response("again")],
            },
        ]
    }


def verdict_response(tool_input: dict[str, Any]) -> dict[str, Any]:
    return {
        "content": [{"type": "tool_use", "name": "verdict", "input": tool_input}],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 1000, "output_tokens": 50},
    }


def reviewed_project(tmp_path: Path) -> Project:
    """A one-box plan, a passing gate, no stall limit and a reviewer."""
    project = Project(tmp_path)
    project.write("IMPLEMENTATION_PLAN.md", "- [ ] one\n")
    config(
        project,
        "[limits]\ngate = 'true'\nstall_after = 0\n[finish]\nreviewer = 'claude-sonnet-4-5'\n",
    )
    return project


async def test_a_claim_the_reviewer_rejects_goes_on_with_its_reasons(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    project = reviewed_project(tmp_path)
    rejected = verdict_response(
        {
            "complete": False,
            "reasons": ["the divide function is never tested"],
            "missing": ["a test for divide by zero"],
        }
    )
    server = mock_api(reviewer_script([rejected, rejected]))
    done = await project.arun("--max-iterations", "2", env=env_for(server))
    assert done.code == 10, done.stderr
    rec = project.record()
    first = rec["iterations"][0]
    assert first["claim"] == {
        "by": "plan",
        "accepted": False,
        "rejected_by": "reviewer",
        "why": "the divide function is never tested",
    }
    assert first["review"]["complete"] is False
    assert first["review"]["missing"] == ["a test for divide by zero"]
    # Its tokens and cost are the run's; asked once: the diff did not change, so the first
    # verdict stands for the second claim (no new request, no new spend).
    assert rec["iterations"][1]["review"]["complete"] is False
    assert rec["iterations"][1]["review"]["cost_usd"] is None
    agent_tokens = sum(r["tokens"]["input"] + r["tokens"]["output"] for r in rec["iterations"])
    assert rec["totals"]["tokens"] >= agent_tokens + 1050
    review_cost = sum(r["review"]["cost_usd"] or 0 for r in rec["iterations"])
    agent_cost = sum(r["cost_usd"] or 0 for r in rec["iterations"])
    assert review_cost > 0
    assert rec["totals"]["cost_usd"] == pytest.approx(agent_cost + review_cost, abs=1e-5)
    # Its request (forced tool call) and answer are in the run folder.
    (run_dir,) = project.run_dirs()
    saved = json.loads((run_dir / first["review"]["file"]).read_text())
    assert saved["request"]["tool_choice"] == {"type": "tool", "name": "verdict"}
    shown = saved["request"]["messages"][0]["content"][0]["text"]
    assert "# The plan\n\n- [x] one" in shown
    assert "# The diff since the run started" in shown
    assert "The gate `true` exited 0" in shown
    assert "it claims completion by plan" in shown
    assert saved["response"]["content"][0]["input"]["complete"] is False
    # The next iteration starts with the reviewer's reasons.
    prompts = [first_user_text(r) for r in agent_requests(server)]
    assert "the divide function is never tested" in prompts[2]
    assert "a test for divide by zero" in prompts[2]
    # The report shows each refused claim with its reason and the reviewer's verdicts.
    report = forgeflare(project.dir, "report")  # the one `report` process here
    assert report.returncode == 0, report.stderr
    assert "#1 claim by plan: refused by the reviewer: the divide function" in report.stdout
    assert "#1 reviewer claude-sonnet-4-5: not complete; the divide" in report.stdout
    page = tmp_path / "night.html"
    assert forgeflare_here(project.dir, "report", "--html", str(page)).returncode == 0
    assert "refused by the reviewer" in page.read_text()


async def test_a_reviewer_that_fails_neither_completes_nor_crashes(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    project = reviewed_project(tmp_path)
    garbage = verdict_response({"complete": "perhaps"})
    server_error = {"error": {"status": 500, "type": "api_error", "message": "boom"}}
    server = mock_api(reviewer_script([garbage] + [server_error] * 10))
    done = await project.arun("--max-iterations", "2", env=env_for(server))
    assert done.code == 10, done.stderr
    assert "Traceback" not in done.stderr
    rows = project.record()["iterations"]
    assert [r["claim"]["accepted"] for r in rows] == [False, False]
    assert "malformed verdict" in rows[0]["review"]["error"]
    assert rows[0]["review"]["complete"] is None
    assert "500" in rows[1]["review"]["error"]
    assert "the reviewer gave no verdict" in done.stdout + done.stderr


def test_a_reviewer_without_a_key_is_refused_before_anything_starts(tmp_path: Path) -> None:
    project = Project(tmp_path)
    config(project, "[finish]\nreviewer = 'claude-sonnet-4-5'\n")
    env = {
        k: v
        for k, v in base_env().items()
        if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_API_URL", "ANTHROPIC_BASE_URL")
    }
    # in-process: the one-line refusal is the point (the planted alias starts the process)
    done = forgeflare_here(
        project.dir, "loop", "--dir", str(project.dir), "--agent-cmd", "true", env=env
    )
    assert done.returncode == 2, done.stderr
    assert "[finish] reviewer = 'claude-sonnet-4-5': ANTHROPIC_API_KEY is not set" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert project.run_dirs() == []


async def test_commits_that_undo_each_other_are_no_progress(tmp_path: Path) -> None:
    project = Project(tmp_path)  # git, no plan, no gate: new trees are the measure
    project.git_init()
    agent = project.write(
        "agent.sh",
        "if [ -f flip.txt ]; then git rm -q flip.txt;\n"
        "else echo x > flip.txt; git add flip.txt; fi\n"
        "git commit -qm flip\n",
    )
    config(project, "[limits]\nstall_after = 3\n")
    done = await project.arun("--agent-cmd", f"sh {agent}", "--max-iterations", "8", env=base_env())
    assert done.code == 19, done.stderr
    rows = project.record()["iterations"]
    assert [r["progress"]["made"] for r in rows] == [True, False, False, False]
    assert rows[1]["progress"]["why"] == "commits that undo earlier changes"
    assert all(r["commits"] == 1 for r in rows)


async def test_a_claim_the_gate_and_the_reviewer_accept_completes(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    project = Project(tmp_path)
    project.write("IMPLEMENTATION_PLAN.md", "- [ ] one\n")
    config(project, "[limits]\ngate = 'true'\n[finish]\nreviewer = 'claude-sonnet-4-5'\n")
    accepted = verdict_response({"complete": True, "reasons": ["the task is done"], "missing": []})
    server = mock_api(reviewer_script([accepted]))
    done = await project.arun("--max-iterations", "3", env=env_for(server))
    assert done.code == 0, done.stderr
    (row,) = project.record()["iterations"]
    assert row["claim"] == {"by": "plan", "accepted": True, "rejected_by": None, "why": ""}
    assert row["review"]["complete"] is True
    assert "reviewer claude-sonnet-4-5: complete" in done.stdout + done.stderr


def test_the_reviewer_is_not_asked_over_changed_git_internals(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    """A claim over changed git internals is never judged: an unsandboxed agent that planted
    a ``!`` alias gets no review (and the loop then stops ``hook_abort``, naming it)."""
    project = Project(tmp_path)
    project.git_init()
    project.write("IMPLEMENTATION_PLAN.md", "- [ ] one\n")
    config(
        project,
        "[limits]\nstall_after = 0\n[finish]\nreviewer = 'claude-sonnet-4-5'\n"
        "[security]\nsandbox = 'off'\n",
    )
    plant = tool_response(("Bash", {"command": "git config alias.zz '!touch planted'"}))
    server = mock_api(
        {
            "conversations": [
                {"match": "verdict", "responses": [verdict_response({"complete": True})]},
                {"match": "Bash", "responses": [plant, tick_response(), text_response("done")]},
            ]
        }
    )
    done = project.run("--max-iterations", "2", env=env_for(server))
    said = done.stdout + done.stderr
    assert done.code == 13, said
    rec = project.record()
    # Either the claim is never judged (the check between iterations came first) or the
    # reviewer is skipped with the reason: never asked over the changed internals.
    review = rec["iterations"][0]["review"]
    assert review is None or review["error"].startswith(
        "not asked: git internals changed during the run"
    ), review
    assert "git config alias.zz" in rec["finish_reason"]
    assert len(server.requests()) == len(agent_requests(server))  # no verdict was asked
