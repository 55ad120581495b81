"""The watch view's pure parts: state from records and events, the current tool, the text."""

from __future__ import annotations

from datetime import UTC, datetime

from forgeflare.report._watch import (
    WatchState,
    current_tool,
    fold_events,
    render_line,
    render_status,
    state_from_run,
)
from forgeflare.supervisor._records import RunRecord

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
