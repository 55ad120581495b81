"""A project's runs read back: where they are, and why each ended.

:class:`IterationRow` is the report's projection of a row of the one
:class:`~forgeflare.supervisor.records._records.RunRecord`; :func:`finish_reason` words a
finish for the loop's summary and the report alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from forgeflare._clock import parse_time
from forgeflare._errors import ConfigError
from forgeflare.supervisor.backends._report import Tokens
from forgeflare.supervisor.config._config import load_config
from forgeflare.supervisor.records._records import IterationRecord, RunRecord

__all__ = ["IterationRow", "finish_reason", "iteration_rows", "runs_root"]

GOOD_OUTCOMES = frozenset({"ok"})


def runs_root(project: Path, env: Mapping[str, str]) -> Path:
    """Where the project's run folders are (``[paths] log_dir``, default ``.fresher/runs``)."""
    try:
        log_dir = load_config(project, env=env).config.paths.log_dir
    except ConfigError:
        log_dir = ".fresher/runs"
    root = Path(log_dir)
    return root if root.is_absolute() else project / root


@dataclass(frozen=True)
class IterationRow:
    """One iteration as the report shows it (a projection of its :class:`IterationRecord`)."""

    number: int
    started_at: datetime | None
    duration: float
    outcome: str
    stop_reason: str | None
    tokens: Tokens
    cost_usd: float | None
    commits: int
    signals: tuple[str, ...] = ()
    log: str | None = None
    detail: str = ""
    signal: str | None = None
    """A completion tag the agent's final message carried (``<loop-done>COMPLETE</loop-done>``)."""
    plan_unchecked: int | None = None

    @property
    def total_tokens(self) -> int:
        """All tokens: input + output + cache reads + cache writes."""
        return self.tokens.total


def _signals(row: IterationRecord) -> tuple[str, ...]:
    names = []
    for obs in row.observations:
        if obs.get("signal"):
            names.append(str(obs.get("name") or obs.get("signal")))
    return tuple(names)


def _row(row: IterationRecord) -> IterationRow:
    return IterationRow(
        number=row.number,
        started_at=parse_time(row.started_at),
        duration=row.duration,
        outcome="skipped" if row.skipped else row.outcome,
        stop_reason=row.stop_reason,
        tokens=row.tokens,
        cost_usd=row.cost_usd,
        commits=row.commits,
        signals=_signals(row),
        log=row.log,
        detail=row.detail or "",
        signal=row.signal,
        plan_unchecked=row.plan_unchecked,
    )


def iteration_rows(run: RunRecord) -> list[IterationRow]:
    """Every iteration row of a run, in order."""
    return [_row(row) for row in run.iterations]


def _outcome_words(row: IterationRow) -> str:
    words = f"`{row.outcome}`"
    if row.stop_reason and row.stop_reason not in (row.outcome, "end_turn"):
        words += f" {row.stop_reason}"
    if row.detail:
        words += f" {row.detail}"
    return words


def finish_reason(run: RunRecord) -> str:
    """Why the run ended, in words (the record's own ``finish_reason`` wins)."""
    if run.finish_reason:
        return run.finish_reason
    finish = run.finish_type
    rows = iteration_rows(run)
    last = rows[-1] if rows else None
    if finish is None:
        return "still running" if not run.finished_at else "finished"
    if finish == "complete":
        signals = [s for r in rows for s in r.signals]
        if last is not None and last.stop_reason == "convergence_signal":
            name = f" `{signals[-1]}`" if signals else ""
            return f"complete: convergence signal{name} in iteration {last.number}"
        ran = [r for r in rows if r.outcome != "skipped"]
        tagged = ran[-1] if ran and ran[-1].signal else None
        if tagged is not None and not (last is not None and last.plan_unchecked == 0):
            return f"complete: the agent said {tagged.signal} in iteration {tagged.number}"
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
    counted = run.counted_iterations
    skipped = sum(1 for r in rows if r.outcome == "skipped")
    its = f"{counted} iteration{'s' if counted != 1 else ''}"
    its += f", {skipped} of them skipped" if skipped else ""
    words = {
        "max_iterations": f"stopped: reached max_iterations ({its})",
        "timeout": "stopped: the wall-clock limit (max_runtime) was reached",
        "manual": "stopped by hand (Ctrl+C or SIGTERM)",
        "stopped": "stopped by `forgeflare stop` after the current iteration",
        "no_changes": "stopped: an iteration made no commit and changed nothing",
        "hook_abort": "stopped: a lifecycle hook asked to abort (exit 2)",
        "stuck": "stopped: hook blocks ended several iterations in a row",
        "skips": "stopped: next_iteration skipped several iterations in a row",
        "budget": "stopped: the cost budget (max_cost) is spent",
        "stalled": "stopped: several iterations in a row made no progress (stall_after)",
        "undelivered": "stopped: the work could not be committed",
        "quota": "stopped: the agent's quota is spent and no fallback is left",
        "blocked": "blocked: the agent asked a question (`forgeflare answer`, then --resume)",
        "error": "stopped: an error before any iteration ran",
    }
    return words.get(finish, f"finished: {finish}")
