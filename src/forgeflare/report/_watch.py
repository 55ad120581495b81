"""``forgeflare watch``: a live view of a running loop, from another terminal.

Everything comes from the run's records: ``run.json`` (settings, finished iterations, totals),
``events.jsonl`` (iteration starts, waits, the finish) and the newest iteration log (the current
tool). The view is a pure function of a :class:`WatchState` folded from those; the shell polls
the files, redraws one status block on a terminal, and prints a plain line per change when its
output is a pipe or a file. It ends when the run does.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from forgeflare._clock import parse_time
from forgeflare._termtext import for_terminal
from forgeflare.disk import json_objects
from forgeflare.platform import process_started
from forgeflare.report._collect import settled_run
from forgeflare.report._digest import DEAD_REASON
from forgeflare.report._text import format_cost, format_duration
from forgeflare.supervisor import (
    LOCK_RELPATH,
    RecordError,
    RunRecord,
    Totals,
    iteration_rows,
    list_runs,
    lock_holder,
    read_run,
    runs_root,
)

__all__ = [
    "FOLLOW_WAIT",
    "NEWEST",
    "WatchState",
    "announced_run",
    "current_tool",
    "fold_events",
    "render_line",
    "render_status",
    "state_from_run",
    "watch",
    "watch_target",
]

_TOOL_LINE = re.compile(r"^(?:\S+ )?(?:\[tool\] (\w+): ?(.*)|▸ (\S+)\s+(.*))$")


@dataclass(frozen=True)
class WatchState:
    """What the view shows."""

    run_id: str = "?"
    mode: str = "?"
    started_at: datetime | None = None
    max_iterations: int = 0
    iteration: int = 0
    iteration_started_at: datetime | None = None
    totals: Totals = field(default_factory=Totals)
    """The run's sums as ``run.json`` has them (iterations, commits, tokens, cost)."""
    open_tasks: int | None = None
    waiting: tuple[str, str | None] | None = None
    """The wait under way: its kind (``limit_wait``, ``outage``) and, when known, its end."""
    tool: str | None = None
    finished: str | None = None
    outcomes: tuple[str, ...] = field(default_factory=tuple)


def state_from_run(run: RunRecord | None) -> WatchState:
    """The state ``run.json`` gives (finished iterations and settings)."""
    if run is None:
        return WatchState()
    rows = iteration_rows(run)
    unchecked = [r.plan_unchecked for r in run.iterations if r.plan_unchecked is not None]
    current = run.current
    return WatchState(
        run_id=run.run_id,
        mode=run.mode,
        started_at=parse_time(run.started_at),
        max_iterations=run.max_iterations,
        iteration=current.number if current else (rows[-1].number if rows else 0),
        iteration_started_at=parse_time(current.started_at) if current else None,
        totals=run.totals,
        open_tasks=unchecked[-1] if unchecked else None,
        finished=run.finish_type if run.finished_at else None,
        outcomes=tuple(r.outcome for r in rows),
    )


def fold_events(state: WatchState, events: Iterable[Mapping[str, Any]]) -> WatchState:
    """Apply ``events.jsonl`` rows newer than what ``run.json`` said."""
    for event in events:
        kind = event.get("event")
        if kind == "iteration_started":
            number = int(event.get("number") or 0)
            if number >= state.iteration:
                state = replace(
                    state,
                    iteration=number,
                    iteration_started_at=parse_time(event.get("ts")),
                    tool=None,
                    waiting=None,
                )
        elif kind in ("wait_started", "wait"):
            state = replace(
                state,
                waiting=(str(event.get("kind", "wait")), event.get("until")),
            )
        elif kind == "wait_ended":
            state = replace(state, waiting=None)
        elif kind == "run_finished":
            state = replace(state, finished=str(event.get("finish_type", "finished")))
    return state


def current_tool(log_tail: str) -> str | None:
    """The last tool call shown in an iteration log (``[tool] Bash: …`` or ``▸ Bash  …``)."""
    for line in reversed(log_tail.splitlines()):
        m = _TOOL_LINE.match(line.strip())
        if m:
            name = m.group(1) or m.group(3)
            arg = (m.group(2) or m.group(4) or "").strip()
            return f"{name} {arg}".strip()[:80]
    return None


def render_status(state: WatchState, now: datetime) -> str:
    """The status block (several short lines), for a terminal or a log."""
    limit = f"/{state.max_iterations}" if state.max_iterations else ""
    total = format_duration((now - state.started_at).total_seconds()) if state.started_at else "?"
    head = f"run {state.run_id} ({state.mode})  iteration {state.iteration}{limit}  total {total}"
    if state.finished:
        status = f"finished: {state.finished}"
    elif state.waiting is not None:
        status = _waiting(state.waiting)
    elif state.iteration_started_at is not None:
        elapsed = format_duration((now - state.iteration_started_at).total_seconds())
        status = f"iteration running {elapsed}" + (f" · {state.tool}" if state.tool else "")
    else:
        status = "starting"
    return "\n".join([head, status, _figures(state)])


def render_line(state: WatchState) -> str:
    """One plain line for a pipe or a log: no clock-driven parts, so it changes only on news."""
    limit = f"/{state.max_iterations}" if state.max_iterations else ""
    if state.finished:
        status = f"finished: {state.finished}"
    elif state.waiting is not None:
        status = _waiting(state.waiting)
    else:
        status = "running" + (f" · {state.tool}" if state.tool else "")
    return f"iteration {state.iteration}{limit} · {status} · {_figures(state)}"


def _waiting(waiting: tuple[str, str | None]) -> str:
    kind, until = waiting
    if kind == "paused":
        return "paused (forgeflare unpause goes on)"
    return f"waiting ({kind})" + (f" until {until}" if until else "")


def _figures(state: WatchState) -> str:
    """Tokens, cost, commits and open tasks: the part of the status that counts."""
    t = state.totals
    tasks = f" · open tasks {state.open_tasks}" if state.open_tasks is not None else ""
    return f"tokens {t.tokens} · {format_cost(t.cost_usd)} · commits {t.commits}{tasks}"


def _read_events(path: Path, offset: int) -> tuple[list[dict[str, Any]], int]:
    try:
        with path.open("rb") as fh:
            fh.seek(offset)
            data = fh.read()
    except OSError:
        return [], offset
    end = data.rfind(b"\n") + 1  # only whole lines
    return json_objects(data[:end]), offset + end


def _log_tail(run_dir: Path, size: int = 8192) -> str:
    logs = sorted(run_dir.glob("iteration-*.log"), key=lambda p: p.stat().st_mtime_ns)
    if not logs:
        return ""
    try:
        with logs[-1].open("rb") as fh:
            fh.seek(max(0, logs[-1].stat().st_size - size))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def snapshot(run_dir: Path, events: list[dict[str, Any]]) -> WatchState:
    """The state now: run.json, then the events, then the newest log's tool."""
    try:
        run: RunRecord | None
        run, alive = settled_run(run_dir, read_run(run_dir / "run.json"))
    except RecordError:
        run, alive = None, None  # not written yet, or damaged: the events still tell the story
    state = fold_events(state_from_run(run), events)
    if not state.finished and alive is False:
        # kill -9, a reboot: the run will never finish by itself, so the view ends here
        return replace(state, finished=DEAD_REASON)
    if not state.finished:
        state = replace(state, tool=current_tool(_log_tail(run_dir)))
    return state


FOLLOW_WAIT = "wait"
""":func:`watch_target`: look again (a loop may take the lock, or open its run, soon)."""
NEWEST = "newest"
""":func:`watch_target`: no loop is starting; show the project's newest run."""


def watch_target(
    holder: int | None,
    runs: Iterable[tuple[Path, RunRecord]],
    *,
    held_before: bool,
    waited: float,
    wait: float,
    holder_started: float | None = None,
) -> Path | str:
    """Which run ``watch`` shows, from what it sees now: the run of the loop that holds the
    lock (``holder``, its pid, started at ``holder_started``: an older run of a reused pid is
    not it); :data:`FOLLOW_WAIT` while that loop has not opened its run yet, or while no loop
    holds the lock and less than ``wait`` seconds have passed (a loop started beside
    ``watch`` takes it after its preflight); :data:`NEWEST` once the wait is over, or when a
    loop held the lock and let go (its run is the newest)."""
    if holder is not None:
        for entry, record in runs:
            if record.supervisor_pid == holder and _same_start(record, holder_started):
                return entry
        return FOLLOW_WAIT
    if held_before or waited >= wait:
        return NEWEST
    return FOLLOW_WAIT


def _same_start(record: RunRecord, started: float | None) -> bool:
    known = record.supervisor_started
    return known is None or started is None or abs(known - started) < 1.0


def announced_run(
    project: Path,
    env: Mapping[str, str],
    *,
    wait: float = 0.0,
    poll: float = 0.2,
    say: Callable[[str], None] = lambda line: None,
    clock: Callable[[], float] = time.monotonic,
) -> Path | None:
    """The run of the loop that holds ``project``'s lock (``.fresher/loop.lock``), once that
    loop has opened it: a watch started beside ``forgeflare loop`` follows the new run instead
    of showing the last finished one. With no loop holding the lock, it waits up to ``wait``
    seconds for one to take it (saying so once). ``None``: no loop is starting, show the
    newest run."""
    root = runs_root(project, env)
    start = clock()
    held_before = False
    said: set[str] = set()
    while True:
        holder = lock_holder(project)
        held_before = held_before or holder is not None
        runs = list_runs(root).runs if holder is not None else []
        target = watch_target(
            holder,
            runs,
            held_before=held_before,
            waited=clock() - start,
            wait=wait,
            holder_started=process_started(holder) if holder is not None else None,
        )
        if target == NEWEST:
            if "lock" in said and not held_before:
                say(f"no loop took {project / LOCK_RELPATH} in {format_duration(wait)}")
            return None
        if isinstance(target, Path):
            return target
        kind = "run" if holder is not None else "lock"
        if kind not in said:
            said.add(kind)
            say(_waiting_for(project, holder, wait))
        time.sleep(poll)  # bounded polling: the lock or the run shows up on disk


def _waiting_for(project: Path, holder: int | None, wait: float) -> str:
    if holder is not None:
        return f"waiting for the loop in {project} (pid {holder}) to open its run"
    return (
        f"waiting up to {format_duration(wait)} for a loop to take {project / LOCK_RELPATH} "
        "(--wait 0 shows the newest run at once)"
    )


def watch(
    run_dir: Path,
    *,
    out: TextIO | None = None,
    live: bool | None = None,
    interval: float = 0.5,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> WatchState:
    """Show ``run_dir`` until its run finishes; returns the last state."""
    out = out or sys.stdout
    live = out.isatty() if live is None else live
    events: list[dict[str, Any]] = []
    offset = 0
    last_plain = ""
    if live:
        from rich.console import Console
        from rich.live import Live
        from rich.text import Text

        console = Console(file=out)
        with Live(console=console, refresh_per_second=4, transient=False) as view:
            while True:
                new, offset = _read_events(run_dir / "events.jsonl", offset)
                events += new
                state = snapshot(run_dir, events)
                view.update(Text(for_terminal(render_status(state, clock()))))
                if state.finished:
                    return state
                time.sleep(interval)
    while True:
        new, offset = _read_events(run_dir / "events.jsonl", offset)
        events += new
        state = snapshot(run_dir, events)
        line = for_terminal(render_line(state))
        if line != last_plain:
            stamp = clock().strftime("%Y-%m-%dT%H:%M:%SZ")
            print(f"{stamp} {line}", file=out, flush=True)
            last_plain = line
        if state.finished:
            return state
        time.sleep(interval)
