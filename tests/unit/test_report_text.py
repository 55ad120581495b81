"""The report's text: every section, durations in words, the one-line run list."""

from __future__ import annotations

from forgeflare.report import Commit, build_digest, format_duration, render_runs, render_text
from report_support import row, run


def test_text_report_has_every_section() -> None:
    digest = build_digest(
        run(
            "complete",
            [row(1), row(2, "rate_limited")],
            waits=[
                {
                    "kind": "limit_wait",
                    "started_at": "2026-11-24T01:30:00Z",
                    "duration": 600,
                    "until": "01:40",
                }
            ],
        ),
        commits=[Commit("abcdef1234", "Add parser", "2 files changed, 10 insertions(+)")],
        tasks_done=["parse numbers"],
        tasks_open=["parse strings"],
    )
    text = render_text(digest)
    for needle in (
        "Commits",
        "abcdef12 Add parser  (2 files changed, 10 insertions(+))",
        "[x] parse numbers",
        "[ ] parse strings",
        "Spend",
        "$1.00",
        "limit_wait 10m 00s until 01:40",
        "Slowest iterations",
        "#2 1m 00s rate_limited",
    ):
        assert needle in text, needle
    assert render_runs([digest.summary]).count("\n") == 1


def test_format_duration() -> None:
    assert [format_duration(x) for x in (5, 65, 3725)] == ["5s", "1m 05s", "1h 02m"]
