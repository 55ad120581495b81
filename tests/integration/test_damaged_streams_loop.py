"""A real loop whose stand-in ``claude`` or ``codex`` prints damaged stream lines: the loop
warns once per damaged line, records each iteration with the line that broke it, finishes and
runs the ``finished`` hook (issue 40: 2 of 30 such runs used to crash the supervisor)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from supervisor_agents.project import Project, base_env

_STAND_IN = """
import sys
sys.stdin.read()
for line in {lines!r}:
    print(line, flush=True)
"""

_DAMAGED = {
    "claude": [
        json.dumps({"type": "system", "subtype": "init", "model": 5}),
        '{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"\\ud800"}]}}',
        '{"type":"result","subtype":"success","is_er',
        json.dumps({"type": "result", "subtype": "success", "is_error": "no", "usage": []}),
    ],
    "codex": [
        json.dumps({"type": "thread.started", "thread_id": 4.5}),
        json.dumps({"type": "thread.started", "thread_id": {"message": "usage limit"}}),
        json.dumps({"type": "turn.completed", "usage": [1, 2]}),
        json.dumps({"type": "turn.failed", "error": 7}),
    ],
}

_SHAPE_DAMAGED = {"claude": 2, "codex": 4}


@pytest.mark.parametrize("backend", ["claude", "codex"])
def test_a_damaged_stream_ends_with_a_record_and_the_finished_hook(
    backend: str, tmp_path: Path
) -> None:
    project = Project(tmp_path)
    script = project.write("stand_in.py", _STAND_IN.format(lines=_DAMAGED[backend]))
    project.hook("finished", 'echo "$FRESHER_FINISH_TYPE" > "$FRESHER_PROJECT_DIR/finish"')
    done = project.run(
        "--backend",
        backend,
        "--agent-cmd",
        shlex.join([sys.executable, str(script)]),
        "--mode",
        "planning",
        env=base_env(
            FRESHER_MAX_CONSECUTIVE_ERRORS="2",
            FRESHER_ERROR_PAUSE="0",
            IS_SANDBOX="1",  # a stand-in claude, as root: what the real one would need
        ),
    )
    assert "Traceback" not in done.stderr + done.stdout
    assert done.code == 12, done.stderr
    rows = project.record()["iterations"]
    assert [r["outcome"] for r in rows] == ["agent_error", "agent_error"]
    assert rows[0]["detail"].startswith("the agent's stream made no sense at line 1: ")
    assert (tmp_path / "finish").read_text().strip() == "error"
    # one warning per damaged event (the cut line is no JSON: shown as text), per iteration
    assert done.stdout.count("warning: ignored a damaged") == 2 * _SHAPE_DAMAGED[backend]
