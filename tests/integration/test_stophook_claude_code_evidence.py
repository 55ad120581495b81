"""Completion you can trust inside the real, pinned Claude Code (``claude -p``), through the
stop-hook: a red gate, a reviewer that rejects, a reviewer that fails, and a loop that stalls.

One mock server answers both Claude Code (its conversation is matched by its ``Bash`` tool)
and the stop-hook's reviewer (matched by the ``verdict`` tool). What Claude Code sent back
after each blocked stop is read where the model reads it: in the requests the mock recorded.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from test_stophook_claude_code import (
    DONE,
    claude,
    forgeflare,
    last_user_text,
    project_with_hook,
    project_with_plugin,
    state,
    turns,
)

from agent_support import text_response as text
from agent_support import verdict
from forgeflare.stophook import continued
from mockapi_support import MockAPI, MockServer

RED = "echo 'FAILED tests/test_calc.py::test_divide - ZeroDivisionError'; exit 4"
MODEL = "claude-sonnet-4-5"


def script(session: list[dict[str, Any]], reviewer: list[dict[str, Any]]) -> dict[str, Any]:
    """Claude Code's turns, and the reviewer's answers, on one server."""
    return {
        "conversations": [
            {"match": "verdict", "responses": reviewer},
            {"match": "Bash", "responses": session},
        ],
        "when_exhausted": "error",
    }


def agent_turns(server: MockServer) -> list[dict[str, Any]]:
    return [b for b in turns(server) if b.get("tools", [{}])[0].get("name") != "verdict"]


def reviews(server: MockServer) -> list[dict[str, Any]]:
    return [b for b in turns(server) if b.get("tools", [{}])[0].get("name") == "verdict"]


def session(
    claude_code: Path, project: Path, tmp_path: Path, server: MockServer
) -> subprocess.CompletedProcess[str]:
    """One real session on the task, with the Stop hook's runs in its output."""
    return claude(
        claude_code, project, tmp_path / "home", server, "Make divide safe", "--include-hook-events"
    )


def stop_hooks(out: subprocess.CompletedProcess[str]) -> list[tuple[int | str, str]]:
    """Each Stop hook run of the session: ``"block"`` when it continued the session (exit 0, the
    continuation on stdout), else its exit code; and its stderr, in order."""
    runs = []
    for line in out.stdout.splitlines():
        if '"hook_response"' in line:
            event = json.loads(line)
            if event.get("hook_event") == "Stop":
                blocked = event["exit_code"] == 0 and continued(event.get("stdout") or "")
                runs.append(("block" if blocked else event["exit_code"], event["stderr"]))
    return runs


def loop(tmp_path: Path, *options: str) -> Path:
    project = project_with_hook(tmp_path)
    # The home's environment carries a key: --reviewer refuses to start without one.
    forgeflare(project, "start", "--prompt", "Make divide safe", *options, home=tmp_path / "h0")
    return project


def test_a_claim_with_a_red_gate_continues_with_the_failing_tail(
    tmp_path: Path, mock_api: MockAPI, claude_code: Path
) -> None:
    project = loop(tmp_path, "--max-iterations", "2", "--gate", RED)
    server = mock_api(script([text(f"Divide is safe.\n{DONE}"), text("Looking again.")], []))

    out = session(claude_code, project, tmp_path, server)

    assert out.returncode == 0, out.stderr[-2000:]
    sent = agent_turns(server)
    assert len(sent) == 2  # the claim was refused: one more turn, then the cap
    feedback = last_user_text(sent[1])
    assert "claimed completion (the completion tag), but it was refused" in feedback
    assert f"The gate `{RED}` exited 4" in feedback
    assert "tests/test_calc.py::test_divide - ZeroDivisionError" in feedback
    assert "[ITERATION 2/2]" in feedback
    assert [code for code, _ in stop_hooks(out)] == ["block", 0]
    assert state(project) is None


def test_a_claim_the_reviewer_rejects_continues_with_its_reasons(
    tmp_path: Path, mock_api: MockAPI, claude_code: Path
) -> None:
    project = loop(tmp_path, "--max-iterations", "3", "--reviewer", MODEL)
    rejected = verdict(False, ["divide(1, 0) still raises"], ["a guard for b == 0"])
    accepted = verdict(True, ["divide is guarded"], [])
    server = mock_api(
        script(
            [
                text(f"Divide is safe.\n{DONE}"),
                text(f"Added the guard.\n{DONE}"),
            ],
            [rejected, accepted],
        )
    )

    out = session(claude_code, project, tmp_path, server)

    assert out.returncode == 0, out.stderr[-2000:]
    sent = agent_turns(server)
    assert len(sent) == 2  # rejected once, then accepted: the loop completed
    feedback = last_user_text(sent[1])
    assert "An independent reviewer judged the work not complete." in feedback
    assert "- divide(1, 0) still raises" in feedback
    assert "Missing:\n- a guard for b == 0" in feedback
    assert "[ITERATION 2/3]" in feedback
    asked = reviews(server)
    assert len(asked) == 2
    shown = asked[0]["messages"][0]["content"][0]["text"]
    assert "# The task\n\nMake divide safe" in shown
    assert "Divide is safe." in shown  # the final message, read from the transcript
    assert state(project) is None
    saved = sorted((project / ".forgeflare" / "loop-reviews").iterdir())
    assert len(saved) == 2
    ((code, note),) = stop_hooks(out)[-1:]
    assert code == 0
    assert f"reviewer {MODEL}: complete (1050 tokens, $" in note
    assert json.loads(saved[0].read_text())["response"]["content"][0]["input"]["complete"] is False


def test_a_reviewer_returning_garbage_or_a_500_neither_completes_nor_crashes(
    tmp_path: Path, mock_api: MockAPI, claude_code: Path
) -> None:
    project = loop(tmp_path, "--max-iterations", "3", "--reviewer", MODEL)
    garbage = verdict("perhaps", [], [])
    server_error = {"error": {"status": 500, "type": "api_error", "message": "reviewer down"}}
    server = mock_api(
        script(
            [text(f"Done.\n{DONE}"), text(f"Done, really.\n{DONE}"), text("Still here.")],
            [garbage, server_error],
        )
    )

    out = session(claude_code, project, tmp_path, server)

    assert out.returncode == 0, out.stderr[-2000:]
    sent = agent_turns(server)
    assert len(sent) == 3  # neither claim completed; the session went on to the cap
    first, second = last_user_text(sent[1]), last_user_text(sent[2])
    assert "Your completion claim was not accepted: the reviewer gave no verdict: " in first
    assert "malformed verdict (complete:" in first
    assert "Your completion claim was not accepted: the reviewer gave no verdict: " in second
    assert "500" in second
    assert "[ITERATION 3/3]" in second
    assert "Traceback" not in out.stdout + out.stderr
    hooks = stop_hooks(out)
    assert [code for code, _ in hooks] == ["block", "block", 0]  # never failed open, never crashed
    assert "internal error" not in "".join(note for _, note in hooks)
    assert len(reviews(server)) == 2
    assert state(project) is None


def test_a_session_repeating_one_failing_gate_finishes_stalled(
    tmp_path: Path, mock_api: MockAPI, claude_code: Path
) -> None:
    project = loop(tmp_path, "--max-iterations", "10", "--gate", RED, "--stall-after", "2")
    server = mock_api(
        script(
            [text(f"Fixed it.\n{DONE}"), text(f"Fixed it now.\n{DONE}"), text(f"Fixed.\n{DONE}")],
            [],
        )
    )

    out = session(claude_code, project, tmp_path, server)

    assert out.returncode == 0, out.stderr[-2000:]
    sent = agent_turns(server)
    # Claim 1 sets the failures, claim 2 repeats them (1 in a row), claim 3 too (2): stalled.
    assert len(sent) == 3
    assert "tests/test_calc.py::test_divide" in last_user_text(sent[2])
    assert state(project) is None  # the loop ended long before its cap of 10
    code, note = stop_hooks(out)[-1]
    assert code == 0
    assert "stalled: 2 claims in a row refused with the same gate failures" in note
    assert "failing: tests/test_calc.py::test_divide" in note


def test_the_plugin_command_passes_the_reviewer_on(
    tmp_path: Path, mock_api: MockAPI, claude_code: Path
) -> None:
    project, home = project_with_plugin(tmp_path)
    rejected = verdict(False, ["divide(1, 0) still raises"], [])
    server = mock_api(
        script(
            [text(f"Divide is safe.\n{DONE}"), text(f"Guarded.\n{DONE}")],
            [rejected, verdict(True, ["guarded"], [])],
        )
    )

    out = claude(
        claude_code,
        project,
        home,
        server,
        f"/forgeflare:loop Make divide safe --reviewer {MODEL} --max-iterations 4",
        "--include-hook-events",
    )

    assert out.returncode == 0, out.stderr[-2000:]
    sent = agent_turns(server)
    assert len(sent) == 2
    assert "- divide(1, 0) still raises" in last_user_text(sent[1])
    assert [body["model"] for body in reviews(server)] == [MODEL, MODEL]
    assert [code for code, _ in stop_hooks(out)] == ["block", 0]
    assert state(project) is None
