"""What the OpenCode and pi readers share: tokens and cost per request, the long retry, the
failure table, and the streams their real CLIs wrote (``tests/fixtures/opencode``,
``tests/fixtures/pi``, one folder per version); both backends registered with their commands."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from forgeflare import ConfigError
from forgeflare.supervisor.backends import (
    BACKENDS,
    OpenCodeBackend,
    OpenCodeStreamReader,
    PiBackend,
    PiStreamReader,
)
from forgeflare.supervisor.backends._apierror import window_reset
from forgeflare.supervisor.backends._clistream import RETRY_WAIT_LIMIT, CliStreamReader
from forgeflare.supervisor.backends._stream import MAX_COUNT

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
OPENCODE = FIXTURES / "opencode" / "1.18.33"
PI = FIXTURES / "pi" / "0.73.1"
NOW = datetime(2026, 11, 28, 22, 0, tzinfo=UTC)


def read(reader: OpenCodeStreamReader | PiStreamReader, path: Path) -> list[str]:
    shown: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        shown += reader.feed(line)
    return shown


@pytest.mark.parametrize(
    ("folder", "make"),
    [(OPENCODE, lambda: OpenCodeStreamReader(model="claude-sonnet-4-5")), (PI, PiStreamReader)],
    ids=["opencode", "pi"],
)
@pytest.mark.parametrize(
    ("name", "outcome", "transient"),
    [
        ("ok", "ok", False),
        ("outage", "api_error", True),
        ("auth", "agent_error", False),
        ("agent-error", "agent_error", False),
    ],
)
def test_recorded_streams_read_into_their_outcome(
    folder: Path, make: Any, name: str, outcome: str, transient: bool
) -> None:
    reader = make()
    shown = read(reader, folder / f"{name}.jsonl")
    report = reader.report()
    assert (report.outcome, report.transient) == (outcome, transient), shown
    assert not reader.damaged
    if outcome == "ok":
        assert report.tokens.input > 0
        assert report.cost_usd > 0
        assert report.model == "claude-sonnet-4-5"
        assert report.turns == 2
        assert report.session_id
        assert "<loop-done>COMPLETE</loop-done>" in report.final_text
        assert any(line.startswith("▸ bash") for line in shown)
    else:
        assert report.detail


def test_both_are_registered_and_find_their_command(tmp_path: Path) -> None:
    assert BACKENDS["opencode"] is OpenCodeBackend
    assert BACKENDS["pi"] is PiBackend
    argv = OpenCodeBackend().argv(python="", model="anthropic/m", command="", extra=[])
    assert argv == [
        *("opencode", "run", "--format", "json", "--model", "anthropic/m"),
        *("--title", "forgeflare loop"),
    ]
    # A title of the user's own is the only one OpenCode gets (twice would be a list to it).
    for theirs in (["--title", "mine"], ["--title=mine"]):
        assert OpenCodeBackend().argv(python="", model="", command="", extra=theirs) == [
            *("opencode", "run", "--format", "json", *theirs)
        ]
    command = "opencode --title mine"
    assert "forgeflare loop" not in OpenCodeBackend().argv(
        python="", model="", command=command, extra=[]
    )
    assert PiBackend().argv(python="", model="", command="", extra=[]) == [
        "pi",
        "-p",
        "--mode",
        "json",
    ]
    with pytest.raises(ConfigError, match="opencode"):
        OpenCodeBackend().preflight(tmp_path, ["opencode"], {"PATH": str(tmp_path)})


def test_requests_add_up_their_tokens_and_cost_capped_and_shown() -> None:
    reader = CliStreamReader(cli="x")
    first = reader.add_request({"input": 1200, "output": 30}, 0.25)
    assert first.startswith("■ request 1 · in ")
    reader.add_request({"input": MAX_COUNT, "cache_read": 5}, "not a cost")
    assert reader.tokens == {"input": MAX_COUNT, "output": 30, "cache_read": 5, "cache_write": 0}
    assert reader.cost == 0.25
    report = reader.report()
    assert (report.outcome, report.turns, report.cost_usd) == ("ok", 2, 0.25)


def test_a_stream_without_a_request_is_an_agent_error_with_no_cost() -> None:
    report = CliStreamReader(cli="x").report()
    assert (report.outcome, report.transient, report.cost_usd) == ("agent_error", False, None)


@pytest.mark.parametrize(
    ("wait", "ends"),
    [(RETRY_WAIT_LIMIT, False), (RETRY_WAIT_LIMIT + 1, True), (3600.0, True)],
)
def test_a_retry_further_ahead_than_the_limit_ends_the_cli(wait: float, ends: bool) -> None:
    reader = CliStreamReader(cli="x", now=NOW)
    at = NOW + timedelta(seconds=wait)
    line = reader.retry(2, wait, "Too Many Requests", at)
    assert line.startswith(f"retrying the API: attempt 2, {wait:.0f} s")
    assert (reader.end_reason is not None) == ends
    report = reader.report()
    if ends:
        assert line.endswith("ending x (the loop waits)")
        assert (report.outcome, report.resets_at) == ("rate_limited", window_reset(at, NOW))
        assert report.detail == f"x would wait {wait:.0f} s to retry (Too Many Requests)"
    else:
        assert line.endswith("(Too Many Requests)")
        assert report.outcome == "agent_error"  # no request ended, and no failure either


@pytest.mark.parametrize(
    ("status", "failure", "outcome"),
    [(529, "Overloaded", ("api_error", True)), (401, "invalid x-api-key", ("agent_error", False))],
)
def test_a_failure_is_read_with_the_api_table(
    status: int, failure: str, outcome: tuple[str, bool]
) -> None:
    reader = CliStreamReader(cli="x", status=status, failure=failure)
    reader.add_request({"input": 1}, None)
    assert reader.outcome() == outcome
    report = reader.report()
    assert (report.stop_reason, report.detail) == ("error", failure)
