"""The digest as one self-contained HTML file: text, a timeline plot, the iteration table.

The plot is plotly's, with its JavaScript inlined once per page (``include_plotlyjs``): the
file opens offline, loads nothing from the network, and can be mailed or attached to a CI run.
plotly is a well-kept library that writes exactly that kind of file; it is the optional extra
``forgeflare[report]`` because it is large. Without it the page still has everything but the
plot, and says so.
"""

from __future__ import annotations

import base64
import functools
import gzip
import html
import json
import os
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from forgeflare._errors import ConfigError
from forgeflare.disk import atomic_write_text
from forgeflare.report._digest import Digest
from forgeflare.report._text import format_cost, format_duration, headline, sections
from forgeflare.report._todo import NOTHING, Todo
from forgeflare.supervisor import IterationRow

__all__ = [
    "LOG_TAILS",
    "LOG_TAIL_LINES",
    "OUTCOME_COLOURS",
    "cumulative_series",
    "plotly_loader",
    "render_html",
    "todo_html",
    "write_html",
]

OUTCOME_COLOURS: dict[str, str] = {
    "ok": "#2e7d32",
    "agent_error": "#c62828",
    "api_error": "#ef6c00",
    "rate_limited": "#6a1b9a",
    "refused": "#ad1457",
    "killed": "#4e342e",
    "interrupted": "#546e7a",
    "timed_out": "#d84315",
    "budget": "#1565c0",
    "quota": "#b71c1c",
    "skipped": "#9e9e9e",
}

_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px;
       color: #212121; padding: 0 1em; }
h1 { font-size: 1.4em; margin-bottom: .2em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
.reason { font-size: 1.1em; } .muted { color: #757575; }
table { border-collapse: collapse; width: 100%; } td, th { padding: .25em .6em;
  border-bottom: 1px solid #e0e0e0; text-align: left; } th { background: #fafafa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.outcome { display: inline-block; padding: 0 .5em; border-radius: 3px; color: white; }
ul { margin: .3em 0; } code { background: #f5f5f5; padding: 0 .2em; }
pre { white-space: pre-wrap; font-size: 12px; max-height: 20em; overflow: auto; }
"""


def _starts(rows: list[IterationRow], origin: datetime) -> list[datetime]:
    """Each iteration's start; missing ones follow the previous iteration."""
    out, at = [], origin
    for row in rows:
        start = row.started_at or at
        out.append(start)
        at = start + timedelta(seconds=row.duration)
    return out


def _figure(
    d: Digest, origin: datetime, plotlyjs: bool = True, div_id: str = "timeline"
) -> str | None:
    try:
        import plotly.graph_objects as go  # type: ignore[import-untyped]
        from plotly.subplots import make_subplots  # type: ignore[import-untyped]
    except ImportError:
        return None
    rows = d.rows
    starts = _starts(rows, origin)
    ends = [s + timedelta(seconds=r.duration) for s, r in zip(starts, rows, strict=True)]
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        row_heights=[0.55, 0.45],
        vertical_spacing=0.08,
        # tokens and dollars on axes of their own: on one, the cost line is flat at 0
        specs=[[{}], [{"secondary_y": True}]],
    )
    _add_iterations(fig, go, rows, starts)
    _add_markers(fig, go, rows, ends)
    _add_cumulative(fig, go, rows, ends)
    _add_waits(fig, d)
    fig.update_layout(
        barmode="overlay",
        height=460,
        margin={"l": 70, "r": 20, "t": 20, "b": 40},
        legend={"orientation": "h"},
    )
    fig.update_xaxes(type="date")
    # The figure is drawn once plotly.js is there (it is unpacked asynchronously, see
    # plotly_loader); plotly.js itself comes once per page.
    spec = fig.to_json()
    draw = (
        f'<div id="{html.escape(div_id)}"></div><script>(function(){{var f=function(){{'
        f"Plotly.newPlot({json.dumps(div_id)},{spec}.data,{spec}.layout,{{responsive:true}});}};"
        "if(window.Plotly){f();}else{(window.forgeflarePlots=window.forgeflarePlots||[])"
        ".push(f);}})();</script>"
    )
    return (plotly_loader() if plotlyjs else "") + draw


def _add_iterations(fig: Any, go: Any, rows: list[IterationRow], starts: list[datetime]) -> None:
    """One bar per iteration on the time line, coloured by its outcome."""
    for outcome in sorted({r.outcome for r in rows}):
        picked = [(s, r) for s, r in zip(starts, rows, strict=True) if r.outcome == outcome]
        fig.add_trace(
            go.Bar(
                name=outcome,
                orientation="h",
                y=["iterations"] * len(picked),
                base=[s.isoformat() for s, _ in picked],
                x=[max(r.duration, 0.5) * 1000 for _, r in picked],
                marker_color=OUTCOME_COLOURS.get(outcome, "#607d8b"),
                # a white edge: back-to-back iterations stay two bars, not one
                marker_line={"color": "white", "width": 2},
                text=[f"#{r.number}" for _, r in picked],
                hovertext=[
                    f"#{r.number} {r.outcome} {format_duration(r.duration)} "
                    f"{r.total_tokens} tokens {format_cost(r.cost_usd)}"
                    for _, r in picked
                ],
                hoverinfo="text",
            ),
            row=1,
            col=1,
        )


def _add_markers(fig: Any, go: Any, rows: list[IterationRow], ends: list[datetime]) -> None:
    """One marker row each: iterations that committed, and iterations that raised signals."""
    markers: list[tuple[str, str, int, str, Callable[[IterationRow], str]]] = [
        ("commits", "diamond", 11, "#37474f", lambda r: f"#{r.number}: {r.commits} commit(s)"),
        ("signals", "star", 13, "#f9a825", lambda r: ", ".join(r.signals)),
    ]
    for name, symbol, size, color, label in markers:
        hits = [(e, r) for e, r in zip(ends, rows, strict=True) if getattr(r, name)]
        if not hits:
            continue
        fig.add_trace(
            go.Scatter(
                name=name,
                mode="markers",
                x=[e.isoformat() for e, _ in hits],
                y=[name] * len(hits),
                marker={"symbol": symbol, "size": size, "color": color},
                hovertext=[label(r) for _, r in hits],
                hoverinfo="text",
            ),
            row=1,
            col=1,
        )


def _add_cumulative(fig: Any, go: Any, rows: list[IterationRow], ends: list[datetime]) -> None:
    """Tokens, and cost when known, summed over the run (the lower panel)."""
    x_ends, cumulative_tokens, cumulative_cost = cumulative_series(ends, rows)
    fig.add_trace(
        go.Scatter(name="tokens (cumulative)", x=x_ends, y=cumulative_tokens, mode="lines+markers"),
        row=2,
        col=1,
        secondary_y=False,
    )
    if any(r.cost_usd is not None for r in rows):
        fig.add_trace(
            go.Scatter(
                name="cost USD (cumulative)",
                x=x_ends,
                y=cumulative_cost,
                mode="lines+markers",
                line={"dash": "dot"},
            ),
            row=2,
            col=1,
            secondary_y=True,
        )
    tokens_range, usd_range = axis_ranges(
        max(cumulative_tokens, default=0), max(cumulative_cost, default=0.0)
    )
    if any(r.cost_usd is not None for r in rows):
        fig.update_yaxes(
            title_text="USD", range=usd_range, tickprefix="$", row=2, col=1, secondary_y=True
        )
    fig.update_yaxes(
        title_text="tokens", range=tokens_range, tickformat=",d", row=2, col=1, secondary_y=False
    )


def axis_ranges(tokens: int, usd: float) -> tuple[list[float], list[float]]:
    """The lower panel's axes, both from 0: a run of one iteration gets an axis, not a sliver
    around its one value (3159-3161, or -0.98 to 1.02 USD). Cost tops out at half the height
    of tokens: spent in step with tokens, its line would lie exactly on theirs (pure)."""
    return [0.0, max(tokens, 1) * 1.05], [0.0, max(usd, 0.01) * 2.1]


def _add_waits(fig: Any, d: Digest) -> None:
    """The run's waits as shaded bands: a usage window, or an outage."""
    for wait in d.waits:
        if wait.started_at is None:
            continue
        fig.add_vrect(
            x0=wait.started_at.isoformat(),
            x1=(wait.started_at + timedelta(seconds=wait.duration)).isoformat(),
            fillcolor="#9575cd" if wait.kind.startswith("limit") else "#ffb74d",
            opacity=0.25,
            line_width=0,
            annotation_text=wait.kind,
        )


@functools.cache
def plotly_loader() -> str:
    """plotly.js for a page that opens offline, in a third of its size: gzip, base64, unpacked
    by the browser (``DecompressionStream``), then the figures waiting for it are drawn.
    Inline, plotly.js is 4.8 MB; packed it is 2 MB, once per page."""
    from plotly.offline import get_plotlyjs  # type: ignore[import-untyped]

    packed = base64.b64encode(gzip.compress(str(get_plotlyjs()).encode("utf-8"), 9)).decode()
    return (
        "<script>(async function(){var b=atob('" + packed + "');"
        "var u=new Uint8Array(b.length);for(var i=0;i<b.length;i++){u[i]=b.charCodeAt(i);}"
        "var s=new Blob([u]).stream().pipeThrough(new DecompressionStream('gzip'));"
        "(0,eval)(await new Response(s).text());"
        "(window.forgeflarePlots||[]).forEach(function(f){f();});"
        "window.forgeflarePlots=[];})();</script>"
    )


def cumulative_series(
    ends: list[datetime], rows: list[IterationRow]
) -> tuple[list[str], list[int], list[float]]:
    """Tokens and cost summed in time order (a resumed run's rows are not: its killed
    iteration ends after the rows recorded before the crash), so the lines never go back."""
    points = sorted(zip(ends, rows, strict=True), key=lambda p: p[0])
    xs: list[str] = []
    tokens_at: list[int] = []
    cost_at: list[float] = []
    tokens, cost = 0, 0.0
    for end, r in points:
        tokens += r.total_tokens
        cost += r.cost_usd or 0.0
        xs.append(end.isoformat())
        tokens_at.append(tokens)
        cost_at.append(round(cost, 6))
    return xs, tokens_at, cost_at


def _e(value: object) -> str:
    return html.escape(str(value))


def todo_html(items: Sequence[Todo]) -> str:
    """The "What needs you" section: one item a line with its command, or that nothing does."""
    if not items:
        return f"<section id='needs-you'><h2>What needs you</h2><p>{_e(NOTHING)}</p></section>"
    lines = "".join(
        "<li>"
        + (f"<b>{_e(item.where)}</b>: " if item.where else "")
        + f"{_e(item.what)}<br><code>{_e(item.command)}</code></li>"
        for item in items
    )
    return f"<section id='needs-you'><h2>What needs you</h2><ul>{lines}</ul></section>"


LOG_TAIL_LINES = 30
"""Lines of each iteration's log embedded in the page (its end: what failed is there)."""
LOG_TAILS = 50
"""Iterations (the latest) whose log tails are embedded; the others name their log file."""


def _tail(path: Path) -> str | None:
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 16384))
            text = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    return "\n".join(text.splitlines()[-LOG_TAIL_LINES:])


def render_html(
    d: Digest,
    *,
    run_dir: Path | None = None,
    out: Path | None = None,
    plotlyjs: bool = True,
    figure_id: str = "timeline",
) -> str:
    """The whole page. Logs are named by their absolute path (a page is mailed and moved:
    relative links die), with the tails of the latest iterations' logs embedded.
    ``plotlyjs=False`` leaves plotly.js out (for a page that holds it already)."""
    s = d.summary
    origin = next((r.started_at for r in d.rows if r.started_at), None)
    if origin is None:
        from forgeflare._clock import parse_time

        origin = parse_time(s.started_at) or datetime.fromtimestamp(0).astimezone()
    figure = _figure(d, origin, plotlyjs, figure_id) if d.rows else None
    parts = [*_head(d, figure), *_sections(d), *_iteration_table(d, run_dir)]
    return "\n".join(parts)


def _head(d: Digest, figure: str | None) -> list[str]:
    """The page's head, what needs you, the run in one line and its time line."""
    s = d.summary
    return [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>forgeflare run {_e(s.run_id)}</title><style>{_CSS}</style></head><body>",
        f"<h1>forgeflare run {_e(s.run_id)}</h1>",
        todo_html(d.todo),
        f"<p class='reason'>{_e(s.reason)}</p>",
        f"<p class='muted'>started {_e(s.started_at)} · {format_duration(s.duration)} · "
        f"{_e(headline(s))}</p>",
        "<h2>Timeline</h2>",
        figure
        if figure is not None
        else "<p class='muted'>(no plot: install forgeflare[report] for the timeline)</p>",
    ]


def _sections(d: Digest) -> list[str]:
    """The report's lists (:func:`~forgeflare.report._text.sections`), one ``<ul>`` each."""
    parts = []
    for section in sections(d):
        if section.lines:
            items = "".join(f"<li>{_e(line)}</li>" for line in section.lines)
        elif section.empty is not None:
            items = f"<li class='muted'>{_e(section.empty)}</li>"
        else:
            continue
        parts.append(f"<h2>{_e(section.title)}</h2><ul>{items}</ul>")
    return parts


def _iteration_table(d: Digest, run_dir: Path | None) -> list[str]:
    """One row per iteration, its log named by its absolute path (the latest with its tail)."""
    tailed = {r.number for r in d.rows[-LOG_TAILS:]}

    def log_cell(row: IterationRow) -> str:
        name = row.log or f"iteration-{row.number:03d}.log"
        if run_dir is None:
            return _e(name)
        target = run_dir / name
        tail = _tail(target) if row.number in tailed else None
        if tail is None:
            return f"<code>{_e(target)}</code>"
        return (
            f"<details><summary><code>{_e(target)}</code></summary><pre>{_e(tail)}</pre></details>"
        )

    parts = [
        "<h2>Iterations</h2><table><tr><th>#</th><th>outcome</th><th>stop reason</th>"
        "<th>duration</th><th>tokens</th><th>cost</th><th>commits</th><th>log</th></tr>"
    ]
    for r in d.rows:
        colour = OUTCOME_COLOURS.get(r.outcome, "#607d8b")
        parts.append(
            f"<tr><td class='num'>{r.number}</td>"
            f"<td><span class='outcome' style='background:{colour}'>{_e(r.outcome)}</span></td>"
            f"<td>{_e(r.stop_reason or '')}</td>"
            f"<td class='num'>{format_duration(r.duration)}</td>"
            f"<td class='num'>{r.total_tokens}</td>"
            f"<td class='num'>{format_cost(r.cost_usd) if r.cost_usd is not None else ''}</td>"
            f"<td class='num'>{r.commits}</td><td>{log_cell(r)}</td></tr>"
        )
    parts.append("</table></body></html>\n")
    return parts


def write_html(out: Path, page: str) -> None:
    """Write a page for ``--html FILE``; a failure is the option's error, in one line."""
    try:
        atomic_write_text(out, page, fsync=False)  # a link planted at report.html is replaced
    except OSError as exc:
        raise ConfigError(f"--html {out}: cannot write: {exc.strerror}") from exc
