"""When nobody is there: a question parks a real loop, ``forgeflare answer`` resumes it.

The own agent runs against ``forgeflare mock-api`` (a scripted final message carries the
BLOCKED tag and the question); the notification goes to a stand-in ``[notify] command``.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from agent_support import text_response
from chromium_support import CHROMIUM, NO_CHROMIUM, dom_of
from cli_inprocess import forgeflare_here, run_cli
from forgeflare._completion import BLOCKED_TAG
from mockapi_support import MockAPI, MockServer, start_mock_server
from supervisor_agents.project import Done, Project, base_env, forgeflare

QUESTION = "Which database should the cache use: Postgres or SQLite?"
ASKS = text_response(f"I cannot choose this alone.\n\n{BLOCKED_TAG}\n{QUESTION}\n")


def env_for(server: MockServer, **extra: str) -> dict[str, str]:
    return base_env(ANTHROPIC_API_URL=server.url, ANTHROPIC_API_KEY="test-key", **extra)


def prompt_of(request: dict[str, Any]) -> str:
    first = request["body"]["messages"][0]["content"]
    if isinstance(first, str):
        return first
    return "\n".join(block.get("text", "") for block in first)


def open_question(project: Project) -> str | None:
    dirs = project.run_dirs()
    try:
        return json.loads((dirs[0] / "run.json").read_text()).get("question") if dirs else None
    except (FileNotFoundError, ValueError):  # not written yet
        return None


@dataclass
class Parked:
    """One loop parked by a question (shared, read-only): its project, its end and the requests
    its agent made."""

    project: Project
    done: Done
    requests: list[dict[str, Any]]


@pytest.fixture(scope="module")
def parked(tmp_path_factory: pytest.TempPathFactory) -> Parked:
    """A loop with a ``[notify] command`` whose first iteration asks: run once for the tests
    that read what it left (the record, the notification, the report), in this process (its
    agent is a process; the loop that parks and resumes below is one too)."""
    project = Project(tmp_path_factory.mktemp("asked"))
    project.write(".fresher/config.toml", '[notify]\ncommand = "cat > notified.json"\n')
    script = {"responses": [ASKS, text_response("never reached")]}
    with start_mock_server(script, directory=tmp_path_factory.mktemp("mockapi")) as server:
        args = ("--mode", "planning", "--max-iterations", "5")
        done = trio.run(partial(project.arun, *args, env=env_for(server)))
        return Parked(project, done, server.requests())


def test_a_question_parks_the_loop_and_notifies(parked: Parked) -> None:
    project, done = parked.project, parked.done
    assert done.code == 20, done.stderr
    rec = project.record()
    assert rec["finish_type"] == "blocked"
    assert rec["question"] == QUESTION
    assert rec["iterations"][-1]["question"] == QUESTION
    assert len(rec["iterations"]) == 1  # parked: no second iteration
    assert QUESTION in done.stdout + done.stderr
    notified = json.loads((project.dir / "notified.json").read_text())
    assert notified["event"] == "blocked"
    assert notified["question"] == QUESTION
    # the rule is shown to the model like the other tags
    assert BLOCKED_TAG in prompt_of(parked.requests[0])


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_the_report_opens_with_what_needs_you(tmp_path: Path, parked: Parked) -> None:
    project = parked.project
    assert parked.done.code == 20
    text = forgeflare_here(project.dir, "report").stdout
    assert text.splitlines()[0] == "What needs you"
    assert f"the agent asks: {QUESTION}" in text.splitlines()[1]
    assert f"forgeflare answer --dir {project.dir}" in text.splitlines()[1]
    page = tmp_path / "asked.html"
    assert forgeflare_here(project.dir, "report", "--html", str(page)).returncode == 0
    dom = dom_of(page, tmp_path / "profile")
    headings = re.findall(r"<h2>(.*?)</h2>", dom)
    assert headings[0] == "What needs you"
    section = dom[dom.index('id="needs-you"') : dom.index("</section>")]
    assert QUESTION in section
    assert "forgeflare answer" in section
    # a clean night's page says nothing needs you: tests/unit/test_report_todo.py (pure)


def test_answer_then_resume_puts_both_in_the_next_prompt(tmp_path: Path, mock_api: MockAPI) -> None:
    project = Project(tmp_path)
    server = mock_api({"responses": [ASKS, text_response("using SQLite, done")]})
    env = env_for(server)
    assert project.run("--mode", "planning", "--max-iterations", "2", env=env).code == 20
    # the one `answer` process here; the rest run in-process (their answers are the point)
    first = forgeflare(project.dir, "answer", "--dir", str(project.dir), "SQLite")
    assert first.stdout.startswith("answered run "), first.stderr
    answered = forgeflare_here(
        project.dir, "answer", "--dir", str(project.dir), "SQLite, keep it simple"
    )
    assert answered.returncode == 0, answered.stderr
    assert answered.stdout.startswith("replaced the earlier answer to run ")  # never silently
    (run_dir,) = project.run_dirs()
    assert (run_dir / "answer.md").read_text().strip() == "SQLite, keep it simple"
    done = project.run("--resume", "--mode", "planning", "--max-iterations", "2", env=env)
    assert done.code == 10, done.stderr
    rec = project.record()
    assert rec["question"] is None
    assert rec["answers"][0]["question"] == QUESTION
    assert rec["answers"][0]["answer"] == "SQLite, keep it simple"
    second = prompt_of(server.requests()[1])
    assert second.index(QUESTION) < second.index("SQLite, keep it simple")
    assert second.startswith("An earlier iteration of this loop stopped to ask a question")
    # the answer was taken: a second `answer` finds no open question
    again = forgeflare_here(project.dir, "answer", "more")
    assert again.returncode == 2
    assert again.stderr.strip().splitlines() == [
        "forgeflare: error: answer: no run in .fresher/runs has an open question"
    ]


async def test_wait_picks_up_an_answer_written_during_the_wait(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    """The loop runs in this process (the wait is the point; its agent is still a process)."""
    project = Project(tmp_path)
    project.write(".fresher/config.toml", '[limits]\non_blocked = "wait:60s"\n')
    server = mock_api({"responses": [ASKS, text_response("done")]})
    result: list[Done] = []

    async def loop() -> None:
        env = env_for(server)
        result.append(await project.arun("--mode", "planning", "--max-iterations", "2", env=env))

    with trio.fail_after(150):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(loop)
            while open_question(project) != QUESTION:  # bounded by fail_after
                await trio.sleep(0.02)
            answer = str(project.write("a.md", "B"))
            answered = forgeflare_here(project.dir, "answer", "--file", answer)
            assert answered.returncode == 0, answered.stderr
    (done,) = result
    assert done.code == 10, done.stderr
    rec = project.record()
    assert [w["kind"] for w in rec["waits"]] == ["answer_wait"]
    assert rec["iterations"][0]["decision"] == "answered"
    assert "Answer:\nB" in prompt_of(server.requests()[1])


async def test_wait_without_an_answer_finishes_blocked(tmp_path: Path, mock_api: MockAPI) -> None:
    """The loop runs in-process (the wait is the point; its agent is still a process)."""
    project = Project(tmp_path)
    project.write(".fresher/config.toml", '[limits]\non_blocked = "wait:300ms"\n')
    server = mock_api({"responses": [ASKS]})
    done = await project.arun("--mode", "planning", env=env_for(server))
    assert done.code == 20, done.stderr
    rec = project.record()
    assert rec["waits"][0]["kind"] == "answer_wait"
    assert rec["question"] == QUESTION


def test_a_bad_on_blocked_is_one_line_before_anything_starts(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.write(".fresher/config.toml", '[limits]\non_blocked = "later"\n')
    # the real CLI in-process (the refusal is the point; other tests start `loop`)
    done = forgeflare_here(project.dir, "loop", "--dir", str(project.dir), "--agent-cmd", "true")
    assert done.returncode == 2
    assert "on_blocked" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not project.run_dirs()


def test_a_blocked_loop_in_a_fleet_does_not_hold_up_the_others(tmp_path: Path) -> None:
    from test_fleet import (
        completing_agent,
        fleet_file,
        fleet_here,
        loop,
        make_repo,
        shell_agent,
        state,
    )

    repo = make_repo(tmp_path, "asks", "works")
    # neither loop needs a model: the one that asks is a shell agent whose report file holds
    # the question (the own agent's question is the parked loop above), the one that works
    # commits and checks off its plan; the fleet runs in-process, its loops are processes
    report = json.dumps({"outcome": "ok", "question": QUESTION})
    asks = loop("asks", **shell_agent(f'printf %s {shlex.quote(report)} > "$FORGEFLARE_REPORT"'))
    works = loop("works", **completing_agent("works", "works.txt", "done"))
    path = fleet_file(tmp_path, "night", [asks, works], parallel=2)
    done = fleet_here("run", str(path), env=base_env())
    assert done.returncode == 1, done.stderr  # one loop did not land
    rec = state(path, "night")
    assert rec["works"]["status"] == "landed", rec
    assert rec["asks"]["finish_type"] == "blocked"
    assert rec["asks"]["status"] == "not_landed"
    assert rec["asks"]["question"] == QUESTION
    assert (repo / "works.txt").exists() or "works.txt" in subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "--name-only", "main"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    # status and report in-process: what they say is the point (test_fleet starts them)
    status = run_cli(["fleet", "status", path], cwd=tmp_path, env=base_env()).stdout
    assert f"asks: {QUESTION}" in status
    assert "forgeflare answer" in status
    lines = run_cli(["fleet", "report", path], cwd=tmp_path, env=base_env()).stdout.splitlines()
    assert lines[0] == "What needs you"
    assert lines[1].startswith(f"  [asks] the agent asks: {QUESTION}")
    assert "forgeflare answer" in lines[1]


def test_answer_usage_errors_are_one_line(tmp_path: Path) -> None:
    cases = [
        (["answer"], 'answer: expected "TEXT" or --file FILE (and --dir PATH)'),
        (["answer", ".", "x", "--file", "a.md"], "as TEXT or with --file, not both"),
        (["answer", "  "], "answer: the answer is empty"),
    ]
    for args, words in cases:
        done = forgeflare_here(tmp_path, *args)
        assert done.returncode == 2, (args, done.stderr)
        (line,) = done.stderr.strip().splitlines()
        assert words in line, (args, line)
