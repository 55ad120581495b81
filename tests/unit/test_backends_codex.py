"""Codex's own words read right (pure): final failures, reset times, the model, the display."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from forgeflare.supervisor.backends import (
    CodexStreamReader,
    Tokens,
    classify_failure,
    codex_model,
    reset_from_message,
    reset_from_session,
)

HIGH_DEMAND = "We’re currently experiencing high demand, which may cause temporary errors."
USAGE = (
    "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit "
    "https://chatgpt.com/settings/usage to purchase more credits or try again at {}."
)


def j(event: object) -> str:
    return json.dumps(event)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (USAGE.format("8:30 PM"), ("rate_limited", False)),
        ("Quota exceeded. Check your plan and billing details.", ("quota", False)),
        (HIGH_DEMAND, ("api_error", True)),
        ("Selected model is at capacity. Please try a different model.", ("api_error", True)),
        (
            "stream disconnected before completion: stream closed before response.completed",
            ("api_error", True),
        ),
        ("exceeded retry limit, last status: 429 Too Many Requests", ("api_error", True)),
        ("unexpected status 400 Bad Request: bad tool schema", ("agent_error", False)),
        # The agents' one table (classify_api_error) speaks for Codex too.
        ("unexpected status 503 Service Unavailable", ("api_error", True)),
        ("error sending request: fetch failed", ("api_error", True)),
        ("401 Unauthorized: invalid api key, also billing", ("agent_error", False)),
        ("", ("agent_error", False)),
    ],
)
def test_final_failures(message: str, expected: tuple[str, bool]) -> None:
    assert classify_failure(message) == expected


EVENING = datetime(2026, 11, 25, 19, 0, tzinfo=timezone(timedelta(hours=-5)))


@pytest.mark.parametrize(
    ("when", "expected"),
    [
        ("8:30 PM", datetime(2026, 11, 25, 20, 30, tzinfo=EVENING.tzinfo)),  # later today
        ("6:15 PM", datetime(2026, 11, 26, 18, 15, tzinfo=EVENING.tzinfo)),  # passed: tomorrow
        ("12:05 AM", datetime(2026, 11, 26, 0, 5, tzinfo=EVENING.tzinfo)),
        ("Jan 1st, 2030 12:00 AM", datetime(2030, 1, 1, 0, 0, tzinfo=EVENING.tzinfo)),
        ("Jan 4th, 2027 9:25 PM", datetime(2027, 1, 4, 21, 25, tzinfo=EVENING.tzinfo)),
        ("Mar 22nd, 2027 12:45 PM", datetime(2027, 3, 22, 12, 45, tzinfo=EVENING.tzinfo)),
    ],
)
def test_reset_from_message_in_local_time(when: str, expected: datetime) -> None:
    assert reset_from_message(USAGE.format(when), EVENING) == expected
    # a straight apostrophe reads the same
    assert reset_from_message(USAGE.format(when).replace("’", "'"), EVENING) == expected


def test_reset_from_message_without_a_time() -> None:
    assert reset_from_message("You’ve hit your usage limit.", EVENING) is None
    assert reset_from_message("try again at Foo 99th, 2027 1:00 PM", EVENING) is None


def test_reset_from_session_takes_the_full_window() -> None:
    def line(primary: object, secondary: object = None) -> str:
        limits = {"primary": primary, "secondary": secondary}
        return j({"type": "event_msg", "payload": {"type": "token_count", "rate_limits": limits}})

    full = {"used_percent": 100.0, "window_minutes": 300, "resets_at": 1_800_000_000}
    half = {"used_percent": 50.0, "window_minutes": 10080, "resets_at": 1_900_000_000}
    lines = ["not json", line(None), line(half, full), j({"type": "x"})]
    assert reset_from_session(lines) == datetime.fromtimestamp(1_800_000_000, UTC)
    assert reset_from_session([line(half)]) is None


def test_model_from_argv_else_config(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('model = "gpt-5.5"\n')
    assert codex_model(["codex", "exec", "--model", "gpt-5"], tmp_path) == "gpt-5"
    assert codex_model(["codex", "exec", "-m", "o3"], tmp_path) == "o3"
    assert codex_model(["codex", "-c", 'model="gpt-5.1"'], tmp_path) == "gpt-5.1"
    assert codex_model(["codex", "exec"], tmp_path) == "gpt-5.5"
    assert codex_model(["codex"], tmp_path / "none") is None
    (tmp_path / "config.toml").write_text("model = [broken")
    assert codex_model(["codex"], tmp_path) is None


def _read(*events: object) -> tuple[CodexStreamReader, list[str]]:
    reader = CodexStreamReader()
    shown = [s for e in events for s in reader.feed(j(e) if not isinstance(e, str) else e)]
    return reader, shown


START = [{"type": "thread.started", "thread_id": "t-1"}, {"type": "turn.started"}]


def test_the_final_failure_wins_and_prints_once() -> None:
    retry = "Reconnecting... 1/3 (exceeded retry limit, last status: 429 Too Many Requests)"
    reader, shown = _read(
        *START,
        {"type": "error", "message": retry},
        {"type": "error", "message": "Reconnecting... 2/3 (exceeded retry limit, 429)"},
        {"type": "error", "message": HIGH_DEMAND},
        {"type": "turn.failed", "error": {"message": HIGH_DEMAND}},
    )
    assert reader.outcome() == ("api_error", True)
    assert shown[1:] == [
        "retrying the API: attempt 1 of 3 (exceeded retry limit, last status: 429 Too Many "
        "Requests)",
        "retrying the API: attempt 2 of 3 (exceeded retry limit, 429)",
        f"failed: {HIGH_DEMAND}",
    ]
    report = reader.report()
    assert report.stop_reason == "turn.failed"
    assert report.resets_at is None


def test_retries_then_success_are_ok() -> None:
    usage = {"input_tokens": 1000, "cached_input_tokens": 400, "cache_write_input_tokens": 200}
    reader, shown = _read(
        *START,
        {"type": "error", "message": "Reconnecting... 1/3 (We’re currently experiencing…)"},
        {"type": "item.completed", "item": {"type": "error", "message": "model metadata missing"}},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "done"}},
        {"type": "turn.completed", "usage": {**usage, "output_tokens": 50}},
    )
    assert reader.outcome() == ("ok", False)
    assert "warning: model metadata missing" in shown
    assert not any(s.startswith(("error", "failed")) for s in shown)
    assert reader.tokens() == Tokens(input=400, output=50, cache_read=400, cache_write=200)


def test_a_stream_cut_short_saw_no_end() -> None:
    reader, _ = _read(*START, {"type": "item.started", "item": {"type": "reasoning"}})
    report = reader.report()
    assert report.stop_reason is None
    assert report.outcome == "agent_error"


def test_usage_limit_reset_in_the_report(tmp_path: Path) -> None:
    reader, _ = _read(
        *START, {"type": "turn.failed", "error": {"message": USAGE.format("8:30 PM")}}
    )
    reader.now = EVENING
    report = reader.report()
    assert report.outcome == "rate_limited"
    assert report.resets_at == "2026-11-26T01:30:00Z"


def test_session_file_reset_is_preferred(tmp_path: Path) -> None:
    thread = "01a21499-6123-76c1-a8c1-733fffa7f869"
    folder = tmp_path / "sessions" / "2026" / "11" / "25"
    folder.mkdir(parents=True)
    window = {"used_percent": 100.0, "window_minutes": 300, "resets_at": 1_796_112_000}
    event = {
        "type": "event_msg",
        "payload": {"type": "token_count", "rate_limits": {"primary": window}},
    }
    (folder / f"rollout-2026-11-25T21-25-25-{thread}.jsonl").write_text(j(event) + "\n")
    reader = CodexStreamReader()
    reader.setup(argv=["codex", "exec", "--model", "gpt-5.5"], env={"CODEX_HOME": str(tmp_path)})
    for e in (
        {"type": "thread.started", "thread_id": thread},
        {"type": "turn.failed", "error": {"message": USAGE.format("8:30 PM")}},
    ):
        reader.feed(j(e))
    reader.now = EVENING
    report = reader.report()
    assert report.resets_at == "2026-12-01T08:00:00Z"
    assert report.model == "gpt-5.5"
