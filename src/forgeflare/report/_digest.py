"""A run's records read into one digest: what happened, in words and figures (pure).

The input is the run's :class:`RunRecord` (records written by 0.2 are upgraded when read), plus
what git and the plan say; nothing here reads files. :func:`summarize` gives the one-line
view of ``forgeflare runs``; :func:`build_digest` the whole night for ``forgeflare report``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from forgeflare._clock import parse_time
from forgeflare.report._taskcost import TaskCosts, task_costs
from forgeflare.report._todo import RunFacts, Todo, needs_you
from forgeflare.supervisor import IterationRow, RunRecord, finish_reason, iteration_rows

__all__ = [
    "DEAD_REASON",
    "Commit",
    "Digest",
    "RunSummary",
    "Wait",
    "build_digest",
    "spend_by_agent",
    "summarize",
]


@dataclass(frozen=True)
class Wait:
    """A usage-window or outage wait (shaded in the timeline)."""

    kind: str
    started_at: datetime | None
    duration: float
    until: str | None = None


@dataclass(frozen=True)
class Commit:
    """A commit the run made, with its diffstat line."""

    sha: str
    subject: str
    stat: str = ""
    iteration: int | None = None


@dataclass(frozen=True)
class RunSummary:
    """One line of ``forgeflare runs``."""

    run_id: str
    started_at: str
    duration: float
    finish_type: str | None
    reason: str
    iterations: int
    commits: int
    tasks_done: int | None
    tokens: int
    cost_usd: float | None
    running: bool
    dead: bool = False
    """Unfinished, and its supervisor no longer runs (killed): ``--resume`` picks it up."""

    def as_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "started_at": self.started_at,
            "duration": round(self.duration, 1),
            "finish_type": self.finish_type,
            "reason": self.reason,
            "iterations": self.iterations,
            "commits": self.commits,
            "tasks_done": self.tasks_done,
            "tokens": self.tokens,
            "cost_usd": self.cost_usd,
            "running": self.running,
            "dead": self.dead,
        }


def _waits(run: RunRecord) -> list[Wait]:
    return [
        Wait(kind=w.kind, started_at=parse_time(w.started_at), duration=w.duration, until=w.until)
        for w in run.waits
    ]


def _run_duration(run: RunRecord, now: datetime | None) -> float:
    start = parse_time(run.started_at)
    end = parse_time(run.finished_at) or now
    if end is None:  # unfinished (a dead run): as long as its supervisor last said it ran
        return run.totals.active_seconds
    if start is None:
        return 0.0
    return max(0.0, (end - start).total_seconds())


def _tasks_done(run: RunRecord) -> int | None:
    counts = [r.plan_unchecked for r in run.iterations if r.plan_unchecked is not None]
    first = run.plan_unchecked_at_start
    if first is None:
        first = counts[0] if counts else None
    if first is None or not counts:
        return None
    return max(0, first - counts[-1])


DEAD_REASON = "dead — forgeflare loop --resume"
"""The reason shown for an unfinished run whose supervisor is gone."""


def summarize(
    run: RunRecord, now: datetime | None = None, *, alive: bool | None = None
) -> RunSummary:
    """The one-line view of a run: its figures are the record's totals, as the loop said them.
    ``alive``: whether its supervisor still runs (``False`` makes an unfinished run ``dead``;
    ``None``: not known)."""
    dead = not run.finished_at and alive is False
    totals = run.totals
    return RunSummary(
        run_id=run.run_id,
        started_at=run.started_at,
        duration=_run_duration(run, now),
        finish_type=run.finish_type,
        reason=DEAD_REASON if dead else finish_reason(run),
        iterations=totals.iterations,
        commits=totals.commits,
        tasks_done=_tasks_done(run),
        tokens=totals.tokens,
        cost_usd=totals.cost_usd,
        running=not run.finished_at and not dead,
        dead=dead,
    )


@dataclass
class Digest:
    """Everything ``forgeflare report`` shows about one run."""

    summary: RunSummary
    rows: list[IterationRow]
    waits: list[Wait]
    commits: list[Commit] = field(default_factory=list)
    tasks_done: list[str] = field(default_factory=list)
    tasks_open: list[str] = field(default_factory=list)
    hook_failures: list[str] = field(default_factory=list)
    signals: list[tuple[int, str]] = field(default_factory=list)
    spend: dict[str, Any] = field(default_factory=dict)
    todo: list[Todo] = field(default_factory=list)
    """What needs a person (:func:`~forgeflare.report._todo.needs_you`)."""
    task_costs: TaskCosts | None = None
    """Cost per finished plan task (``None``: no plan)."""
    evidence: list[str] = field(default_factory=list)
    """Each completion claim and its fate, each reviewer verdict (one line each)."""
    progress: list[str] = field(default_factory=list)
    """The progress measure of each iteration that had one (``[limits] stall_after``)."""

    def slowest(self, n: int = 3) -> list[IterationRow]:
        return sorted(self.rows, key=lambda r: r.duration, reverse=True)[:n]


def _hook_failures(run: RunRecord) -> list[str]:
    out = []
    hooks = list(run.hooks)
    hooks += [r.next_iteration_hook for r in run.iterations if r.next_iteration_hook is not None]
    for hook in hooks:
        status = hook.status
        if status not in ("success", "ok", "skipped", "missing", "disabled", "skip", "warning"):
            where = f" (iteration {hook.iteration})" if hook.iteration else ""
            out.append(f"{hook.name}: {status}, exit {hook.exit_code}{where}")
    return out


def _evidence(run: RunRecord) -> tuple[list[str], list[str]]:
    """Claims with their fate and the reviewer's verdicts; the progress of each iteration."""
    claims: list[str] = []
    progress: list[str] = []
    for row in run.iterations:
        claim, review, moved = row.claim, row.review, row.progress
        if claim is not None:
            fate = (
                "accepted"
                if claim.accepted
                else f"refused by the {claim.rejected_by}: {claim.why}".rstrip(": ")
            )
            claims.append(f"#{row.number} claim by {claim.by}: {fate}")
        if review is not None:
            if review.complete is None:
                said = f"no verdict ({review.error})"
            else:
                said = "complete" if review.complete else "not complete"
                said += "".join(f"; {r}" for r in review.reasons)
                said += "".join(f"; missing: {m}" for m in review.missing)
            claims.append(f"#{row.number} reviewer {review.model}: {said}")
        if moved is not None:
            gate = "" if moved.gate_exit is None else f", gate exit {moved.gate_exit}"
            streak = f", {moved.no_progress} in a row" if not moved.made else ""
            word = "progress" if moved.made else "no progress"
            progress.append(f"#{row.number} {word}: {moved.why}{gate}{streak}")
    return claims, progress


def spend_by_agent(run: RunRecord) -> dict[str, dict[str, Any]]:
    """Iterations, tokens and cost per agent (``BACKEND[:PROFILE]``) of the run's agent rows."""
    out: dict[str, dict[str, Any]] = {}
    for it in run.iterations:
        if it.skipped:
            continue
        backend = it.backend or run.backend
        label = f"{backend}:{it.profile}" if it.profile else backend
        row = out.setdefault(label, {"iterations": 0, "tokens": 0, "cost_usd": 0.0})
        row["iterations"] += 1
        row["tokens"] += it.tokens.total
        if it.cost_usd is None or row["cost_usd"] is None:
            row["cost_usd"] = None
        else:
            row["cost_usd"] = round(row["cost_usd"] + it.cost_usd, 6)
    return out


def build_digest(
    run: RunRecord,
    *,
    commits: Sequence[Commit] = (),
    tasks_done: Sequence[str] = (),
    tasks_open: Sequence[str] = (),
    now: datetime | None = None,
    run_dir: str = "",
    facts: RunFacts | None = None,
    task_names: Mapping[int, Sequence[str]] | None = None,
) -> Digest:
    """The digest of one run, given what git and the plan say about it (``task_names``: the
    boxes each iteration checked, by its number), and ``facts``: what the machine says now
    (a dead supervisor, a dirty tree)."""
    facts = facts or RunFacts()
    rows = iteration_rows(run)
    summary = summarize(run, now, alive=facts.alive)
    unknown = [r.number for r in rows if r.cost_usd is None and r.total_tokens]
    evidence, progress = _evidence(run)
    return Digest(
        summary=summary,
        rows=rows,
        waits=_waits(run),
        commits=list(commits),
        tasks_done=list(tasks_done),
        tasks_open=list(tasks_open),
        hook_failures=_hook_failures(run),
        signals=[(r.number, s) for r in rows for s in r.signals],
        spend={
            "tokens": run.totals.tokens_by_kind.model_dump(),
            "cost_usd": summary.cost_usd,
            "cost_unknown_in": unknown,
            "by_agent": spend_by_agent(run),
        },
        todo=needs_you(run, run_dir=run_dir, alive=facts.alive, dirty=facts.dirty),
        task_costs=task_costs(run, task_names),
        evidence=evidence,
        progress=progress,
    )
