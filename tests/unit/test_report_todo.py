"""The morning's to-do list is a pure function of the records: a table of nights."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.report import (
    NOTHING,
    RunFacts,
    build_digest,
    checkpoint_failures,
    fleet_needs_you,
    needs_you,
    render_html,
    render_text,
    render_todo_lines,
    task_costs,
)
from forgeflare.supervisor import IterationRecord, RunRecord
from forgeflare.supervisor.records import HookRecord

T0 = "2026-02-13T19:30:00Z"


def run(*rows: dict[str, Any], **fields: Any) -> RunRecord:
    base: dict[str, Any] = {
        "run_id": "20260213-193000-1a2b",
        "mode": "building",
        "project_dir": "/p",
        "started_at": T0,
        "finished_at": "2026-02-13T23:30:00Z",
        "finish_type": "complete",
        "exit_code": 0,
    }
    base.update(fields)
    record = RunRecord(**base)
    for i, row in enumerate(rows, 1):
        record.add_iteration(
            IterationRecord(number=i, started_at=T0, log=f"iteration-{i:03d}.log", **row),
            counted=True,
        )
    return record


CASES: list[tuple[str, RunRecord, list[tuple[str, str, str]]]] = [
    ("a clean night", run({"outcome": "ok"}), []),
    (
        "an open question",
        run({"outcome": "ok"}, finish_type="blocked", question="Postgres or SQLite?\nWhy: …"),
        [
            (
                "question",
                "the agent asks: Postgres or SQLite? …",
                'forgeflare answer --dir /p "…" && forgeflare loop --resume --dir /p',
            )
        ],
    ),
    (
        "a running loop waits on its question",
        run({"outcome": "ok"}, finished_at=None, finish_type=None, question="Which?"),
        [
            (
                "question",
                "the agent asks: Which?",
                'forgeflare answer --dir /p "…" && forgeflare loop --resume --dir /p',
            )
        ],
    ),
    ("a running loop otherwise", run({"outcome": "api_error"}, finished_at=None), []),
    (
        "the budget",
        run({"outcome": "ok", "cost_usd": 5.5}, finish_type="budget", max_cost=5),
        [
            (
                "budget",
                "stopped on the budget: $5.50 of $5 spent",
                "forgeflare loop --dir /p --max-cost 10",
            )
        ],
    ),
    (
        "a usage limit with its reset",
        run(
            {"outcome": "rate_limited", "resets_at": "2026-02-14T04:00:00Z"},
            finish_type="error",
        ),
        [
            (
                "usage_limit",
                "stopped on a usage limit (rate_limited); the window resets 2026-02-14T04:00:00Z",
                "forgeflare loop --dir /p",
            )
        ],
    ),
    (
        "an error streak",
        run(
            {"outcome": "agent_error"},
            finish_type="error",
            finish_reason="stopped: 3 error iterations in a row",
        ),
        [
            (
                "error",
                "error streak: stopped: 3 error iterations in a row",
                "less /runs/x/iteration-001.log",
            )
        ],
    ),
    (
        "stalled",
        run({"outcome": "ok"}, finish_type="stalled", finish_reason="no progress in 4"),
        [("stalled", "stalled: no progress in 4", "less /runs/x/iteration-001.log")],
    ),
    (
        "a failed hook",
        run(
            {"outcome": "ok"},
            hooks=[HookRecord(name="finished", status="timeout", exit_code=124)],
        ),
        [("hook", "1 hook run(s) failed: finished", "less /runs/x/hooks.log")],
    ),
]


@pytest.mark.parametrize(("night", "record", "expected"), CASES, ids=[c[0] for c in CASES])
def test_needs_you(night: str, record: RunRecord, expected: list[tuple[str, str, str]]) -> None:
    items = needs_you(record, run_dir="/runs/x")
    assert [(i.kind, i.what, i.command) for i in items] == expected


@pytest.mark.skipif(
    "claim" not in IterationRecord.model_fields, reason="the claim field comes with issue 29"
)
def test_a_claim_refused_on_the_last_iteration() -> None:
    claim = {"by": "tag", "accepted": False, "rejected_by": "gate", "why": "exit 1"}
    items = needs_you(run({"outcome": "ok", "claim": claim}, finish_type="max_iterations"))
    assert [(i.kind, i.what) for i in items] == [
        ("claim", "iteration 1 claimed done; gate said no: exit 1")
    ]
    accepted = {"by": "tag", "accepted": True}
    assert needs_you(run({"outcome": "ok", "claim": accepted})) == []
    # the command is where the refusal is told in full, never the report that printed it
    review = {"model": "m", "complete": False, "file": "review-001.md"}
    refused = {"by": "tag", "accepted": False, "rejected_by": "reviewer"}
    reviewed = run({"outcome": "ok", "claim": refused, "review": review}, finish_type="no_changes")
    (item,) = needs_you(reviewed, run_dir="/r")
    assert item.command == "less /r/review-001.md"
    (bare,) = needs_you(run({"outcome": "ok", "claim": claim}, finish_type="max_iterations"))
    assert "forgeflare report" not in bare.command


def test_paths_are_quoted_for_the_shell() -> None:
    (item,) = needs_you(run({"outcome": "ok"}, project_dir="/my p", question="Q?"))
    assert (
        item.command
        == "forgeflare answer --dir '/my p' \"…\" && forgeflare loop --resume --dir '/my p'"
    )


def test_nothing_to_do_says_so_in_text_and_html() -> None:
    digest = build_digest(run({"outcome": "ok"}))
    assert render_todo_lines(digest.todo) == [NOTHING]
    assert render_text(digest).startswith(f"What needs you\n  {NOTHING}\n")
    page = render_html(digest)
    assert page.index("What needs you") < page.index("Timeline")
    assert NOTHING in page


def test_the_report_opens_with_the_question() -> None:
    digest = build_digest(run({"outcome": "ok"}, finish_type="blocked", question="Which?"))
    text = render_text(digest)
    assert text.splitlines()[:2] == [
        "What needs you",
        '  the agent asks: Which?  →  forgeflare answer --dir /p "…" && forgeflare loop --resume '
        "--dir /p",
    ]


@dataclass
class Loop:
    name: str
    status: str
    branch: str
    worktree: str
    reason: str = ""


def test_fleet_lists_questions_and_branches_not_landed() -> None:
    loops = [
        Loop("api", "landed", "fleet/api", "/w/api"),
        Loop("db", "finished", "fleet/db", "/w/db"),
        Loop("ui", "conflict", "fleet/ui", "/w/ui", "merge conflict in app.css"),
        Loop("docs", "running", "fleet/docs", "/w/docs"),
    ]
    runs = {
        "api": (run({"outcome": "ok"}), "/w/api/r"),
        "db": (run({"outcome": "ok"}, finish_type="blocked", question="Which DB?"), "/w/db/r"),
        "ui": (run({"outcome": "ok"}), "/w/ui/r"),
        "docs": None,
    }
    items = fleet_needs_you(loops, runs)
    assert [(i.where, i.kind) for i in items] == [("db", "question"), ("ui", "landing")]
    assert items[1].what == "branch fleet/ui not landed (conflict): merge conflict in app.css"
    # Not `git switch` to the branch its worktree already has: the landing is retried.
    assert items[1].command == "forgeflare fleet land FLEET.toml ui"
    assert render_todo_lines(items)[0].startswith("[db] the agent asks: Which DB?")


def costed(*rows: tuple[float | None, int | None], start: int | None = 3) -> RunRecord:
    """A run whose rows each cost ``cost`` and leave ``open`` plan boxes unchecked."""
    return run(
        *(
            {"outcome": "ok", "cost_usd": cost, "plan_unchecked": open_, "tokens": {"input": 10}}
            for cost, open_ in rows
        ),
        plan_unchecked_at_start=start,
    )


@pytest.mark.parametrize(
    ("record", "finished", "idle"),
    [
        # two iterations on the first box, one on the second, one that finished nothing
        (
            costed((1.0, 3), (2.0, 2), (0.5, 1), (0.25, 1)),
            [(2, 1, 2, 3.0), (3, 1, 1, 0.5)],
            (0.25, 1),
        ),
        # one iteration checks two boxes: split evenly
        (costed((3.0, 1)), [(1, 2, 1, 1.5)], (0.0, 0)),
        # a box added mid-run is not a finished one; the spend waits for the next check
        (costed((1.0, 4), (1.0, 3), start=3), [(2, 1, 2, 2.0)], (0.0, 0)),
        # an unpriced iteration makes the per-task cost unknown, not zero
        (costed((None, 3), (1.0, 2)), [(2, 1, 2, None)], (0.0, 0)),
        (costed((1.0, 3), (1.0, 3)), [], (2.0, 2)),
    ],
)
def test_cost_per_finished_task(
    record: RunRecord,
    finished: list[tuple[int, int, int, float | None]],
    idle: tuple[float, int],
) -> None:
    costs = task_costs(record)
    assert costs is not None
    assert [(c.iteration, c.tasks, c.iterations, c.cost_usd) for c in costs.finished] == finished
    assert (costs.idle_cost_usd, costs.idle_iterations) == idle


def test_no_plan_no_task_costs_and_the_report_lines() -> None:
    assert task_costs(run({"outcome": "ok"})) is None
    text = render_text(build_digest(costed((1.0, 3), (2.0, 2), (0.5, 2))))
    section = text[text.index("Cost per task") :].split("\n\n")[0].splitlines()
    assert section == [
        "Cost per task",
        "  iteration 2: 1 task checked, $3.00 each (2 iterations)",
        "  spent on iterations that finished nothing: $0.50 (1 iteration)",
    ]


def test_a_question_parked_in_claude_code_is_answered_with_the_stop_hook() -> None:
    from forgeflare.report import session_question

    item = session_question("Postgres or SQLite?\nWhy: …", "/my project")
    assert render_todo_lines([item]) == [
        "the Claude Code loop asks: Postgres or SQLite? …  →  "
        "forgeflare stop-hook answer --dir '/my project' \"…\""
    ]


def commands(items: list[Any]) -> list[tuple[str, str, str]]:
    return [(i.kind, i.what, i.command) for i in items]


def test_a_dead_run_needs_you_and_a_live_one_does_not() -> None:
    killed = run({"outcome": "ok"}, {"outcome": "ok"}, finished_at=None, finish_type=None)
    assert commands(needs_you(killed, alive=False)) == [
        (
            "dead",
            "the loop died mid-run (its supervisor is gone; 2 iteration(s) recorded)",
            "forgeflare loop --resume --dir /p",
        )
    ]
    assert needs_you(killed, alive=True) == []
    assert needs_you(killed, alive=None) == []  # not known: not said
    digest = build_digest(killed, facts=RunFacts(alive=False))
    text = render_text(digest)
    assert NOTHING not in text
    assert "still running" not in text
    assert "dead — forgeflare loop --resume" in text


def test_undelivered_work_failed_commits_and_a_dirty_tree() -> None:
    undelivered = run(
        {"outcome": "ok"},
        {"outcome": "ok", "checkpoint": {"failed": "fatal: empty ident name"}},
        finish_type="undelivered",
        finish_reason="undelivered: the loop's checkpoint commit failed (fatal: empty ident "
        "name); see `git -C /p status`",
    )
    assert commands(needs_you(undelivered, dirty=("a.py",))) == [
        (
            "undelivered",
            "undelivered: the loop's checkpoint commit failed (fatal: empty ident name)",
            "git -C /p status",
        )
    ]
    dirty = needs_you(run({"outcome": "ok"}), dirty=("a.py", "b.py", "c.py", "d.py"))
    assert commands(dirty) == [
        (
            "dirty",
            "uncommitted changes in 4 file(s) after the run: a.py, b.py, c.py …",
            "git -C /p status",
        )
    ]


@pytest.mark.parametrize(
    ("checkpoint", "why"),
    [
        ({"sha": "abc1234"}, None),
        ({"skipped": "not a git repository"}, None),
        ({"skipped": "nothing to commit"}, None),
        ({"skipped": "checkpoint = warn"}, None),
        ({"skipped": "lock held by pid 12 (index.lock)"}, "lock held by pid 12 (index.lock)"),
        ({"skipped": "detached HEAD"}, "detached HEAD"),
        ({"failed": "fatal: cannot lock ref"}, "git commit failed: fatal: cannot lock ref"),
        (None, None),
    ],
)
def test_checkpoint_failures_table(checkpoint: dict[str, str] | None, why: str | None) -> None:
    row = IterationRecord(number=1, started_at=T0, checkpoint=checkpoint)
    assert checkpoint_failures(row) == why


def test_failed_checkpoints_need_you_with_the_last_reason() -> None:
    record = run(
        {"outcome": "ok", "checkpoint": {"failed": "fatal: index.lock exists"}},
        {"outcome": "ok", "checkpoint": {"sha": "abc1234"}},
        {"outcome": "ok", "checkpoint": {"skipped": "a merge is in progress"}},
        finish_type="max_iterations",
    )
    assert commands(needs_you(record)) == [
        (
            "commit",
            "2 iteration(s) could not commit their work (the last, iteration 3: a merge is "
            "in progress)",
            "git -C /p status",
        )
    ]


def test_a_refused_claim_points_at_its_log_not_at_the_report() -> None:
    claim = {"by": "tag", "accepted": False, "rejected_by": "reviewer", "why": "no README"}
    record = run({"outcome": "ok", "claim": claim}, finish_type="no_changes")
    for item in needs_you(record, run_dir="/runs/x") + needs_you(record):
        assert "forgeflare report" not in item.command
    (item,) = needs_you(record, run_dir="/runs/x")
    assert item.command == "less /runs/x/iteration-001.log"


def test_an_unlanded_loop_that_did_not_complete_runs_on_then_lands() -> None:
    loops = [Loop("ui", "not_landed", "fleet/ui", "/w/ui", "finished max_iterations")]
    loops[0].finish_type = "max_iterations"  # type: ignore[attr-defined]
    (item,) = fleet_needs_you(loops, {"ui": None}, "/f/FLEET.toml")
    assert item.command == "forgeflare loop --dir /w/ui && forgeflare fleet land /f/FLEET.toml ui"


def test_a_dead_fleet_is_resumed_as_a_whole() -> None:
    loops = [Loop("ui", "running", "fleet/ui", "/w/ui")]
    killed = run({"outcome": "ok"}, finished_at=None, finish_type=None)
    runs = {"ui": (killed, "/w/ui/r")}
    facts = {"ui": RunFacts(alive=False)}
    (item,) = fleet_needs_you(loops, runs, "/f/FLEET.toml", facts, fleet_alive=False)
    assert (item.kind, item.command) == ("dead", "forgeflare fleet run --resume /f/FLEET.toml")
    # a loop whose own run died in a live fleet is still said, with its loop's resume
    (alone,) = fleet_needs_you(loops, runs, "/f/FLEET.toml", facts, fleet_alive=True)
    assert (alone.where, alone.kind) == ("ui", "dead")


@given(
    finish=st.sampled_from(
        ["complete", "budget", "error", "stalled", "stuck", "blocked", "undelivered", None]
    ),
    alive=st.sampled_from([True, False, None]),
    accepted=st.booleans(),
    dirty=st.lists(st.sampled_from(["a.py", "b b.txt"]), max_size=2),
)
def test_the_list_never_sends_you_back_to_the_report(
    finish: str | None, alive: bool | None, accepted: bool, dirty: list[str]
) -> None:
    """Whatever the night, each item's command acts; none is ``forgeflare report`` itself."""
    claim = {"by": "tag", "accepted": accepted, "rejected_by": "reviewer", "why": "no"}
    record = run(
        {"outcome": "ok", "claim": claim},
        finish_type=finish,
        finished_at=None if finish is None else "2026-02-13T23:30:00Z",
    )
    for run_dir in ("", "/runs/x"):
        items = needs_you(record, run_dir=run_dir, alive=alive, dirty=tuple(dirty))
        assert all("forgeflare report" not in i.command for i in items)
        if finish is None and alive is False:
            assert [i.kind for i in items] == ["dead"]
