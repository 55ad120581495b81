"""The agent's report in ``final``: tokens by kind, cost, and the stop reasons a loop must tell
apart (a usage limit, a refusal, the budget), each with its own exit status."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_support import read_json, run_agent, run_agent_here, text_response, tool_response
from mockapi_support import MockAPI


def final(project: Path) -> dict[str, Any]:
    return read_json(project / ".forgeflare" / "convergence.json")["final"]  # type: ignore[no-any-return]


def test_final_carries_tokens_and_cost(tmp_path: Path, mock_api: MockAPI) -> None:
    usage = {
        "input_tokens": 1000,
        "output_tokens": 200,
        "cache_read_input_tokens": 5000,
        "cache_creation_input_tokens": 300,
    }
    server = mock_api(
        {
            "responses": [
                {**tool_response(("Glob", {"pattern": "*"})), "usage": usage},
                {**text_response("done"), "usage": usage},
            ]
        }
    )
    done = run_agent_here(tmp_path, server.url, "go", "--model", "claude-opus-4-6")
    assert done.returncode == 0, done.stderr
    f = final(tmp_path)
    assert f["tokens"] == {"input": 2000, "output": 400, "cache_read": 10000, "cache_write": 600}
    assert f["requests"] == 2
    # Opus 4.6 list prices: $5/M input, $25/M output, $0.50/M cache read, $6.25/M cache write
    expected = (2000 * 5 + 400 * 25 + 10000 * 0.5 + 600 * 6.25) / 1e6
    assert abs(f["cost_usd"] - expected) < 1e-9
    assert f["model"] == "claude-opus-4-6"


def test_long_429_ends_the_turn_rate_limited(tmp_path: Path, mock_api: MockAPI) -> None:
    server = mock_api(
        {
            "responses": [
                {
                    "error": {
                        "status": 429,
                        "type": "rate_limit_error",
                        "message": "usage limit",
                        "headers": {"retry-after": "70"},
                    }
                }
            ]
        }
    )
    before = datetime.now(UTC)
    done = run_agent(tmp_path, server.url)
    assert done.returncode == 7, done.stderr
    f = final(tmp_path)
    assert f["reason"] == "rate_limited"
    resets = datetime.fromisoformat(f["resets_at"].replace("Z", "+00:00"))
    assert 60 <= (resets - before).total_seconds() <= 80
    assert len(server.requests()) == 1  # not retried for minutes
    assert "[retry]" not in done.stderr


def test_refusal_is_its_own_stop_reason(tmp_path: Path, mock_api: MockAPI) -> None:
    server = mock_api(
        {"responses": [text_response("I can't help with that.", stop_reason="refusal")]}
    )
    done = run_agent_here(tmp_path, server.url)
    assert done.returncode == 8, done.stderr
    assert final(tmp_path)["reason"] == "refusal"


def test_budget_ends_the_turn(tmp_path: Path, mock_api: MockAPI) -> None:
    big = {"input_tokens": 1_000_000, "output_tokens": 10}
    server = mock_api(
        {
            "responses": [
                {**tool_response(("Glob", {"pattern": "*"})), "usage": big},
                {**tool_response(("Glob", {"pattern": "*"})), "usage": big},
                text_response("done"),
            ]
        }
    )
    done = run_agent_here(
        tmp_path, server.url, "go", "--model", "claude-opus-4-6", "--max-cost", "4"
    )
    assert done.returncode == 9, done.stderr
    f = final(tmp_path)
    assert f["reason"] == "budget"
    assert f["cost_usd"] >= 4
    assert len(server.requests()) == 1
