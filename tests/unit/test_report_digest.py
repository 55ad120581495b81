"""The report's pure parts: finish reasons in words, summaries, text and HTML pages."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.report import build_digest, cumulative_series, render_html, render_text, summarize
from forgeflare.report._digest import Commit
from forgeflare.report._text import format_duration, render_runs
from forgeflare.supervisor import finish_reason
from forgeflare.supervisor.records._records import RunRecord


def row(n: int, outcome: str = "ok", **extra: Any) -> dict[str, Any]:
    return {
        "number": n,
        "started_at": f"2026-11-24T01:0{n}:00Z",
        "duration": 30.0 * n,
        "outcome": outcome,
        "tokens": {"input": 100, "output": 10, "cache_read": 1000, "cache_write": 0},
        "cost_usd": 0.5,
        "commits": 1,
        **extra,
    }


def run(finish: str | None, rows: list[dict[str, Any]], **extra: Any) -> RunRecord:
    """A record as 0.2 wrote it (no schema_version): read through the one upgrader."""
    return RunRecord.model_validate(
        {
            "run_id": "20261124-010000-abcd",
            "mode": "building",
            "project_dir": "/p",
            "started_at": "2026-11-24T01:00:00Z",
            "finished_at": "2026-11-24T02:00:00Z" if finish else None,
            "finish_type": finish,
            "iterations": rows,
            **extra,
        }
    )


def test_finish_reasons_in_words() -> None:
    error_rows = [
        row(1),
        row(2, "api_error", stop_reason="api_error", detail="529 overloaded"),
        row(3, "agent_error"),
        row(4, "api_error", stop_reason="api_error", detail="529 overloaded"),
    ]
    assert (
        finish_reason(run("error", error_rows))
        == "stopped: 3 error iterations in a row, the last one `api_error` 529 overloaded"
    )
    signal = row(2, stop_reason="convergence_signal", observations=[{"signal": True, "name": "g"}])
    assert finish_reason(run("complete", [row(1), signal])) == (
        "complete: convergence signal `g` in iteration 2"
    )
    assert finish_reason(run("complete", [row(1)])) == "complete: no open task left in the plan"
    tagged = row(1, signal="<loop-done>COMPLETE</loop-done>", plan_unchecked=2)
    assert finish_reason(run("complete", [tagged])) == (
        "complete: the agent said <loop-done>COMPLETE</loop-done> in iteration 1"
    )
    tagged_and_done = row(1, signal="<loop-done>COMPLETE</loop-done>", plan_unchecked=0)
    said = finish_reason(run("complete", [tagged_and_done]))
    assert said.endswith("no open task left in the plan")
    assert finish_reason(run("budget", [row(1)])).startswith("stopped: the cost budget")
    # `forgeflare stop` finishes `stopped`, not `manual`: the manual words do not name it
    assert finish_reason(run("manual", [])) == "stopped by hand (Ctrl+C or SIGTERM)"
    assert finish_reason(run(None, [row(1)])) == "still running"
    assert finish_reason(run("error", [], finish_reason="own words")) == "own words"


def test_summary_new_and_old_rows() -> None:
    s = summarize(run("max_iterations", [row(1), row(2)]))
    assert (s.iterations, s.commits, s.tokens, s.cost_usd) == (2, 2, 2220, 1.0)
    assert s.duration == 3600
    old = {"number": 1, "exit_code": 0, "final_reason": "end_turn", "tokens": 500, "commits": 0}
    s = summarize(run("max_iterations", [old]))
    assert (s.tokens, s.cost_usd) == (500, None)
    assert build_digest(run("max_iterations", [old])).rows[0].outcome == "ok"
    crashed = {"number": 1, "exit_code": 1, "final_reason": None}
    assert build_digest(run("error", [crashed])).rows[0].outcome == "agent_error"


def test_tasks_done_from_plan_counts() -> None:
    rows = [row(1, plan_unchecked=4), row(2, plan_unchecked=1)]
    assert summarize(run("complete", rows, plan_unchecked_at_start=5)).tasks_done == 4
    assert summarize(run("complete", rows)).tasks_done == 3


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


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.external: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            external = value and value.startswith(("http:", "https:", "//"))
            loads = tag in ("script", "link", "img", "iframe", "source", "style")
            if name in ("src", "href") and external and loads:
                self.external.append(f"{tag} {name}={value}")


def test_html_is_self_contained_with_a_plot() -> None:
    pytest.importorskip("plotly", reason="plotly is the optional report extra")
    digest = build_digest(run("complete", [row(1), row(2, "api_error"), row(3, skipped=True)]))
    page = render_html(digest)
    refs = _Refs()
    refs.feed(page)
    assert refs.external == []
    assert "timeline" in refs.ids
    assert "iteration-002.log" in page


def test_html_marks_commits_and_signals() -> None:
    pytest.importorskip("plotly", reason="plotly is the optional report extra")
    signal = {"observations": [{"signal": True, "name": "stuck"}]}
    page = render_html(build_digest(run("complete", [row(1), row(2, **signal)])))
    assert '"name":"commits"' in page
    assert "#2: 1 commit(s)" in page
    assert '"name":"signals"' in page
    assert '"hovertext":["stuck"]' in page


@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "number": st.integers(0, 999),
                "outcome": st.sampled_from(["ok", "api_error", "agent_error", "rate_limited"]),
                "duration": st.floats(0, 1e5),
                "tokens": st.one_of(st.integers(0, 10**9), st.none()),
            }
        ),
        max_size=8,
    ),
    st.sampled_from([None, "complete", "error", "budget", "manual", "max_iterations"]),
)
def test_any_record_renders(rows: list[dict[str, Any]], finish: str | None) -> None:
    digest = build_digest(run(finish, rows))
    assert render_text(digest)
    assert finish_reason(run(finish, rows))


def test_format_duration() -> None:
    assert [format_duration(x) for x in (5, 65, 3725)] == ["5s", "1m 05s", "1h 02m"]


def test_spend_by_agent_sums_each_backend_and_profile() -> None:
    from forgeflare.report import spend_by_agent
    from forgeflare.supervisor.records._records import IterationRecord, RunRecord

    run = RunRecord(run_id="r", mode="building", project_dir="p", started_at="2026-11-25T00:00:00Z")
    rows = [
        ("forgeflare", "", 0.5),
        ("forgeflare", "cheap", 0.25),
        ("forgeflare", "cheap", None),
        ("codex", "", 0.125),
    ]
    for n, (backend, profile, cost) in enumerate(rows, 1):
        run.iterations.append(
            IterationRecord(number=n, backend=backend, profile=profile, cost_usd=cost)
        )
    run.iterations.append(IterationRecord(number=5, skipped=True))
    assert spend_by_agent(run) == {
        "forgeflare": {"iterations": 1, "tokens": 0, "cost_usd": 0.5},
        "forgeflare:cheap": {"iterations": 2, "tokens": 0, "cost_usd": None},
        "codex": {"iterations": 1, "tokens": 0, "cost_usd": 0.125},
    }


def test_cumulative_spend_goes_forward_in_time_even_for_a_resumed_run() -> None:
    """A resumed run's killed iteration is recorded after the rows before the crash but ends
    later than they do: summed in row order, the line would step back in time."""
    from datetime import UTC, datetime

    def at(minute: int) -> datetime:
        return datetime(2026, 11, 24, 1, minute, tzinfo=UTC)

    rows = build_digest(run("complete", [row(1), row(2), row(3)])).rows
    xs, tokens, cost = cumulative_series([at(5), at(9), at(7)], rows)
    assert xs == sorted(xs)
    assert tokens == sorted(tokens)
    assert cost == [0.5, 1.0, 1.5]


def test_html_plots_cost_on_its_own_axis_and_embeds_log_tails(tmp_path: Path) -> None:
    pytest.importorskip("plotly", reason="plotly is the optional report extra")
    (tmp_path / "iteration-001.log").write_text("".join(f"line {n}\n" for n in range(100)))
    digest = build_digest(run("complete", [row(1), row(2)]))
    page = render_html(digest, run_dir=tmp_path, out=tmp_path / "elsewhere" / "r.html")
    assert '"overlaying":"y2"' in page.replace(" ", "")  # the USD axis over the tokens axis
    assert "href=" not in page.split("<h2>Iterations</h2>")[1]  # no link that dies when mailed
    assert f"<code>{tmp_path / 'iteration-001.log'}</code>" in page
    assert "line 99" in page
    assert "line 69" not in page  # the tail only
    assert len(page) < 2_500_000  # plotly.js packed: was 4.8 MB
    without = render_html(digest, plotlyjs=False)
    assert len(without) < len(page) // 10  # plotly.js left out for a page that has it


def test_the_cumulative_axes_start_at_zero_and_keep_the_lines_apart() -> None:
    from forgeflare.report._html import axis_ranges

    tokens, usd = axis_ranges(3160, 0.019)  # one iteration
    assert tokens[0] == usd[0] == 0.0
    assert tokens[1] > 3160
    # the same share of each axis would draw one line on the other: cost reaches half-way
    assert 3160 / tokens[1] > 2 * (0.019 / usd[1]) - 0.01
    assert axis_ranges(0, 0.0) == ([0.0, 1.05], [0.0, 0.021])
