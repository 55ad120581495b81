"""A run record read back as plain data (``run.json`` of any version), and why it ended.

The loop words its own finish with :func:`finish_reason`; the report reads the same words
from older records too (a single token count, no ``outcome``), so this reads a dict, not the
typed :class:`RunRecord`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from forgeflare._clock import parse_time

__all__ = ["IterationRow", "finish_reason", "iteration_rows"]

GOOD_OUTCOMES = frozenset({"ok"})


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
    signal: str | None = None
    """A completion tag the agent's final message carried (``<loop-done>COMPLETE</loop-done>``)."""
    plan_unchecked: int | None = None

    @property
    def total_tokens(self) -> int:
        return sum(self.tokens.values())


def _signals(row: Mapping[str, Any]) -> tuple[str, ...]:
    names = []
    for obs in row.get("observations") or []:
        if isinstance(obs, Mapping) and obs.get("signal"):
            names.append(str(obs.get("name") or obs.get("signal")))
    return tuple(names)


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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
                signal=_str_or_none(raw.get("signal")),
                plan_unchecked=_int_or_none(raw.get("plan_unchecked")),
            )
        )
    return rows


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
    raw_rows = [r for r in run.get("iterations") or [] if isinstance(r, Mapping)]
    counted = sum(1 for r in raw_rows if r.get("decision") not in ("limit_wait", "outage"))
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
    }
    return words.get(str(finish), f"finished: {finish}")
