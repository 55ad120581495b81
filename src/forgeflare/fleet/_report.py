"""``forgeflare fleet report``: one digest of every loop, the fleet's spend and what landed.

Each loop's section is the report page of its newest run (``forgeflare report``), read from the
loop's worktree; the head says what landed, what stayed on a branch and why, and what the fleet
spent. The HTML form puts each loop's report page, as it is, into one page.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from forgeflare._errors import ConfigError
from forgeflare._units import format_cost
from forgeflare.fleet._state import FleetRecord, LoopRecord
from forgeflare.report import Todo, fleet_needs_you, land_command, todo_html, todo_section
from forgeflare.supervisor import RunRecord

__all__ = [
    "fleet_report_html",
    "fleet_report_text",
    "fleet_todo",
    "landing_html",
    "loop_report_text",
]

_LANDED = ("landed", "pr_opened")
_UNDER_WAY = ("pending", "running", "landing")
"""Loops not landed yet that need nothing from you: the fleet lands them when they complete."""
_LANDING_STYLE = (
    ".landed{color:#1a7f37}.not-landed{color:#b42318}"
    ".badge{font-size:60%;border:1px solid;border-radius:4px;padding:0 4px;margin-left:6px}"
)


def _newest_run(loop: LoopRecord) -> Path | None:
    from forgeflare.report import find_run

    if not loop.worktree or not Path(loop.worktree).is_dir():
        return None
    try:
        return find_run(Path(loop.worktree), None, {})
    except ConfigError:
        return None


def loop_report_text(loop: LoopRecord) -> str | None:
    """The text report of the loop's newest run, or ``None`` when it has not run."""
    from forgeflare.report import collect_digest, render_text

    run_dir = _newest_run(loop)
    if run_dir is None:
        return None
    return render_text(collect_digest(Path(loop.worktree), run_dir))


def fleet_todo(record: FleetRecord) -> list[Todo]:
    """The fleet's "What needs you": each loop's newest run, and what did not land."""
    from forgeflare.report import RunFacts, load_run, run_facts

    runs: dict[str, tuple[RunRecord, str] | None] = {}
    facts: dict[str, RunFacts] = {}
    for loop in record.loops:
        run_dir = _newest_run(loop)
        try:
            runs[loop.name] = (load_run(run_dir), str(run_dir)) if run_dir else None
        except ConfigError:
            runs[loop.name] = None
        found = runs[loop.name]
        if run_dir is not None and found is not None:
            facts[loop.name] = run_facts(Path(loop.worktree), run_dir, found[0])
    from forgeflare.platform import is_alive

    # One rule with `fleet status`: recorded as running, its process gone.
    alive = None if record.finished_at else is_alive(record.pid, record.pid_started)
    return fleet_needs_you(record.loops, runs, record.fleet_file, facts, fleet_alive=alive)


def _head(record: FleetRecord, budget: float | None) -> list[str]:
    state = "running" if record.finished_at is None else f"finished {record.finished_at}"
    cap = f" of ${budget:g}" if budget else ""
    lines = [
        f"fleet {record.name}: started {record.started_at}, {state}",
        (f"spent ${record.spent_usd:.2f}" if record.spent_usd is not None else "cost unknown")
        + cap
        + (" · the budget was spent: the remaining loops stopped" if record.budget_hit else "")
        + (f" · usage window until {record.window_until}" if record.window_until else ""),
    ]
    landed, left = _split(record)
    lines.append(f"landed: {len(landed)} of {len(record.loops)} loop(s)")
    lines += [f"  {loop.name} ({loop.branch}): {loop.reason}" for loop in landed]
    if left:
        lines.append("not landed:")
        lines += [
            f"  {loop.name} ({loop.branch}): {loop.status}"
            + (f" · {loop.reason}" if loop.reason else "")
            for loop in left
        ]
    return lines


def _split(record: FleetRecord) -> tuple[list[LoopRecord], list[LoopRecord]]:
    """The loops that landed (or opened a pull request) and those that did not."""
    landed = [loop for loop in record.loops if loop.status in _LANDED]
    return landed, [loop for loop in record.loops if loop.status not in _LANDED]


def landing_html(record: FleetRecord) -> str:
    """The page's landing section: the loops that landed, then those that did not, each with
    why and what to run to land it."""
    e = html.escape
    landed, left = _split(record)

    def item(loop: LoopRecord, what: str) -> str:
        branch = f" <code>{e(loop.branch)}</code>" if loop.branch else ""
        return f"<li><b>{e(loop.name)}</b>{branch}: {what}</li>"

    done = "".join(item(loop, e(loop.reason or loop.status)) for loop in landed)
    rest = []
    for loop in left:
        why = e(loop.status + (f" · {loop.reason}" if loop.reason else ""))
        if loop.status in _UNDER_WAY:
            then = "under way: the fleet lands it when it completes"
        else:
            then = f"to land: <code>{e(land_command(loop, record.fleet_file))}</code>"
        rest.append(item(loop, f"{why}<br>{then}"))
    return "".join(
        [
            "<section id='landing'>",
            f"<h2 class='landed'>Landed: {len(landed)} of {len(record.loops)} loop(s)</h2>",
            f"<ul id='landed'>{done}</ul>" if landed else "<p class='muted'>none</p>",
            f"<h2 class='not-landed'>Not landed: {len(left)}</h2>",
            f"<ul id='not-landed'>{''.join(rest)}</ul>" if left else "<p class='muted'>none</p>",
            "</section>",
        ]
    )


def _badge(loop: LoopRecord) -> str:
    if loop.status in _LANDED:
        return "<span class='badge landed'>landed</span>"
    return "<span class='badge not-landed'>not landed</span>"


def _loop_line(loop: LoopRecord) -> str:
    return (
        f"{loop.status} · finished {loop.finish_type or '-'} · {loop.commits} commit(s) · "
        f"{format_cost(loop.cost_usd)} · {len(loop.runs)} run(s)"
    )


def fleet_report_text(record: FleetRecord, budget: float | None = None) -> str:
    """The whole fleet in text: what needs you, the head, then each loop's report page."""
    out = todo_section(fleet_todo(record))
    out += ["", *_head(record, budget)]
    for loop in record.loops:
        out += ["", f"== {loop.name} ({loop.branch}) ==", _loop_line(loop)]
        if loop.reason:
            out.append(loop.reason)
        page = loop_report_text(loop)
        out += ["", page.rstrip("\n") if page is not None else "(no run)"]
    return "\n".join(out) + "\n"


_BODY = re.compile(r"<body>(.*)</body>", re.S)
_STYLE = re.compile(r"<style>(.*?)</style>", re.S)


def fleet_report_html(record: FleetRecord, out: Path, budget: float | None = None) -> str:
    """One HTML page: the head, then each loop's ``forgeflare report`` page as a section."""
    from forgeflare.report import collect_digest, render_html

    style = ""
    sections: list[str] = []
    has_plotly = False
    for loop in record.loops:
        e = html.escape
        sections.append(
            f"<section><h1 id='loop-{e(loop.name)}'>{e(loop.name)} "
            f"<small>{e(loop.branch)}</small>{_badge(loop)}</h1><p>{e(_loop_line(loop))}</p>"
            + (f"<p class='reason'>{e(loop.reason)}</p>" if loop.reason else "")
        )
        run_dir = _newest_run(loop)
        if run_dir is None:
            sections.append("<p class='muted'>(no run)</p></section>")
            continue
        page = render_html(
            collect_digest(Path(loop.worktree), run_dir),
            run_dir=run_dir.resolve(),
            out=out.resolve(),
            plotlyjs=not has_plotly,  # plotly.js once per page, not once per loop
            figure_id=f"timeline-{loop.name}",
        )
        has_plotly = has_plotly or "<script" in page
        if not style and (m := _STYLE.search(page)):
            style = m.group(1)
        body = _BODY.search(page)
        sections.append((body.group(1) if body else "") + "</section>")
    top = _head(record, budget)[:2]
    return "\n".join(
        [
            "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
            f"<title>forgeflare fleet {html.escape(record.name)}</title>",
            f"<style>{style}{_LANDING_STYLE}</style></head><body>",
            f"<h1>forgeflare fleet {html.escape(record.name)}</h1>",
            todo_html(fleet_todo(record)),
            *(f"<p>{html.escape(line)}</p>" for line in top),
            landing_html(record),
            *sections,
            "</body></html>\n",
        ]
    )
