"""The OpenCode reader's retries (recorded by the real CLI in ``tests/fixtures/opencode``), its
offline check and its retry plugin."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from forgeflare.supervisor.backends import ChildEnd, OpenCodeBackend, OpenCodeStreamReader
from forgeflare.supervisor.backends._opencode import opencode_problem, with_retry_plugin

OPENCODE = Path(__file__).resolve().parent.parent / "fixtures" / "opencode" / "1.18.33"
NOW = datetime(2026, 11, 28, 22, 0, tzinfo=UTC)


def test_opencode_long_retry_asks_for_its_end_and_keeps_the_reset() -> None:
    # The recording's reset is two hours after it was made: read it at NOW, not by the clock
    # (a past reset is no window, so by the clock this failed two hours after recording).
    reader = OpenCodeStreamReader(now=NOW)
    lines = (OPENCODE / "usage-limit.jsonl").read_text(encoding="utf-8").splitlines()
    shown = [said for line in lines for said in reader.feed(line)]
    assert reader.end_reason is not None
    assert any("ending OpenCode" in line for line in shown)
    report = reader.report()
    assert report.outcome == "rate_limited"
    assert report.resets_at == "2026-11-29T00:47:05Z"


def test_a_short_retry_is_shown_and_left_to_the_cli() -> None:
    reader = OpenCodeStreamReader()
    at = 1_795_904_521_904
    line = {"type": "forgeflare.retry", "timestamp": at, "attempt": 1, "next": at + 30_000}
    assert reader.feed(json.dumps(line)) == ["retrying the API: attempt 1, 30 s (retry)"]
    assert reader.end_reason is None


def test_a_long_retry_without_a_reset_in_the_message_keeps_the_retry_time() -> None:
    at = NOW.timestamp() * 1000
    line = {
        "type": "forgeflare.retry",
        "timestamp": at,
        "attempt": 1,
        "message": "Too Many Requests",
        "next": at + 3_600_000,
    }
    reader = OpenCodeStreamReader(now=NOW)
    reader.feed(json.dumps(line))
    assert reader.report().resets_at == "2026-11-28T23:00:00Z"
    backend = OpenCodeBackend()
    report = backend.report(reader, ChildEnd(exit_code=None, stopped=True), None, None)
    assert report.outcome == "rate_limited"  # the loop's own stop, not an interruption


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({}, None),
        ({"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080/v1"}, None),
        ({"ANTHROPIC_API_URL": "http://127.0.0.1:8080"}, "reads ANTHROPIC_BASE_URL"),
        ({"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080"}, "8080/v1"),
    ],
)
def test_opencode_offline_checks(env: dict[str, str], said: str | None) -> None:
    problem = opencode_problem(env)
    assert (problem is None) if said is None else (said in (problem or ""))


def test_the_retry_plugin_joins_the_users_own_opencode_config() -> None:
    mine = json.loads(with_retry_plugin('{"plugin": ["my-plugin"], "model": "x/y"}'))
    assert mine["model"] == "x/y"
    assert mine["plugin"][0] == "my-plugin"
    assert mine["plugin"][1].endswith("forgeflare-retry.js")
    assert Path(mine["plugin"][1].removeprefix("file://")).is_file()
    assert json.loads(with_retry_plugin("not json"))["plugin"][0].startswith("file://")
