"""``stop-hook start --reviewer MODEL``: a claim the gate passed is judged by the reviewer.

``forgeflare stop-hook start`` writes the state, ``forgeflare stop-hook`` gets the Stop JSON on
stdin as Claude Code sends it, both through the console script's real entry in the test process,
and the reviewer's request goes over loopback to ``forgeflare mock-api``, whose script answers it
(matched by the tool name ``verdict``). The hook is a real process where the process is the point
(what it imports) and for one accepted claim, end to end."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_stophook_processes import (
    HOOK,
    SIG,
    hook_env,
    hook_here,
    read_state,
    run_hook,
    state_path,
)

from agent_support import verdict
from mockapi_support import MockAPI, MockServer
from project_support import committed_repo, run_text
from stophook_support import blocks, reason_of, stop_hook_here
from text_support import missing

RED = "echo 'FAILED tests/test_calc.py::test_divide - ZeroDivisionError'; exit 4"
MODEL = "claude-sonnet-4-5"


REJECT = verdict(False, ["divide by zero is not handled"], ["a test for divide(1, 0)"])
ACCEPT = verdict(True, ["the task is done"], [])
GARBAGE = verdict("perhaps", [], [])
SERVER_ERROR = {"error": {"status": 500, "type": "api_error", "message": "boom"}}


def env_for(server: MockServer) -> dict[str, str]:
    env = {k: v for k, v in hook_env().items() if not k.startswith("ANTHROPIC_")}
    return {**env, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "test-key"}


def start(project: Path, env: dict[str, str], *more: str) -> subprocess.CompletedProcess[str]:
    args = ["--max-iterations", "5", "--prompt", "make divide safe", *more]
    return stop_hook_here("start", *args, cwd=project, env=env)


def project_with_work(tmp_path: Path) -> Path:
    """A repository whose loop changes one file after it started, and adds another."""
    return committed_repo(tmp_path / "p", {"calc.py": "def divide(a, b):\n    return a / b\n"})


def work(project: Path) -> None:
    (project / "calc.py").write_text("def divide(a, b):\n    return a / b if b else 0\n")
    (project / "test_calc.py").write_text("def test_divide():\n    assert True\n")


def reviews(server: MockServer) -> list[dict[str, Any]]:
    return [r["body"] for r in server.requests() if r["path"] == "/v1/messages"]


def test_a_claim_the_reviewer_rejects_continues_with_its_reasons(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    server = mock_api({"conversations": [{"match": "verdict", "responses": [REJECT]}]})
    env = env_for(server)
    project = project_with_work(tmp_path)
    (project / "IMPLEMENTATION_PLAN.md").write_text("- [x] guard divide\n")
    assert start(project, env, "--gate", "true", "--reviewer", MODEL).returncode == 0
    frame = read_state(project)["stack"][0]
    assert frame["reviewer"] == MODEL
    assert len(frame["base"]) == 40  # the commit the loop started at
    work(project)

    out = hook_here(project, f"Guarded divide.\n{SIG}", env=env)

    reason = reason_of(out)
    assert reason.startswith("# The last iteration claimed completion (the completion tag)")
    assert not missing(
        reason,
        "An independent reviewer judged the work not complete.\n",
        "- divide by zero is not handled",
        "Missing:\n- a test for divide(1, 0)",
        "[ITERATION 2/5]",
    ), reason
    # What the reviewer was shown: task, plan, the diff since start (new files too), the gate
    # and the final message; one forced verdict call.
    (body,) = reviews(server)
    assert body["model"] == MODEL
    assert body["tool_choice"] == {"type": "tool", "name": "verdict"}
    shown = body["messages"][0]["content"][0]["text"]
    assert "# The task\n\nmake divide safe" in shown
    assert "# The plan\n\n- [x] guard divide" in shown
    assert "+    return a / b if b else 0" in shown
    assert "+def test_divide():" in shown
    assert "loop-state" not in shown  # the loop's own files are not the work
    assert "The gate `true` exited 0" in shown
    assert "Guarded divide." in shown
    # The records: the refused claim with the verdict, tokens and cost; the request and the
    # answer in a file beside the state.
    frame = read_state(project)["stack"][0]
    (claim,) = frame["claims"]
    assert claim["rejected_by"] == "reviewer"
    assert claim["why"] == "divide by zero is not handled"
    assert claim["iteration"] == 1
    assert claim["gate_exit"] == 0
    review = claim["review"]
    assert review["complete"] is False
    assert review["missing"] == ["a test for divide(1, 0)"]
    assert review["tokens"] == 1050
    assert review["cost_usd"] > 0
    saved = json.loads((project / ".forgeflare" / "loop-reviews" / review["file"]).read_text())
    assert saved["request"]["tool_choice"] == {"type": "tool", "name": "verdict"}
    assert saved["response"]["content"][0]["input"]["complete"] is False
    listed = stop_hook_here("status", cwd=project, env=env)
    assert listed.returncode == 0, listed.stderr
    status = listed.stdout
    assert f"reviewer: {MODEL} (1 verdict, 1050 tokens, $" in status
    assert "last refused claim: iteration 1, by the reviewer" in status
    assert "why: divide by zero is not handled" in status
    assert f"reviewer {MODEL}: not complete (1050 tokens, $" in status
    assert "missing: a test for divide(1, 0)" in status


def test_a_claim_the_reviewer_accepts_completes(tmp_path: Path, mock_api: MockAPI) -> None:
    server = mock_api({"conversations": [{"match": "verdict", "responses": [ACCEPT]}]})
    env = env_for(server)
    project = project_with_work(tmp_path)
    assert start(project, env, "--reviewer", MODEL).returncode == 0
    work(project)

    out = run_hook(project, f"Done.\n{SIG}", env=env)

    assert out.returncode == 0, out.stderr
    assert "loop complete" in out.stderr
    assert f"reviewer {MODEL}: complete (1050 tokens, $" in out.stderr
    assert not state_path(project).exists()
    (body,) = reviews(server)
    assert "No gate is set." in body["messages"][0]["content"][0]["text"]


@pytest.mark.parametrize(
    ("answer", "why"),
    [(GARBAGE, "malformed verdict (complete:"), (SERVER_ERROR, "500")],
    ids=["garbage", "500"],
)
def test_a_reviewer_that_fails_neither_completes_nor_crashes(
    tmp_path: Path, mock_api: MockAPI, answer: dict[str, Any], why: str
) -> None:
    server = mock_api({"conversations": [{"match": "verdict", "responses": [answer]}]})
    env = env_for(server)
    project = project_with_work(tmp_path)
    assert start(project, env, "--reviewer", MODEL).returncode == 0

    out = hook_here(project, f"Done.\n{SIG}", env=env)

    assert blocks(out), out.stderr  # the session goes on
    assert "Traceback" not in out.stderr
    reason = reason_of(out)
    first, blank, *_ = reason.splitlines()
    assert first.startswith("Your completion claim was not accepted: the reviewer gave no verdict")
    assert why in first
    assert blank == ""
    assert "[ITERATION 2/5]" in reason
    (claim,) = read_state(project)["stack"][0]["claims"]
    assert claim["rejected_by"] == "reviewer"
    assert claim["review"]["complete"] is None
    assert why in claim["review"]["error"]


def test_an_unreachable_reviewer_refuses_the_claim(tmp_path: Path) -> None:
    env = {**hook_env(), "ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "k"}
    project = project_with_work(tmp_path)
    assert start(project, env, "--reviewer", MODEL).returncode == 0
    out = hook_here(project, f"Done.\n{SIG}", env=env)
    assert blocks(out), out.stderr
    assert reason_of(out).startswith("Your completion claim was not accepted")


def test_a_red_gate_refuses_before_the_reviewer_is_asked(tmp_path: Path, mock_api: MockAPI) -> None:
    server = mock_api({"conversations": [{"match": "verdict", "responses": [ACCEPT]}]})
    env = env_for(server)
    project = project_with_work(tmp_path)
    assert start(project, env, "--gate", RED, "--reviewer", MODEL).returncode == 0
    out = hook_here(project, f"Done.\n{SIG}", env=env)
    assert blocks(out), out.stderr
    assert "exited 4" in reason_of(out)
    assert reviews(server) == []
    (claim,) = read_state(project)["stack"][0]["claims"]
    assert claim["rejected_by"] == "gate"
    assert claim["gate_exit"] == 4
    assert claim["gate_signature"] == "failing: tests/test_calc.py::test_divide"
    assert "review" not in claim


def test_without_a_claim_the_reviewer_is_not_asked(tmp_path: Path, mock_api: MockAPI) -> None:
    server = mock_api({"conversations": [{"match": "verdict", "responses": [ACCEPT]}]})
    env = env_for(server)
    project = project_with_work(tmp_path)
    assert start(project, env, "--reviewer", MODEL).returncode == 0
    out = hook_here(project, "Still working.", env=env)
    assert blocks(out), out.stderr
    assert reviews(server) == []
    assert "claims" not in read_state(project)["stack"][0]


def test_a_reviewer_refusal_resets_the_stall_streak(tmp_path: Path, mock_api: MockAPI) -> None:
    """As in the loop: a claim the gate passed is progress (the gate's failures changed)."""
    server = mock_api({"conversations": [{"match": "verdict", "responses": [REJECT]}]})
    env = env_for(server)
    project = project_with_work(tmp_path)
    flag = project / "red"
    flag.write_text("")
    gate = f"if [ -f {flag} ]; then {RED}; fi"
    assert (
        start(project, env, "--gate", gate, "--reviewer", MODEL, "--stall-after", "2").returncode
        == 0
    )
    assert blocks(hook_here(project, f"Done.\n{SIG}", env=env))  # red: streak 0
    assert blocks(hook_here(project, f"Done.\n{SIG}", env=env))  # the same: 1
    assert read_state(project)["stack"][0]["stalled"] == 1
    flag.unlink()
    assert blocks(hook_here(project, f"Done.\n{SIG}", env=env))  # green, reviewer: no
    frame = read_state(project)["stack"][0]
    assert "stalled" not in frame
    assert "failures" not in frame
    flag.write_text("")
    assert blocks(hook_here(project, f"Done.\n{SIG}", env=env))  # red again: streak 0
    assert [c["rejected_by"] for c in read_state(project)["stack"][0]["claims"]] == [
        "gate",
        "gate",
        "reviewer",
        "gate",
    ]


def test_a_reviewer_without_a_key_is_refused_at_start(tmp_path: Path) -> None:
    env = {k: v for k, v in hook_env().items() if not k.startswith("ANTHROPIC_")}
    out = start(tmp_path, env, "--reviewer", MODEL)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        f"forgeflare: error: --reviewer {MODEL}: ANTHROPIC_API_KEY is not set, so no claim "
        "could ever be reviewed; export it where Claude Code runs, or point "
        "ANTHROPIC_BASE_URL at another endpoint"
    ]
    assert not state_path(tmp_path).exists()


def imported_by_hook(project: Path, message: str, env: dict[str, str]) -> set[str]:
    out = run_text(
        [*HOOK[:1], "-X", "importtime", *HOOK[1:]],
        cwd=project,
        env=env,
        input=json.dumps({"hook_event_name": "Stop", "last_assistant_message": message}),
        timeout=60,
    )
    return {line.split("|")[-1].strip() for line in out.stderr.splitlines() if "|" in line}


def test_a_stop_without_a_claim_loads_no_reviewer(tmp_path: Path, mock_api: MockAPI) -> None:
    server = mock_api({"conversations": [{"match": "verdict", "responses": [REJECT]}]})
    env = env_for(server)
    project = project_with_work(tmp_path)
    assert start(project, env, "--gate", "true", "--reviewer", MODEL).returncode == 0
    quiet = imported_by_hook(project, "Still working.", env)
    assert "forgeflare.stophook._quick" in quiet
    heavy = {"httpx", "trio", "pydantic", "forgeflare._review", "forgeflare._evidence"}
    assert not heavy & {m for m in quiet if m.split(".")[0] in heavy or m in heavy}
    claimed = imported_by_hook(project, f"Done.\n{SIG}", env)
    assert {"httpx", "trio", "forgeflare._review"} <= claimed  # the measure sees them


def test_outside_git_the_reviewer_judges_without_a_diff(tmp_path: Path, mock_api: MockAPI) -> None:
    server = mock_api({"conversations": [{"match": "verdict", "responses": [REJECT]}]})
    env = env_for(server)
    assert start(tmp_path, env, "--reviewer", MODEL).returncode == 0
    assert "base" not in read_state(tmp_path)["stack"][0]
    out = hook_here(tmp_path, f"Done.\n{SIG}", env=env)
    assert blocks(out), out.stderr
    (body,) = reviews(server)
    assert (
        "# The diff since the run started\n\n```diff\n\n```"
        in body["messages"][0]["content"][0]["text"]
    )
