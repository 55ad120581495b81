"""A run's records read into one digest: what happened, in words and figures (pure).

The input is ``run.json`` as a dict (older records with a single token count are read too),
plus what git and the plan say; nothing here reads files. :func:`summarize` gives the one-line
view of ``forgeflare runs``; :func:`build_digest` the whole night for ``forgeflare report``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from forgeflare._clock import parse_time
from forgeflare.supervisor._history import IterationRow, finish_reason, iteration_rows

__all__ = [
    "DEAD_REASON",
    "Commit",
    "Digest",
    "RunSummary",
    "Wait",
    "build_digest",
    "summarize",
]


def _num(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


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


def _waits(run: Mapping[str, Any]) -> list[Wait]:
    out = []
    for raw in run.get("waits") or []:
        if isinstance(raw, Mapping):
            out.append(
                Wait(
                    kind=str(raw.get("kind", "wait")),
                    started_at=parse_time(raw.get("started_at")),
                    duration=_num(raw.get("duration")),
                    until=raw.get("until"),
                )
            )
    return out


def _run_duration(run: Mapping[str, Any], now: datetime | None) -> float:
    start = parse_time(run.get("started_at"))
    end = parse_time(run.get("finished_at")) or now
    if start is None or end is None:
        return 0.0
    return max(0.0, (end - start).total_seconds())


def _cost(rows: Sequence[IterationRow], run: Mapping[str, Any]) -> float | None:
    totals = run.get("totals")
    if isinstance(totals, Mapping) and isinstance(totals.get("cost_usd"), int | float):
        return float(totals["cost_usd"])
    known = [r.cost_usd for r in rows if r.cost_usd is not None]
    return sum(known) if known else None


def _tasks_done(run: Mapping[str, Any]) -> int | None:
    counts: list[int] = [
        r["plan_unchecked"]
        for r in run.get("iterations") or []
        if isinstance(r, Mapping) and isinstance(r.get("plan_unchecked"), int)
    ]
    start = run.get("plan_unchecked_at_start")
    first = start if isinstance(start, int) else (counts[0] if counts else None)
    if first is None or not counts:
        return None
    return max(0, first - counts[-1])


DEAD_REASON = "dead — forgeflare loop --resume"
"""The reason shown for an unfinished run whose supervisor is gone."""


def summarize(
    run: Mapping[str, Any], now: datetime | None = None, *, alive: bool | None = None
) -> RunSummary:
    """The one-line view of a run. ``alive``: whether its supervisor still runs (``False``
    makes an unfinished run ``dead``; ``None``: not known)."""
    dead = not run.get("finished_at") and alive is False
    rows = iteration_rows(run)
    totals = run.get("totals") if isinstance(run.get("totals"), Mapping) else {}
    assert isinstance(totals, Mapping)
    commits = int(_num(totals.get("commits"))) or sum(r.commits for r in rows)
    return RunSummary(
        run_id=str(run.get("run_id", "?")),
        started_at=str(run.get("started_at", "")),
        duration=_run_duration(run, now),
        finish_type=run.get("finish_type"),
        reason=DEAD_REASON if dead else finish_reason(run),
        iterations=sum(1 for r in rows if r.outcome != "skipped"),
        commits=commits,
        tasks_done=_tasks_done(run),
        tokens=sum(r.total_tokens for r in rows),
        cost_usd=_cost(rows, run),
        running=not run.get("finished_at") and not dead,
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

    def slowest(self, n: int = 3) -> list[IterationRow]:
        return sorted(self.rows, key=lambda r: r.duration, reverse=True)[:n]


def _hook_failures(run: Mapping[str, Any]) -> list[str]:
    out = []
    hooks = list(run.get("hooks") or [])
    for row in run.get("iterations") or []:
        if isinstance(row, Mapping) and isinstance(row.get("next_iteration_hook"), Mapping):
            hooks.append(row["next_iteration_hook"])
    for hook in hooks:
        if not isinstance(hook, Mapping):
            continue
        status = str(hook.get("status", ""))
        if status not in ("success", "ok", "skipped", "missing", "disabled", "skip", "warning"):
            code = hook.get("exit_code")
            where = f" (iteration {hook['iteration']})" if hook.get("iteration") else ""
            out.append(f"{hook.get('name', '?')}: {status}, exit {code}{where}")
    return out


def build_digest(
    run: Mapping[str, Any],
    *,
    commits: Sequence[Commit] = (),
    tasks_done: Sequence[str] = (),
    tasks_open: Sequence[str] = (),
    now: datetime | None = None,
) -> Digest:
    """The digest of one run, given what git and the plan say about it."""
    rows = iteration_rows(run)
    summary = summarize(run, now)
    tokens = {
        k: sum(r.tokens[k] for r in rows) for k in ("input", "output", "cache_read", "cache_write")
    }
    unknown = [r.number for r in rows if r.cost_usd is None and r.total_tokens]
    return Digest(
        summary=summary,
        rows=rows,
        waits=_waits(run),
        commits=list(commits),
        tasks_done=list(tasks_done),
        tasks_open=list(tasks_open),
        hook_failures=_hook_failures(run),
        signals=[(r.number, s) for r in rows for s in r.signals],
        spend={"tokens": tokens, "cost_usd": summary.cost_usd, "cost_unknown_in": unknown},
    )
