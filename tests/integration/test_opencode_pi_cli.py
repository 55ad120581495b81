"""The ``opencode`` and ``pi`` backends on their real CLIs (pinned in ``opencode_support`` and
``pi_support``), offline against the project's Messages mock.

Each scenario runs a real loop (in this process; the CLI is a real child) and checks the first
iteration's row (outcome, transient, resets_at, tokens, cost, model) and the loop's next step.
A CLI start is the cost (an OpenCode turn is 5-7 s of CPU): the usage-limit loop's second
iteration, after the window, is the finished iteration its own test reads.
The streams the CLIs wrote are kept in ``tests/fixtures/<cli>/<version>/`` for the readers' unit
tests; ``FORGEFLARE_RECORD_AGENTS=1`` rewrites them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import trio

import opencode_support
import pi_support
from mockapi_support import MockAPI, MockServer, start_mock_server
from opencode_support import quiet_opencode_env, require_opencode
from pi_support import pi_env, require_pi
from supervisor_agents.project import CliLoop, Project, base_env, cli_agent_env, finished_loop

FIXTURES = Path(__file__).parent.parent / "fixtures"
TAG = "All done.\n<loop-done>COMPLETE</loop-done>"
DONE = {"content": [{"type": "text", "text": TAG}], "stop_reason": "end_turn"}
WORK = {
    "content": [
        {"type": "text", "text": "Writing the note."},
        {"type": "tool_use", "name": "bash", "input": {"command": "echo hi > note.txt"}},
    ],
    "stop_reason": "tool_use",
    "usage": {"input_tokens": 1200, "output_tokens": 40},
}


def error(status: int, kind: str, message: str, **headers: str) -> dict[str, Any]:
    return {"error": {"status": status, "type": kind, "message": message, "headers": headers}}


def usage_limit(reset: int) -> dict[str, Any]:
    """Claude's usage limit: the reset in the message and headers, a retry-after of an hour."""
    return error(
        429,
        "rate_limit_error",
        f"Claude AI usage limit reached|{reset}",
        **{
            "anthropic-ratelimit-unified-status": "rejected",
            "anthropic-ratelimit-unified-reset": str(reset),
            "retry-after": "3600",
        },
    )


OVERLOADED = error(529, "overloaded_error", "Overloaded", **{"retry-after": "0"})
AUTH = error(401, "authentication_error", "invalid x-api-key")
BAD_MODEL = error(404, "not_found_error", "model: claude-nope")


@dataclass(frozen=True)
class Cli:
    """One CLI under test: how to find it and the environment it needs."""

    name: str
    version: str
    model: str
    require: Callable[[], Path]
    env: Callable[[Path, str], dict[str, str]]
    overloaded_requests: int
    """Requests one failed iteration makes on an outage (the CLI's own retries)."""


OPENCODE = Cli(
    "opencode",
    opencode_support.VERSION,
    opencode_support.MODEL,
    require_opencode,
    lambda home, url: quiet_opencode_env(home, url),
    6,
)
PI = Cli("pi", pi_support.VERSION, pi_support.MODEL, require_pi, lambda h, u: pi_env(h, u), 1)


@pytest.fixture(scope="module", params=[OPENCODE, PI], ids=["opencode", "pi"])
def cli(request: pytest.FixtureRequest) -> Cli:
    return request.param  # type: ignore[no-any-return]


async def cli_loop(
    cli: Cli,
    server: MockServer,
    tmp_path: Path,
    *names: str,
    iterations: int = 1,
    **settings: str,
) -> CliLoop:
    """A loop (planning mode, ``iterations`` at most, waits scaled to nothing) whose agent is
    the real CLI; ``names`` are the recordings of its first iterations, in order."""
    program = cli.require()
    project = Project(tmp_path / "project")
    project.dir.mkdir()
    cli_env = cli.env(tmp_path / "home", server.url)
    env = cli_agent_env(
        cli.name, program, cli_env, iterations=iterations, FRESHER_MODEL=cli.model, **settings
    )
    loop = await finished_loop(project, env)
    if os.environ.get("FORGEFLARE_RECORD_AGENTS") == "1":
        folder = FIXTURES / cli.name / cli.version
        folder.mkdir(parents=True, exist_ok=True)
        for number, name in enumerate(names, 1):
            log = (project.run_dirs()[0] / f"iteration-{number:03d}.log").read_text()
            # The project's path is this machine's: recordings name a neutral one.
            (folder / f"{name}.jsonl").write_text(log.replace(str(project.dir), "/tmp/project"))
    return loop


@dataclass(frozen=True)
class WindowThenWork:
    """A loop whose first request meets a usage limit and whose next iteration does the work."""

    loop: CliLoop
    reset: int
    requests: list[dict[str, Any]]


@pytest.fixture(scope="module")
def window_then_work(
    cli: Cli, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WindowThenWork]:
    """One real loop read by two tests (read-only): the usage-limit window it waited out and
    the finished iteration after it."""
    tmp = tmp_path_factory.mktemp(f"window-{cli.name}")
    reset = int(time.time()) + 7200
    script = {"responses": [usage_limit(reset), WORK, DONE]}
    with start_mock_server(script, directory=tmp / "mock") as server:
        loop = trio.run(cli_loop, cli, server, tmp, "usage-limit", "ok")
        yield WindowThenWork(loop, reset, server.requests())


def test_a_finished_iteration_is_ok_with_tokens_cost_and_model(
    window_then_work: WindowThenWork,
) -> None:
    loop = window_then_work.loop
    assert loop.done.code == 0, loop.done.stderr[-3000:]
    assert len(loop.rows) == 2, loop.rows
    row = loop.rows[1]  # the iteration after the window: a fresh start of the CLI
    assert row["outcome"] == "ok"
    assert row["turns"] == 2
    assert row["model"] == "claude-sonnet-4-5"
    assert row["tokens"]["input"] > 0
    assert row["tokens"]["output"] > 0
    assert row["cost_usd"] > 0
    assert row["session_id"]
    assert (loop.project.dir / "note.txt").read_text() == "hi\n"
    assert loop.record["finish_type"] == "complete"


def test_every_request_is_the_iterations_own_work(window_then_work: WindowThenWork) -> None:
    # OpenCode asks its small model for a session title unless it is given one: a paid
    # request per iteration that does no work. The loop gives it a title.
    sent = [r for r in window_then_work.requests if r["path"].endswith("/messages")]
    assert len(sent) == 3, [r["body"].get("system") for r in sent]
    assert all(r["body"].get("tools") for r in sent), [r["body"].get("system") for r in sent]


def test_a_usage_limit_is_a_window_the_loop_waits_not_the_cli(
    window_then_work: WindowThenWork,
) -> None:
    loop, reset = window_then_work.loop, window_then_work.reset
    first = loop.rows[0]
    assert first["outcome"] == "rate_limited", loop.log
    assert first["resets_at"] == datetime.fromtimestamp(reset, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    # The loop recorded the window, waited it out (scaled to nothing) and went on.
    assert loop.rows[-1]["outcome"] == "ok"
    assert loop.done.code == 0, loop.done.stderr[-3000:]


async def test_an_outage_is_a_transient_api_error(
    cli: Cli, tmp_path: Path, mock_api: MockAPI
) -> None:
    server = mock_api({"responses": [OVERLOADED] * cli.overloaded_requests + [DONE]})
    loop = await cli_loop(cli, server, tmp_path, "outage", FRESHER_MAX_OUTAGE="0")
    first = loop.rows[0]
    assert first["outcome"] == "api_error", loop.log
    assert first["transient"] is True
    assert len(server.requests()) >= cli.overloaded_requests  # the CLI's own retries ran


@pytest.mark.parametrize(
    ("name", "failure", "said"),
    [("auth", AUTH, "invalid x-api-key"), ("agent-error", BAD_MODEL, "claude-nope")],
)
async def test_a_failure_waiting_cannot_fix_is_an_agent_error_with_its_line(
    cli: Cli,
    tmp_path: Path,
    mock_api: MockAPI,
    name: str,
    failure: dict[str, Any],
    said: str,
) -> None:
    server = mock_api({"responses": [failure], "when_exhausted": "error"})
    loop = await cli_loop(cli, server, tmp_path, name, FRESHER_MAX_CONSECUTIVE_ERRORS="1")
    first = loop.rows[0]
    assert first["outcome"] == "agent_error", loop.log
    assert said in (first.get("detail") or ""), first
    assert loop.done.code != 0
    assert loop.record["finish_type"] != "complete"


async def test_the_own_agent_falls_back_to_the_cli_on_a_usage_limit(
    cli: Cli, tmp_path: Path, mock_api: MockAPI
) -> None:
    program = cli.require()
    limit = error(429, "rate_limit_error", "usage limit", **{"retry-after": "7200"})
    primary = mock_api({"responses": [limit, DONE]})
    fallback = mock_api({"responses": [DONE]})
    project = Project(tmp_path / "project")
    (project.dir / ".fresher").mkdir(parents=True)
    (project.dir / ".fresher" / "config.toml").write_text(
        f'[agent]\nfallback = ["{cli.name}:night"]\n'
        f"[agent.profiles.night]\n"
        f'command = "{program}"\nmodel = "{cli.model}"\n'
    )
    env = base_env(**cli.env(tmp_path / "home", fallback.url))
    env.update(
        ANTHROPIC_API_URL=primary.url,
        FRESHER_MODE="planning",
        FRESHER_MAX_ITERATIONS="3",
        FORGEFLARE_TIME_SCALE="0.0005",
    )
    done = await project.arun(env=env)
    record = project.record()
    rows = [(it["backend"], it.get("profile") or "", it["outcome"]) for it in record["iterations"]]
    assert rows[0] == ("forgeflare", "", "rate_limited"), done.stderr[-3000:]
    assert (cli.name, "night", "ok") in rows[1:], (rows, done.stderr[-3000:])
    assert record["finish_type"] == "complete"
