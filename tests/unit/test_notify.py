"""Notifications: pure message/choice, a real command, and real apprise to a loopback server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from forgeflare.supervisor.records import (
    NOTIFY_EVENTS,
    Notifier,
    NotifyEvent,
    notify_urls,
    render_message,
    should_notify,
)
from http_support import json_receiver

SUMMARY: dict[str, Any] = {
    "run_id": "20261124-010203",
    "project_dir": "/home/u/parser",
    "finish_type": "error",
    "finish_reason": "3 error iterations in a row, the last one api_error 529 overloaded",
    "totals": {"iterations": 7, "commits": 4, "cost_usd": 1.234, "duration": 3725},
}


def test_should_notify() -> None:
    assert should_notify("finish", ["finish"])
    assert not should_notify("outage", ["finish"])
    assert should_notify("outage", ["finish", "outage"])


def test_render_finish() -> None:
    title, body = render_message("finish", SUMMARY)
    assert title == "forgeflare: parser finished error"
    assert "529 overloaded" in body
    assert "iterations 7 · commits 4 · $1.23 · 1h 02m" in body


def test_render_other_events_and_unknown_cost() -> None:
    summary = {**SUMMARY, "totals": {"iterations": 1, "commits": 0, "cost_usd": None}}
    assert "cost unknown" in render_message("finish", summary)[1]
    assert "03:12" in render_message("limit_wait", {**summary, "until": "03:12"})[1]
    assert render_message("outage", summary)[0].endswith("waits out an API outage")
    # Without a detail, an event whose first line is its detail says what it is about.
    assert ": transient API failures" in render_message("outage", summary)[1]
    assert ": error iterations in a row" in render_message("error_streak", summary)[1]
    assert ": 529 x3\n" in render_message("outage", {**summary, "detail": "529 x3"})[1]


def test_urls_from_env_then_user_config(tmp_path: Path) -> None:
    assert notify_urls({"FORGEFLARE_NOTIFY_URLS": "a://x, b://y"}, tmp_path) == ["a://x", "b://y"]
    assert notify_urls({}, tmp_path) == []
    (tmp_path / "notify.toml").write_text('urls = ["ntfy://topic"]\n')
    assert notify_urls({}, tmp_path) == ["ntfy://topic"]


async def test_command_gets_the_summary_on_stdin(tmp_path: Path) -> None:
    out = tmp_path / "got.json"
    notifier = Notifier(command=f"cat > {out}", cwd=tmp_path, log=lambda _: None)
    assert await notifier.send("finish", SUMMARY) == []
    got = json.loads(out.read_text())
    assert got["event"] == "finish"
    assert got["finish_type"] == "error"


async def test_failures_are_logged_not_raised(tmp_path: Path) -> None:
    logged: list[str] = []
    notifier = Notifier(command="echo nope >&2; exit 3", cwd=tmp_path, log=logged.append)
    assert await notifier.send("finish", SUMMARY) == ["notify command exited 3: nope"]
    assert logged == ["notify: notify command exited 3: nope"]
    assert await Notifier(command="true", on=("finish",)).send("outage", SUMMARY) == []


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    with json_receiver() as (port, got):
        yield f"json://127.0.0.1:{port}/hook", got


async def test_apprise_url_delivers(receiver: tuple[str, list[dict[str, Any]]]) -> None:
    pytest.importorskip("apprise", reason="apprise is the optional notify extra")
    url, got = receiver
    notifier = Notifier(urls=[url], log=lambda _: None, timeout=10)
    assert await notifier.send("finish", SUMMARY) == []
    assert got
    assert got[0]["title"] == "forgeflare: parser finished error"
    assert "529 overloaded" in got[0]["message"]


async def test_unknown_url_is_reported() -> None:
    pytest.importorskip("apprise", reason="apprise is the optional notify extra")
    errors = await Notifier(urls=["nosuchscheme://x"], log=lambda _: None).send("finish", SUMMARY)
    assert errors == ["1 notification URL(s) not understood by apprise"]


@pytest.mark.parametrize(
    ("event", "title"),
    [
        ("finish", "finished error"),
        ("limit_wait", "waits for the usage window"),
        ("outage", "waits out an API outage"),
        ("error_streak", "has an error streak"),
        ("stalled", "stalled"),  # an event this table does not know is named, not mistitled
        ("odd {braces}", "odd {braces}"),
    ],
)
def test_each_event_has_its_own_title(event: str, title: str) -> None:
    assert render_message(event, SUMMARY)[0] == f"forgeflare: parser {title}"
    assert [e.value for e in NotifyEvent] == list(NOTIFY_EVENTS)
