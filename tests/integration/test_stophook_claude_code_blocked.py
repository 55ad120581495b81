"""A question parks a stop-hook loop inside the real, pinned Claude Code; an answer resumes it.

The session ends its turn with ``<loop-done>BLOCKED</loop-done>`` and a question: the Stop hook
lets Claude Code stop and keeps the frame with the question. The answer comes from the shell
(``stop-hook answer``) or, inside the session, from the plugin's ``/forgeflare:answer``; the
session's next turn (``claude -p --resume``) then goes on with the loop, and the request the
mock receives carries the question and the answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_support import text_response as text
from claude_code_support import (
    claude_print,
    continuation_sent,
    conversation_turns,
    session_of,
)
from forgeflare.stophook import state_path
from mockapi_support import MockAPI, MockServer
from stophook_support import DONE, stop_hook_cli, stop_hook_for

QUESTION = "Which API should the client use: v1 or v2?"
ASKS = f"I cannot choose without you.\n<loop-done>BLOCKED</loop-done>\n{QUESTION}"
ANSWER = "Use v2; v1 is going away."


def top_frame(project: Path) -> dict[str, Any] | None:
    path = state_path(project)
    if not path.exists():
        return None
    frame: dict[str, Any] = json.loads(path.read_text())["stack"][-1]
    return frame


def park(claude_code: Path, project: Path, home: Path, server: MockServer) -> str:
    """Start a loop and run the session until it asks; check the frame is parked. Its id."""
    start = ("start", "--max-iterations", "5", "--prompt", "Port the client")
    started = stop_hook_for(project, *start, home=home)
    assert started.returncode == 0, started.stderr
    out = claude_print(claude_code, project, home, server, "Port the client")
    assert out.returncode == 0, out.stderr[-2000:]
    assert len(conversation_turns(server)) == 1  # the stop was allowed: no continuation was sent
    frame = top_frame(project)
    assert frame is not None  # kept, not removed like a completed frame
    assert (frame["status"], frame["question"], frame["iter"]) == ("blocked", QUESTION, 1)
    status = stop_hook_for(project, "status", home=home).stdout
    assert f"BLOCKED: the agent asks:\n       {QUESTION}" in status
    assert "/forgeflare:answer TEXT" in status
    return session_of(out)


def assert_resumed_with_the_answer(server: MockServer, project: Path) -> None:
    sent = conversation_turns(server)
    assert len(sent) == 3  # the resumed turn's stop was blocked with the continuation
    feedback = continuation_sent(sent[2])  # the task, not an error with the hook's path
    assert f"Question:\n{QUESTION}\n\nAnswer:\n{ANSWER}" in feedback
    assert "[ITERATION 1/5] Continue working on the task." in feedback
    assert "Port the client" in feedback
    assert top_frame(project) is None  # and the loop then completed


def test_blocked_tag_parks_the_frame_and_a_shell_answer_resumes_it(
    tmp_path: Path, mock_api: MockAPI, claude_code: Path
) -> None:
    home, project = tmp_path / "home", tmp_path / "p"
    project.mkdir()
    assert stop_hook_for(project, "install", home=home).returncode == 0
    server = mock_api(
        {"responses": [text(ASKS), text("Back again."), text(f"Ported to v2.\n{DONE}")]}
    )
    session = park(claude_code, project, home, server)

    answered = stop_hook_cli(project, "answer", ANSWER, home=home)
    assert answered.returncode == 0, answered.stderr
    out = claude_print(claude_code, project, home, server, "--resume", session, "Go on.")

    assert out.returncode == 0, out.stderr[-2000:]
    assert_resumed_with_the_answer(server, project)


def test_plugin_answer_command_resumes_the_loop_in_the_session(
    tmp_path: Path, mock_api: MockAPI, claude_code: Path
) -> None:
    home, project = tmp_path / "home", tmp_path / "p"
    project.mkdir()
    assert stop_hook_for(project, "install", "--plugin", home=home).returncode == 0
    server = mock_api(
        {"responses": [text(ASKS), text("Answer recorded."), text(f"Ported to v2.\n{DONE}")]}
    )
    session = park(claude_code, project, home, server)

    out = claude_print(
        claude_code, project, home, server, "--resume", session, f"/forgeflare:answer {ANSWER}"
    )

    assert out.returncode == 0, out.stderr[-2000:]
    ran = json.dumps(conversation_turns(server)[1]["messages"])
    assert "answered the loop-mode loop" in ran  # the command's answer ran before the model
    assert_resumed_with_the_answer(server, project)
