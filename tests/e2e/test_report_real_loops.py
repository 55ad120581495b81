"""``forgeflare runs`` and ``forgeflare report`` on records written by real loops of the own
agent against ``forgeflare mock-api``: finish types complete, error, budget and manual."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
import trio

from agent_support import text_response, tick_response
from cli_inprocess import forgeflare_here
from mockapi_support import MockServer, start_mock_server
from supervisor_agents.project import Project, base_env, wait_for

OPUS_IN = 5 / 1e6  # USD per input token, claude-opus-4-6 list price
TICK = tick_response()


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    """One project, four runs of the real agent, each against its own scripted mock: the loops
    that end by themselves run in this process (their agent, the point here, is a process
    either way); the one stopped by a signal is a ``forgeflare loop`` process."""
    project = Project(tmp_path_factory.mktemp("night"))
    project.write("IMPLEMENTATION_PLAN.md", "# Plan\n\n- [ ] one\n")
    servers: list[MockServer] = []

    def env(script: dict[str, Any], **extra: str) -> dict[str, str]:
        server = start_mock_server(script, directory=tmp_path_factory.mktemp("mockapi"))
        servers.append(server)
        return base_env(
            ANTHROPIC_API_URL=server.url,
            ANTHROPIC_API_KEY="test-key",
            FORGEFLARE_TIME_SCALE="0.01",
            **extra,
        )

    try:
        # complete: the agent ticks the plan's one task
        done = trio.run(
            partial(project.arun, env=env({"responses": [TICK, text_response("Ticked it.")]}))
        )
        assert done.code == 0, done.stderr
        # error: a 400 is no outage; one error iteration is the limit here
        bad = {"error": {"status": 400, "message": "max_tokens: too large"}}
        done = trio.run(
            partial(
                project.arun,
                "--mode",
                "planning",
                env=env({"responses": [bad]}, FRESHER_MAX_CONSECUTIVE_ERRORS="1"),
            )
        )
        assert done.code == 12, done.stderr
        # budget: $5 of Opus input per iteration against a cap of $8
        million = {
            **text_response("step"),
            "usage": {"input_tokens": 1_000_000, "output_tokens": 0},
        }
        done = trio.run(
            partial(
                project.arun,
                "--mode",
                "planning",
                "--model",
                "claude-opus-4-6",
                env=env({"responses": [million] * 4}, FRESHER_MAX_COST="8"),
            )
        )
        assert done.code == 17, done.stderr
        # manual: SIGTERM while the agent waits for the API's answer
        slow = env({"responses": [{**text_response("late"), "delay_ms": 600_000}]})
        loop = project.popen("--mode", "planning", env=slow)
        wait_for(lambda: len(servers[-1].requests()) == 1)
        loop.terminate()
        assert loop.wait(timeout=60) == 130
        yield project
    finally:
        for server in servers:
            server.stop()


@pytest.fixture(scope="module")
def listed(night: Project) -> list[dict[str, Any]]:
    """``forgeflare runs --json`` of the night, asked once for the tests that read it (in-process,
    as ``report`` below: the records real loops wrote are the point, not a reader's process)."""
    done = forgeflare_here(night.dir, "runs", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_runs_of_real_loops(night: Project, listed: list[dict[str, Any]]) -> None:
    runs = listed
    assert [r["finish_type"] for r in runs] == ["manual", "budget", "error", "complete"]
    manual, budget, error, complete = runs
    assert complete["iterations"] == 1
    assert complete["tasks_done"] == 1
    # the scripted usage of the two requests, as the agent reported it to the records
    scripted = [TICK["usage"], text_response("")["usage"]]
    assert complete["tokens"] == sum(u["input_tokens"] + u["output_tokens"] for u in scripted)
    assert manual["iterations"] == 1
    assert manual["reason"].startswith("stopped by hand")
    assert error["iterations"] == 1
    assert budget["iterations"] == 2
    assert abs(budget["cost_usd"] - 2 * 1_000_000 * OPUS_IN) < 1e-9
    assert budget["tokens"] >= 2_000_000
    done = forgeflare_here(night.dir, "runs")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "stopped: the budget of $8 is spent ($10.00)" in text
    assert "stopped by hand" in text
    assert "the last one `api_error` API returned 400 invalid_request_error" in text


@pytest.mark.parametrize(
    ("finish", "needle"),
    [
        ("complete", "complete: no open task left in the plan"),
        ("error", "1 error iteration in a row, the last one `api_error`"),
        ("budget", "the budget of $8 is spent"),
        ("manual", "stopped by hand"),
    ],
)
def test_report_of_each_real_loop(
    night: Project, listed: list[dict[str, Any]], finish: str, needle: str
) -> None:
    (run,) = [r for r in listed if r["finish_type"] == finish]
    done = forgeflare_here(night.dir, "report", run["run_id"])
    assert done.returncode == 0, done.stderr
    assert needle in done.stdout
    assert run["run_id"] in done.stdout
