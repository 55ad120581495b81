"""The own agent asks a question through a Stop hook: real hook scripts, the real agent, the
mock API. A shell Stop hook prints ``{"action": "blocked", "question": "..."}`` (a Python one
returns ``Blocked("...")``); the agent stops, its ``final`` carries the question, and a loop
running it finishes ``blocked`` (exit 20) with that question."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from agent_support import read_json, run_agent, text_response
from mockapi_support import MockAPI
from supervisor_agents.project import Project, base_env

QUESTION = "The spec names two retry policies; which one wins?"
# A real hook: it keeps what it was given and asks when the turn ended normally.
ASK_HOOK = f"""#!/usr/bin/env bash
input=$(cat)
printf '%s\\n' "$input" >> stop-hook-input.jsonl
if [[ "$input" == *'"reason": "end_turn"'* ]]; then
  printf '%s\\n' '{json.dumps({"action": "blocked", "question": QUESTION})}'
else
  echo '{{"action": "continue"}}'
fi
"""
HOOKS_TOML = '[[hooks]]\nevent = "Stop"\ncommand = "hooks/ask.sh"\n'
PY_HOOKS = f"""
from forgeflare.hooks import Blocked, hook

@hook("Stop")
def ask(reason):
    return Blocked({QUESTION!r}) if reason == "end_turn" else None
"""


def with_ask_hook(directory: Path) -> None:
    script = directory / "hooks" / "ask.sh"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(ASK_HOOK)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    (directory / ".forgeflare").mkdir(exist_ok=True)
    (directory / ".forgeflare" / "hooks.toml").write_text(HOOKS_TOML)


def test_a_shell_stop_hook_question_finishes_the_loop_blocked(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    project = Project(tmp_path)
    with_ask_hook(project.dir)
    server = mock_api({"responses": [text_response("Both policies look plausible."),
                                     text_response("never reached")]})  # fmt: skip
    env = base_env(ANTHROPIC_API_URL=server.url, ANTHROPIC_API_KEY="test-key")

    done = project.run("--mode", "planning", "--max-iterations", "3", env=env)

    assert done.code == 20, done.stderr
    rec = project.record()
    assert rec["finish_type"] == "blocked"
    assert rec["question"] == QUESTION
    assert len(rec["iterations"]) == 1  # parked after the first iteration
    assert len(server.requests()) == 1
    assert QUESTION in done.stdout + done.stderr
    # The hook really ran in the agent, with the Stop event on its stdin.
    lines = (project.dir / "stop-hook-input.jsonl").read_text().splitlines()
    (seen,) = [json.loads(line) for line in lines]
    assert (seen["event"], seen["reason"]) == ("Stop", "end_turn")


def test_a_python_stop_hook_question_is_the_agents_final_question(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    (tmp_path / "askhooks.py").write_text(PY_HOOKS)
    server = mock_api({"responses": [text_response("Both look plausible.")]})

    proc = run_agent(tmp_path, server.url, "task", "--hooks-module", "askhooks")

    assert proc.returncode == 0, proc.stderr
    final = read_json(tmp_path / ".forgeflare" / "convergence.json")["final"]
    assert (final["reason"], final["question"]) == ("end_turn", QUESTION)
    assert len(server.requests()) == 1  # stopped: no continuation was sent


def test_a_blocked_answer_without_a_question_is_the_hooks_failure(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    with_ask_hook(tmp_path)
    (tmp_path / "hooks" / "ask.sh").write_text('#!/bin/sh\necho \'{"action": "blocked"}\'\n')
    server = mock_api({"responses": [text_response("Done.")]})

    proc = run_agent(tmp_path, server.url, "task")

    assert proc.returncode == 0, proc.stderr
    why = "hook failed: hooks/ask.sh returned invalid JSON: blocked action without a 'question'"
    assert why in proc.stderr
    final = read_json(tmp_path / ".forgeflare" / "convergence.json")["final"]
    assert final.get("question") is None
