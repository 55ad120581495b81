"""Claude Code 2.1.332's ``stream-json`` read from its structured fields (recorded streams in
``tests/fixtures/claude/2.1.332/``): every ``result`` line counted, the error type before the
words, the agent's own line as the report's ``detail``. The 2.1.197 recordings keep reading
as they did."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from forgeflare.supervisor.backends import ClaudeStreamReader, Tokens

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "claude"


def report_of(version: str, name: str) -> dict[str, Any]:
    reader = ClaudeStreamReader()
    for line in (FIXTURES / version / f"{name}.jsonl").read_text().splitlines():
        reader.feed(line)
    return reader.report()


@pytest.mark.parametrize(
    ("name", "outcome", "transient", "detail"),
    [
        ("continued", "ok", False, None),
        ("two-results", "ok", False, None),
        (
            "auth",
            "api_error",
            False,
            "authentication_error: Invalid API key · Fix external API key",
        ),
        ("billing", "quota", False, "invalid_request_error: Credit balance is too low"),
        ("overloaded", "api_error", True, "overloaded_error: API Error: 529 Overloaded."),
        ("not-logged-in", "agent_error", False, "authentication_failed: Not logged in · Please"),
    ],
)
def test_outcomes_and_the_agents_line(
    name: str, outcome: str, transient: bool, detail: str | None
) -> None:
    report = report_of("2.1.332", name)
    assert (report.outcome, report.transient) == (outcome, transient)
    if detail is None:
        assert report.detail is None
    else:
        assert report.detail.startswith(detail)


def test_every_result_line_is_counted() -> None:
    """Two prompts in one session: two ``result`` lines (``result_index`` 0 and 1), each with
    its own usage and turns; ``total_cost_usd`` is the session's so far."""
    report = report_of("2.1.332", "two-results")
    assert report.tokens == Tokens(input=400, output=40, cache_read=0, cache_write=0)
    assert report.turns == 2
    assert report.cost_usd == pytest.approx(0.0024)
    assert report.final_text == "second"


def test_one_result_reads_as_before() -> None:
    """A session the Stop hook continued once: both requests in the one result's usage."""
    report = report_of("2.1.332", "continued")
    assert report.tokens.input == 200
    assert report.turns == 1


@pytest.mark.parametrize(
    ("name", "outcome", "transient"),
    [("ok", "ok", False), ("down", "api_error", True), ("retry", "ok", False)],
)
def test_the_2_1_197_recordings_read_as_before(name: str, outcome: str, transient: bool) -> None:
    report = report_of("2.1.197", name)
    assert (report.outcome, report.transient) == (outcome, transient)
