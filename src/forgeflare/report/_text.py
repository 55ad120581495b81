"""The digest as plain text: for a terminal and for a log file alike (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from forgeflare._units import format_cost, format_duration, format_tokens
from forgeflare._words import plural
from forgeflare.report._digest import Digest, RunSummary
from forgeflare.report._taskcost import TaskCost
from forgeflare.report._todo import todo_section

__all__ = [
    "Section",
    "format_cost",
    "format_duration",
    "headline",
    "render_runs",
    "render_text",
    "sections",
    "task_cost_lines",
]


def _tokens(n: int) -> str:
    return format_tokens(n, millions=2)


def render_runs(summaries: list[RunSummary]) -> str:
    """``forgeflare runs``: one line per run, newest first."""
    if not summaries:
        return "no runs yet"
    lines = []
    for s in summaries:
        finish = "dead" if s.dead else "running" if s.running else (s.finish_type or "?")
        tasks = f"{s.tasks_done} tasks" if s.tasks_done is not None else "- tasks"
        lines.append(
            f"{s.run_id}  {s.started_at:<20}  {format_duration(s.duration):>7}  {finish:<14} "
            f"{s.iterations:>3} it  {s.commits:>3} commits  {tasks:>8}  "
            f"{_tokens(s.tokens):>7} tok  {format_cost(s.cost_usd)}"
        )
        lines.append(f"    {s.reason}")
    return "\n".join(lines)


def headline(s: RunSummary) -> str:
    """The run's counts on one line, as the text and the HTML report print them."""
    return (
        f"{plural(s.iterations, 'iteration')} · {plural(s.commits, 'commit')} · "
        f"{_tokens(s.tokens)} tokens · {format_cost(s.cost_usd)}"
    )


def task_cost_lines(d: Digest) -> list[str]:
    """Cost per finished task, and the spend that finished nothing (none without a plan)."""
    costs = d.task_costs
    if costs is None:
        return []
    lines = [_task_cost_line(c) for c in costs.finished] or ["no task finished"]
    if costs.idle_iterations:
        lines.append(
            f"spent on iterations that finished nothing: {format_cost(costs.idle_cost_usd)} "
            f"({plural(costs.idle_iterations, 'iteration')})"
        )
    return lines


_TASK_NAME_MAX = 60
"""Characters of a plan box's text a cost line shows (the rest is in the plan)."""


def _task_cost_line(c: TaskCost) -> str:
    """``iteration 2: "add the parser", $3.00 (2 iterations)``; the count when the boxes'
    texts are not known (no git, or the plan was never committed)."""
    spent = f"({plural(c.iterations, 'iteration')})"
    if not c.names:
        return (
            f"iteration {c.iteration}: {plural(c.tasks, 'task')} checked, "
            f"{format_cost(c.cost_usd)} each {spent}"
        )
    shown = ", ".join(f'"{_short(name)}"' for name in c.names)
    each = " each" if c.tasks > 1 else ""
    return f"iteration {c.iteration}: {shown}, {format_cost(c.cost_usd)}{each} {spent}"


def _short(text: str) -> str:
    return text if len(text) <= _TASK_NAME_MAX else text[: _TASK_NAME_MAX - 1] + "…"


@dataclass(frozen=True)
class Section:
    """One list of the report, the same in the text and the HTML report."""

    title: str
    lines: list[str]
    empty: str | None = "none"
    """What stands in for no lines; ``None``: the section is left out."""


def _spend_lines(d: Digest) -> list[str]:
    t = d.spend.get("tokens", {})
    lines = [
        f"input {_tokens(t.get('input', 0))} · output {_tokens(t.get('output', 0))} · "
        f"cache read {_tokens(t.get('cache_read', 0))} · cache write "
        f"{_tokens(t.get('cache_write', 0))} · {format_cost(d.spend.get('cost_usd'))}"
    ]
    by_agent = d.spend.get("by_agent") or {}
    if len(by_agent) > 1:
        lines += [
            f"{label}: {row['iterations']} it · {_tokens(row['tokens'])} tokens · "
            f"{format_cost(row['cost_usd'])}"
            for label, row in by_agent.items()
        ]
    unknown = d.spend.get("cost_unknown_in") or []
    if unknown:
        lines.append(f"cost unknown for iteration(s) {', '.join(map(str, unknown))}")
    return lines


def sections(d: Digest) -> list[Section]:
    """The report's lists, in order, between the run's headline and its iterations."""
    return [
        Section(
            "Commits",
            [f"{c.sha[:8]} {c.subject}" + (f"  ({c.stat})" if c.stat else "") for c in d.commits],
        ),
        Section(
            "Plan",
            [f"[x] {t}" for t in d.tasks_done] + [f"[ ] {t}" for t in d.tasks_open],
            "no plan tasks",
        ),
        Section("Cost per task", task_cost_lines(d), None),
        Section("Spend", _spend_lines(d)),
        Section(
            "Waits",
            [
                f"{w.kind} {format_duration(w.duration)}" + (f" until {w.until}" if w.until else "")
                for w in d.waits
            ],
        ),
        Section(
            "Slowest iterations",
            [
                f"#{r.number} {format_duration(r.duration)} {r.outcome}"
                + (f" ({r.stop_reason})" if r.stop_reason else "")
                for r in d.slowest()
            ],
        ),
        Section("Hook failures", list(d.hook_failures)),
        Section("Convergence signals", [f"#{n} {name}" for n, name in d.signals]),
        Section("Completion claims", list(d.evidence)),
        Section("Progress", list(d.progress), None),
    ]


def render_text(d: Digest) -> str:
    """``forgeflare report``: the night in one page of text."""
    s = d.summary
    out = [*todo_section(d.todo), ""]
    out += [
        f"run {s.run_id}  started {s.started_at}  {format_duration(s.duration)}",
        f"{s.reason}",
        headline(s),
    ]
    for section in sections(d):
        lines = section.lines or ([] if section.empty is None else [section.empty])
        if lines:
            out += ["", section.title, *(f"  {line}" for line in lines)]
    out += ["", "Iterations"]
    for r in d.rows:
        cost = "" if r.cost_usd is None else f" {format_cost(r.cost_usd)}"
        out.append(
            f"  #{r.number:<3} {r.outcome:<12} {format_duration(r.duration):>7} "
            f"{_tokens(r.total_tokens):>7} tok{cost} {plural(r.commits, 'commit')}"
            + (f"  {r.stop_reason}" if r.stop_reason else "")
        )
    return "\n".join(out) + "\n"
