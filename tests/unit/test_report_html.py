"""The report's HTML page: self-contained, its plot's marks and axes, the log tails it embeds."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest

from forgeflare.report import build_digest, cumulative_series, render_html
from report_support import row, run


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
