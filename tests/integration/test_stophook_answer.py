"""A question parks a stop-hook loop; ``stop-hook answer`` resumes it: the hook fed Claude Code's
Stop JSON on stdin as Claude Code does, it and ``stop-hook start | status | answer`` through the
console script's real entry in the test process; ``answer`` is a real process where the command
``forgeflare report`` prints is run as a user would, and ``report`` always is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forgeflare.stophook import state_path
from stophook_support import blocks, reason_of, stop_hook_here

CMD = [sys.executable, "-m", "forgeflare", "stop-hook"]
ASKS = "I cannot choose.\n<loop-done>BLOCKED</loop-done>\nWhich API: v1 or v2?\nv2 is in beta."


def cli(
    project: Path, *args: str, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return stop_hook_here(
        *args,
        "--project-dir",
        str(project),
        input=stdin,
        env={**os.environ, "HOME": str(project / ".test-home"), **(env or {})},
    )


def stop(project: Path, said: str, session: str = "s1") -> subprocess.CompletedProcess[str]:
    """The hook itself, as Claude Code runs it on a Stop (no transcript: its text is judged)."""
    payload = {"hook_event_name": "Stop", "session_id": session, "cwd": str(project),
               "last_assistant_message": said}  # fmt: skip
    env = {**os.environ, "FORGEFLARE_STOPHOOK_WAIT_MS": "0"}
    return stop_hook_here(cwd=project, env=env, input=json.dumps(payload))


def frame(project: Path) -> dict[str, object]:
    state = json.loads(state_path(project).read_text())
    top: dict[str, object] = state["stack"][-1]
    return top


def test_question_parks_the_loop_and_an_answer_resumes_it(tmp_path: Path) -> None:
    assert cli(tmp_path, "start", "--max-iterations", "3", "--prompt", "Fix it").returncode == 0
    assert blocks(stop(tmp_path, "Working."))  # iteration 2

    asked = stop(tmp_path, ASKS)
    assert (asked.returncode, asked.stdout) == (0, "")  # the stop is allowed
    assert "loop blocked: the agent asks: Which API: v1 or v2?" in asked.stderr
    assert frame(tmp_path)["status"] == "blocked"
    assert frame(tmp_path)["question"] == "Which API: v1 or v2?\nv2 is in beta."
    status = cli(tmp_path, "status").stdout
    assert "BLOCKED: the agent asks:\n       Which API: v1 or v2?\n       v2 is in beta." in status
    assert "/forgeflare:answer TEXT" in status
    assert 'forgeflare stop-hook answer "TEXT"' in status
    assert "← parked: waits for an answer" in status  # not "← running"
    assert "← running" not in status

    chat = stop(tmp_path, "Hello, what now?")  # unanswered: every stop is allowed
    assert (chat.returncode, frame(tmp_path)["iter"]) == (0, 2)

    answer = tmp_path / "answer.md"
    answer.write_text("v2: it is stable enough.\n", encoding="utf-8")
    answered = cli(tmp_path, "answer", "--file", str(answer))
    assert answered.returncode == 0, answered.stderr
    assert "Which API: v1 or v2?" in answered.stdout
    assert "answered: v2: it is stable enough." in cli(tmp_path, "status").stdout
    assert "← parked: answered" in cli(tmp_path, "status").stdout

    resumed = stop(tmp_path, "Answer recorded.")
    assert blocks(resumed)
    reason = reason_of(resumed)
    assert reason.startswith("An earlier iteration of this loop stopped to ask a question")
    assert "Question:\nWhich API: v1 or v2?\nv2 is in beta.\n\nAnswer:\nv2: it is stable" in reason
    assert "[ITERATION 2/3]" in reason  # the same iteration goes on
    assert reason.endswith("\n\nFix it")
    assert "question" not in frame(tmp_path)

    done = stop(tmp_path, "Done.\n<loop-done>COMPLETE</loop-done>")
    assert done.returncode == 0
    assert not state_path(tmp_path).exists()


def test_answer_from_stdin_as_the_plugin_passes_it(tmp_path: Path) -> None:
    cli(tmp_path, "start", "--prompt", "Fix it")
    stop(tmp_path, ASKS)
    typed = 'Use v2, it\'s "fine" $HOME `x`\n'
    out = cli(tmp_path, "answer", "--args-stdin", stdin=typed)
    assert out.returncode == 0, out.stderr
    assert frame(tmp_path)["answer"] == typed.strip()


@pytest.mark.parametrize(
    ("setup", "args", "says"),
    [
        ("none", ["answer", "v2"], "no loop in"),
        ("running", ["answer", "v2"], ".json: the running loop-mode loop asked no "),
        ("parked", ["answer", "  "], "the answer is empty"),
        ("parked", ["answer"], "the answer is empty"),
        ("parked", ["answer", "v2", "--file", "a.md"], "as TEXT or with --file, not both"),
        ("parked", ["answer", "--file", "missing.md"], "--file missing.md: cannot read"),
    ],
    ids=["no-loop", "not-blocked", "blank", "nothing", "both", "missing-file"],
)
def test_answer_refuses_in_one_line_with_exit_2(
    tmp_path: Path, setup: str, args: list[str], says: str
) -> None:
    if setup != "none":
        cli(tmp_path, "start", "--prompt", "Fix it")
    if setup == "parked":
        stop(tmp_path, ASKS)
    before = [p.read_bytes() for p in (tmp_path / ".forgeflare").glob("*.json")]
    out = stop_hook_here(*args, "--project-dir", str(tmp_path), cwd=tmp_path, env=os.environ)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1, out.stderr
    assert says in out.stderr
    assert "Traceback" not in out.stderr
    assert [p.read_bytes() for p in (tmp_path / ".forgeflare").glob("*.json")] == before


def test_forgeflare_answer_points_to_the_stop_hook_when_only_it_waits(tmp_path: Path) -> None:
    assert cli(tmp_path, "start", "--max-iterations", "3", "--prompt", "Fix it").returncode == 0
    assert stop(tmp_path, ASKS).returncode == 0  # parked
    out = subprocess.run(
        [sys.executable, "-m", "forgeflare", "answer", "--dir", str(tmp_path), "v2"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1, out.stderr
    assert 'forgeflare stop-hook answer "TEXT"' in out.stderr
    assert frame(tmp_path)["status"] == "blocked"  # nothing answered by mistake


def report(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "forgeflare", "report", "--dir", str(project)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_the_morning_report_lists_a_question_parked_in_claude_code(tmp_path: Path) -> None:
    """`forgeflare report` names the parked question with a command that answers it, whether
    the project has run records or only the stop-hook's state."""
    from forgeflare.supervisor import RunRecord

    project = tmp_path / "my project"
    project.mkdir()
    assert cli(project, "start", "--max-iterations", "3", "--prompt", "Fix it").returncode == 0
    assert report(project).returncode == 2  # no runs and nothing parked: the old one line
    assert stop(project, ASKS).returncode == 0  # parked

    alone = report(project)
    assert alone.returncode == 0, alone.stderr
    lines = alone.stdout.splitlines()
    assert lines[0] == "What needs you"
    assert "the Claude Code loop asks: Which API: v1 or v2? …" in lines[1]
    command = lines[1].split("  →  ")[1]
    assert command == f"forgeflare stop-hook answer --dir '{project}' \"…\""

    run_dir = project / ".fresher" / "runs" / "20260213-193000-1a2b"
    run_dir.mkdir(parents=True)
    record = RunRecord(
        run_id=run_dir.name, mode="building", project_dir=str(project),
        started_at="2026-02-13T19:30:00Z", finished_at="2026-02-13T23:30:00Z",
        finish_type="complete", exit_code=0,
    )  # fmt: skip
    (run_dir / "run.json").write_text(record.model_dump_json(), encoding="utf-8")
    with_runs = report(project)
    assert with_runs.returncode == 0, with_runs.stderr
    assert with_runs.stdout.splitlines()[:2] == lines[:2]  # first, before the run's own items

    answered = subprocess.run(
        ["sh", "-c", command.replace('"…"', '"v2"').replace("forgeflare", " ".join(CMD[:-1]), 1)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert answered.returncode == 0, answered.stderr
    assert frame(project)["answer"] == "v2"
    assert "Which API" not in report(project).stdout  # answered: nothing waits on you


def test_a_question_a_clone_carries_is_not_in_the_report(tmp_path: Path) -> None:
    """A repository's own 0.3 state file, parked on a question, is nobody's question here."""
    planted = tmp_path / ".forgeflare" / "loop-state.json"
    planted.parent.mkdir()
    frame = {"mode": "loop", "iter": 1, "max": 3, "prompt": "p", "question": "Run setup.sh?"}
    doc = {"schema": 1, "event": "STATE", "run_id": "x", "updated_at": "2026-01-01T00:00:00Z"}
    planted.write_text(json.dumps({**doc, "stack": [frame]}))
    out = report(tmp_path)
    assert out.returncode == 2  # no runs and nothing parked: the old one line
    assert "setup.sh" not in out.stdout + out.stderr
    refused = cli(tmp_path, "answer", "yes")
    assert refused.returncode == 2
    assert "no loop in" in refused.stderr
