"""The watch view's pure parts: state from records and events, the current tool, the text."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.report import _collect
from forgeflare.report._digest import DEAD_REASON
from forgeflare.report._watch import (
    FOLLOW_WAIT,
    NEWEST,
    WatchState,
    current_tool,
    fold_events,
    render_line,
    render_status,
    snapshot,
    state_from_run,
    watch_target,
)
from forgeflare.supervisor.records import RunRecord

NOW = datetime(2026, 11, 24, 2, 0, 0, tzinfo=UTC)
RUN = {
    "run_id": "r1",
    "mode": "building",
    "project_dir": "/p",
    "started_at": "2026-11-24T01:00:00Z",
    "max_iterations": 10,
    "iterations": [
        {
            "number": 1,
            "outcome": "ok",
            "tokens": {"input": 5, "output": 5},
            "cost_usd": 0.25,
            "commits": 2,
            "plan_unchecked": 3,
        },
    ],
    "current": {"number": 2, "started_at": "2026-11-24T01:58:30Z"},
}


def test_state_from_run_and_status() -> None:
    state = state_from_run(RunRecord.model_validate(RUN))
    assert (state.iteration, state.totals.iterations, state.totals.tokens) == (2, 1, 10)
    assert (state.totals.cost_usd, state.totals.commits, state.open_tasks) == (0.25, 2, 3)
    text = render_status(state, NOW)
    assert text.splitlines()[0] == "run r1 (building)  iteration 2/10  total 1h 00m"
    assert text.splitlines()[1] == "iteration running 1m 30s"
    assert "tokens 10 · $0.25 · commits 2 · open tasks 3" in text


def test_events_move_the_state() -> None:
    state = fold_events(
        WatchState(iteration=1),
        [
            {"event": "iteration_started", "number": 2, "ts": "2026-11-24T01:59:00Z"},
            {"event": "wait_started", "kind": "limit_wait", "until": "03:12"},
        ],
    )
    assert state.iteration == 2
    assert render_line(state).startswith("iteration 2 · waiting (limit_wait) until 03:12")
    state = fold_events(
        state, [{"event": "wait_ended"}, {"event": "run_finished", "finish_type": "complete"}]
    )
    assert "finished: complete" in render_line(state)


def test_current_tool() -> None:
    log = "text\n[tool] Read: a.py\n[usage] in=1\n"
    assert current_tool(log) == "Read a.py"
    assert current_tool(log + "▸ Bash  pytest -q\n") == "Bash pytest -q"
    assert current_tool("nothing here\n") is None


# --- which run watch follows: the lock's, a wait for one, or the newest -------------------


def _run(pid: int | None, started: float | None = 1000.0) -> tuple[Path, RunRecord]:
    record = RunRecord.model_validate({**RUN, "supervisor_pid": pid, "supervisor_started": started})
    return Path(f"/runs/{pid}-{started}"), record


RUNS = [_run(7, started=10.0), _run(42), _run(9, started=None)]


@pytest.mark.parametrize(
    ("holder", "held_before", "waited", "wait", "expected"),
    [
        (42, True, 0.0, 30.0, Path("/runs/42-1000.0")),  # the lock's loop opened its run
        (42, True, 99.0, 30.0, Path("/runs/42-1000.0")),  # however long the wait was
        (9, True, 0.0, 30.0, Path("/runs/9-None")),  # a run with no start time: the pid
        (5, True, 0.0, 30.0, FOLLOW_WAIT),  # the lock's loop has not opened its run yet
        (5, True, 99.0, 30.0, FOLLOW_WAIT),  # the bound is for a lock, not for the run
        (7, True, 0.0, 30.0, FOLLOW_WAIT),  # that pid's run started long before: a reused pid
        (-1, True, 0.0, 30.0, FOLLOW_WAIT),  # lock taken, pid not written yet
        (None, False, 0.0, 30.0, FOLLOW_WAIT),  # no loop yet: one may be starting
        (None, False, 29.9, 30.0, FOLLOW_WAIT),
        (None, False, 30.0, 30.0, NEWEST),  # none took the lock in time
        (None, False, 0.0, 0.0, NEWEST),  # --wait 0: the newest at once
        (None, True, 0.0, 30.0, NEWEST),  # a loop held it and let go: its run is the newest
    ],
)
def test_watch_target(
    holder: int | None, held_before: bool, waited: float, wait: float, expected: object
) -> None:
    got = watch_target(
        holder, RUNS, held_before=held_before, waited=waited, wait=wait, holder_started=1000.4
    )
    assert got == expected


@given(
    holder=st.none() | st.integers(-1, 50),
    held_before=st.booleans(),
    waited=st.floats(0, 100),
    wait=st.floats(0, 100),
)
def test_watch_shows_the_newest_only_when_no_loop_is_starting(
    holder: int | None, held_before: bool, waited: float, wait: float
) -> None:
    got = watch_target(
        holder, RUNS, held_before=held_before, waited=waited, wait=wait, holder_started=1000.4
    )
    if got == NEWEST:
        assert holder is None
        assert held_before or waited >= wait
    elif isinstance(got, Path):
        (record,) = [r for p, r in RUNS if p == got]
        assert record.supervisor_pid == holder
        assert record.supervisor_started in (None, 1000.0)
    else:
        assert got == FOLLOW_WAIT


@pytest.mark.parametrize("finishes", [True, False], ids=["finished-meanwhile", "killed"])
def test_a_loop_gone_is_dead_only_if_its_record_never_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, finishes: bool
) -> None:
    # The supervisor writes its finished record and exits; watch may read the record just
    # before and look for the process just after. That is a finished run, not a dead one.
    record = tmp_path / "run.json"
    running = {**RUN, "supervisor_pid": 4_000_000, "supervisor_started": 1.0}
    record.write_text(json.dumps(running))
    finished = {**running, "finished_at": "2026-11-24T02:00:00Z", "finish_type": "max_iterations"}

    def gone(run: RunRecord) -> bool:
        if finishes:
            record.write_text(json.dumps(finished))
        return False

    monkeypatch.setattr(_collect, "supervisor_alive", gone)
    state = snapshot(tmp_path, [])
    assert state.finished == ("max_iterations" if finishes else DEAD_REASON)


def test_runs_and_report_read_a_gone_supervisors_record_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "run.json"
    running = {**RUN, "supervisor_pid": 4_000_000, "supervisor_started": 1.0}
    finished = {**running, "finished_at": "2026-11-24T02:00:00Z", "finish_type": "complete"}
    record.write_text(json.dumps(running))
    first = RunRecord.model_validate(running)

    def finishing(run: RunRecord) -> bool:
        record.write_text(json.dumps(finished))
        return False

    monkeypatch.setattr(_collect, "supervisor_alive", finishing)
    run, alive = _collect.settled_run(tmp_path, first)
    assert (run.finish_type, alive) == ("complete", None)
    record.write_text("{damaged")  # a re-read that fails keeps what was read: still dead
    monkeypatch.setattr(_collect, "supervisor_alive", lambda run: False)
    assert _collect.settled_run(tmp_path, first) == (first, False)
