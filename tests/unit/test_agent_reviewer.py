"""The reviewer's one request through forgeflare's own client, against the real mock API: a
verdict taken with its spend, a bad verdict or no answer as the answer's error (never raised),
a request over the budget not sent; the request and answer saved beside the run."""

from __future__ import annotations

import dataclasses
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_support import verdict
from forgeflare._evidence import GateRun
from forgeflare._review import OVER_BUDGET
from forgeflare.agent import ask_reviewer
from forgeflare.supervisor.evidence import ReviewInput
from mockapi_support import MockServer, start_mock_server

MODEL = "claude-sonnet-4-5"
GIVEN = ReviewInput(
    model=MODEL,
    task="divide two numbers",
    plan="- [x] divide",
    diff="+def divide(a, b): return a / b\n",
    diff_stat=" calc.py | 1 +",
    max_diff=1000,
    gate=GateRun("pytest", 0, "1 passed"),
    final_message="Done. <loop-done>COMPLETE</loop-done>",
    claim="tag",
)

REJECT = verdict(False, ["no zero check"], ["divide(1, 0)"])
ACCEPT = verdict(True, ["done"], [])
# One server for the file (starting one is the slow part), a conversation per test, chosen
# by the task each test gives the reviewer.
SCRIPT: dict[str, Any] = {
    "conversations": [
        {"match": "task-reject", "responses": [REJECT]},
        {"match": "task-garbage", "responses": [verdict("perhaps", [], [])]},
        {"match": "task-no-cap-None", "responses": [ACCEPT]},
        {"match": "task-no-cap-0.0", "responses": [ACCEPT]},
        {"match": "task-unwritable", "responses": [ACCEPT]},
    ]
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MockServer]:
    running = start_mock_server(SCRIPT, directory=tmp_path_factory.mktemp("mockapi"))
    yield running
    running.stop()


def _given(task: str) -> ReviewInput:
    return dataclasses.replace(GIVEN, task=task)


def _env(url: str) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-test"}


async def test_a_verdict_is_taken_with_its_spend_and_saved(
    server: MockServer, tmp_path: Path
) -> None:
    save = tmp_path / "review-001.json"
    answer = await ask_reviewer(
        _given("task-reject"), env=_env(server.url), save_to=save, timeout=60
    )
    assert (answer.complete, answer.reasons, answer.missing) == (
        False,
        ["no zero check"],
        ["divide(1, 0)"],
    )
    assert answer.error is None
    assert answer.tokens["input"] == 1000
    assert answer.tokens["output"] == 50
    assert answer.cost_usd is not None
    assert answer.cost_usd > 0
    assert answer.file == "review-001.json"
    saved = json.loads(save.read_text())
    assert saved["request"]["tool_choice"] == {"type": "tool", "name": "verdict"}
    assert saved["response"]["content"][0]["name"] == "verdict"
    assert saved["error"] is None
    (request,) = [r for r in server.requests() if "task-reject" in json.dumps(r["body"])]
    assert request["body"]["model"] == MODEL
    assert "x-api-key" in request["headers"]


async def test_a_malformed_verdict_is_the_answer_s_error(
    server: MockServer, tmp_path: Path
) -> None:
    answer = await ask_reviewer(
        _given("task-garbage"), env=_env(server.url), save_to=tmp_path / "r.json", timeout=60
    )
    assert answer.complete is None
    assert answer.error is not None
    assert answer.error.startswith("malformed verdict (complete:")
    assert answer.tokens  # the spend counts though the verdict does not


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_no_answer_is_an_error_and_the_request_is_still_saved(tmp_path: Path) -> None:
    env = _env(f"http://127.0.0.1:{_closed_port()}")
    answer = await ask_reviewer(GIVEN, env=env, save_to=tmp_path / "r.json", timeout=30)
    assert answer.complete is None
    assert answer.error
    assert "\n" not in answer.error
    saved = json.loads((tmp_path / "r.json").read_text())
    assert saved["error"] == answer.error
    assert "response" not in saved


async def test_a_request_over_the_budget_is_not_sent(tmp_path: Path) -> None:
    env = _env(f"http://127.0.0.1:{_closed_port()}")  # nothing listens: nothing may be asked
    answer = await ask_reviewer(GIVEN, env=env, save_to=tmp_path / "r.json", cap=1.0, spent=0.999)
    assert answer.complete is None
    assert answer.error is not None
    assert answer.error.startswith(OVER_BUDGET)
    assert "budget is left: not sent" in answer.error
    assert json.loads((tmp_path / "r.json").read_text())["error"] == answer.error


@pytest.mark.parametrize("spent", [None, 0.0])
async def test_no_cap_or_an_unknown_spend_never_refuses(
    server: MockServer, tmp_path: Path, spent: float | None
) -> None:
    answer = await ask_reviewer(
        _given(f"task-no-cap-{spent}"),
        env=_env(server.url),
        save_to=tmp_path / "r.json",
        cap=None,
        spent=spent,
    )
    assert answer.complete is True


async def test_an_unwritable_copy_keeps_the_verdict(server: MockServer, tmp_path: Path) -> None:
    answer = await ask_reviewer(
        _given("task-unwritable"),
        env=_env(server.url),
        save_to=tmp_path / "missing" / "r.json",
        timeout=60,
    )
    assert answer.complete is True
    assert answer.file is None
