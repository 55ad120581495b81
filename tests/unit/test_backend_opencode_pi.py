"""The OpenCode and pi readers on the streams their real CLIs wrote (``tests/fixtures/opencode``,
``tests/fixtures/pi``, one folder per version), the API failure table, and the backends'
offline checks."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from forgeflare._errors import ConfigError
from forgeflare.supervisor.backends import (
    BACKENDS,
    ChildEnd,
    OpenCodeBackend,
    OpenCodeStreamReader,
    PiBackend,
    PiStreamReader,
)
from forgeflare.supervisor.backends._apierror import classify_api_error, window_reset
from forgeflare.supervisor.backends._opencode import opencode_problem, with_retry_plugin
from forgeflare.supervisor.backends._pi import pi_problem

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


def test_opencode_long_retry_asks_for_its_end_and_keeps_the_reset() -> None:
    # The recording's reset is two hours after it was made: read it at NOW, not by the clock
    # (a past reset is no window, so by the clock this failed two hours after recording).
    reader = OpenCodeStreamReader(now=NOW)
    shown = read(reader, OPENCODE / "usage-limit.jsonl")
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


def test_pi_exits_0_on_failure_and_the_stream_decides() -> None:
    reader = PiStreamReader()
    read(reader, PI / "auth.jsonl")
    report = PiBackend().report(reader, ChildEnd(exit_code=0), None, None)
    assert report.outcome == "agent_error"
    assert "authentication_error" in (report.detail or "")


@pytest.mark.parametrize(
    ("status", "message", "outcome", "transient", "deterministic"),
    [
        (401, "invalid x-api-key", "agent_error", False, True),
        (None, "401 authentication_error", "agent_error", False, True),
        (403, "permission_error", "agent_error", False, True),
        (400, "prompt is too long", "agent_error", False, True),
        (429, "Claude AI usage limit reached|1795911614", "rate_limited", False, False),
        (429, "Too Many Requests", "api_error", True, False),
        (529, "Overloaded", "api_error", True, False),
        (None, "Connection error.", "api_error", True, False),
        (None, "The model is at capacity", "api_error", True, False),  # Codex's words, any agent's
        (400, "Your credit balance is too low", "quota", False, False),
        (None, "something odd", "agent_error", False, False),
    ],
)
def test_api_failure_table(
    status: int | None, message: str, outcome: str, transient: bool, deterministic: bool
) -> None:
    failure = classify_api_error(status, message)
    assert (failure.outcome, failure.transient, failure.deterministic) == (
        outcome,
        transient,
        deterministic,
    )


@pytest.mark.parametrize(
    ("at", "expected"),
    [
        (datetime(2026, 11, 29, 0, 27, tzinfo=UTC), "2026-11-29T00:27:00Z"),
        (datetime(2026, 11, 28, 21, 0, tzinfo=UTC), None),  # past
        (datetime(2027, 6, 1, tzinfo=UTC), None),  # over 31 days ahead: damage
        (None, None),
    ],
)
def test_window_reset_table(at: datetime | None, expected: str | None) -> None:
    assert window_reset(at, NOW) == expected


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


def test_pi_names_the_models_file_a_local_endpoint_needs(tmp_path: Path) -> None:
    env = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080", "PI_CODING_AGENT_DIR": str(tmp_path)}
    assert str(tmp_path / "models.json") in (pi_problem(env) or "")
    (problem,) = PiBackend().problems({**env, "PATH": "/bin:/usr/bin"}, ["sh"], root=False)
    assert "models.json" in problem
    models = {"providers": {"anthropic": {"baseUrl": "http://127.0.0.1:8080"}}}
    (tmp_path / "models.json").write_text(json.dumps(models))
    assert pi_problem(env) is None
    assert pi_problem({}) is None


def test_the_retry_plugin_joins_the_users_own_opencode_config() -> None:
    mine = json.loads(with_retry_plugin('{"plugin": ["my-plugin"], "model": "x/y"}'))
    assert mine["model"] == "x/y"
    assert mine["plugin"][0] == "my-plugin"
    assert mine["plugin"][1].endswith("forgeflare-retry.js")
    assert Path(mine["plugin"][1].removeprefix("file://")).is_file()
    assert json.loads(with_retry_plugin("not json"))["plugin"][0].startswith("file://")


def test_both_are_registered_and_find_their_command(tmp_path: Path) -> None:
    assert BACKENDS["opencode"] is OpenCodeBackend
    assert BACKENDS["pi"] is PiBackend
    argv = OpenCodeBackend().argv(python="", model="anthropic/m", command="", extra=[])
    assert argv == ["opencode", "run", "--format", "json", "--model", "anthropic/m"]
    assert PiBackend().argv(python="", model="", command="", extra=[]) == [
        "pi",
        "-p",
        "--mode",
        "json",
    ]
    with pytest.raises(ConfigError, match="opencode"):
        OpenCodeBackend().preflight(tmp_path, ["opencode"], {"PATH": str(tmp_path)})
