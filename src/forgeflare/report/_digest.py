"""A run's records read into one digest: what happened, in words and figures (pure).

The input is ``run.json`` as a dict (older records with a single token count are read too),
plus what git and the plan say; nothing here reads files. :func:`summarize` gives the one-line
view of ``forgeflare runs``; :func:`build_digest` the whole night for ``forgeflare report``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "Commit",
    "Digest",
    "IterationRow",
    "RunSummary",
    "Wait",
    "build_digest",
    "finish_reason",
    "iteration_rows",
    "parse_time",
    "summarize",
]

GOOD_OUTCOMES = frozenset({"ok"})
TOKEN_KINDS = ("input", "output", "cache_read", "cache_write")


def parse_time(value: object) -> datetime | None:
    """An ISO UTC time from the records, or ``None``."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _num(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _tokens(row: Mapping[str, Any]) -> dict[str, int]:
    tokens = row.get("tokens")
    if isinstance(tokens, Mapping):
        return {
            k: int(_num(tokens.get(k))) for k in ("input", "output", "cache_read", "cache_write")
        }
    return {"input": 0, "output": int(_num(tokens)), "cache_read": 0, "cache_write": 0}


def _outcome(row: Mapping[str, Any]) -> str:
    """The DESIGN outcome, or one derived from an older row."""
    outcome = row.get("outcome")
    if isinstance(outcome, str) and outcome:
        return outcome
    if row.get("skipped"):
        return "skipped"
    if row.get("timed_out"):
        return "timed_out"
    reason = row.get("final_reason")
    if reason == "api_error":
        return "api_error"
    code = row.get("exit_code")
    if (code in (0, None) and reason not in (None, "api_error")) or code == 0:
        return "ok"
    return "agent_error"


@dataclass(frozen=True)
class IterationRow:
    """One iteration as the report shows it."""

    number: int
    started_at: datetime | None
    duration: float
    outcome: str
    stop_reason: str | None
    tokens: dict[str, int]
    cost_usd: float | None
    commits: int
    signals: tuple[str, ...] = ()
    log: str | None = None
    detail: str = ""

    @property
    def total_tokens(self) -> int:
        return sum(self.tokens.values())


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
        }


def _signals(row: Mapping[str, Any]) -> tuple[str, ...]:
    names = []
    for obs in row.get("observations") or []:
        if isinstance(obs, Mapping) and obs.get("signal"):
            names.append(str(obs.get("name") or obs.get("signal")))
    return tuple(names)


def iteration_rows(run: Mapping[str, Any]) -> list[IterationRow]:
    """Every iteration row of a run, in order."""
    rows = []
    for raw in run.get("iterations") or []:
        if not isinstance(raw, Mapping):
            continue
        cost = raw.get("cost_usd")
        detail = raw.get("detail") or raw.get("error") or ""
        rows.append(
            IterationRow(
                number=int(_num(raw.get("number"))),
                started_at=parse_time(raw.get("started_at")),
                duration=_num(raw.get("duration")),
                outcome=_outcome(raw),
                stop_reason=raw.get("stop_reason") or raw.get("final_reason"),
                tokens=_tokens(raw),
                cost_usd=float(cost) if isinstance(cost, int | float) else None,
                commits=int(_num(raw.get("commits"))),
                signals=_signals(raw),
                log=raw.get("log"),
                detail=str(detail),
            )
        )
    return rows


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


def _outcome_words(row: IterationRow) -> str:
    words = f"`{row.outcome}`"
    if row.stop_reason and row.stop_reason not in (row.outcome, "end_turn"):
        words += f" {row.stop_reason}"
    if row.detail:
        words += f" {row.detail}"
    return words


def finish_reason(run: Mapping[str, Any]) -> str:
    """Why the run ended, in words (the record's own ``finish_reason`` wins)."""
    own = run.get("finish_reason")
    if isinstance(own, str) and own:
        return own
    finish = run.get("finish_type")
    rows = iteration_rows(run)
    last = rows[-1] if rows else None
    if finish is None:
        return "still running" if not run.get("finished_at") else "finished"
    if finish == "complete":
        signals = [s for r in rows for s in r.signals]
        if last is not None and last.stop_reason == "convergence_signal":
            name = f" `{signals[-1]}`" if signals else ""
            return f"complete: convergence signal{name} in iteration {last.number}"
        return "complete: no open task left in the plan"
    if finish == "error" and last is not None:
        streak = 0
        for row in reversed(rows):
            if row.outcome in GOOD_OUTCOMES or row.outcome == "skipped":
                break
            streak += 1
        return (
            f"stopped: {streak} error iteration{'s' if streak != 1 else ''} in a row, "
            f"the last one {_outcome_words(last)}"
        )
    words = {
        "max_iterations": f"stopped: reached max_iterations ({len(rows)} iterations)",
        "timeout": "stopped: the wall-clock limit (max_runtime) was reached",
        "manual": "stopped by hand (Ctrl+C, SIGTERM or forgeflare stop)",
        "stopped": "stopped by `forgeflare stop` after the current iteration",
        "no_changes": "stopped: an iteration made no commit and changed nothing",
        "hook_abort": "stopped: a lifecycle hook asked to abort (exit 2)",
        "stuck": "stopped: hook blocks ended several iterations in a row",
        "skips": "stopped: next_iteration skipped several iterations in a row",
        "budget": "stopped: the cost budget (max_cost) is spent",
    }
    return words.get(str(finish), f"finished: {finish}")


def summarize(run: Mapping[str, Any], now: datetime | None = None) -> RunSummary:
    """The one-line view of a run."""
    rows = iteration_rows(run)
    totals = run.get("totals") if isinstance(run.get("totals"), Mapping) else {}
    assert isinstance(totals, Mapping)
    commits = int(_num(totals.get("commits"))) or sum(r.commits for r in rows)
    return RunSummary(
        run_id=str(run.get("run_id", "?")),
        started_at=str(run.get("started_at", "")),
        duration=_run_duration(run, now),
        finish_type=run.get("finish_type"),
        reason=finish_reason(run),
        iterations=sum(1 for r in rows if r.outcome != "skipped"),
        commits=commits,
        tasks_done=_tasks_done(run),
        tokens=sum(r.total_tokens for r in rows),
        cost_usd=_cost(rows, run),
        running=not run.get("finished_at"),
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
