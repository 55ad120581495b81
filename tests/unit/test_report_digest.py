"""The report's digest: finish reasons in words, summaries, tasks done, spend by agent, and any
record rendering."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from forgeflare.report import build_digest, render_text, summarize
from forgeflare.supervisor import finish_reason
from report_support import row, run


def test_finish_reasons_in_words() -> None:
    error_rows = [
        row(1),
        row(2, "api_error", stop_reason="api_error", detail="529 overloaded"),
        row(3, "agent_error"),
        row(4, "api_error", stop_reason="api_error", detail="529 overloaded"),
    ]
    assert (
        finish_reason(run("error", error_rows))
        == "stopped: 3 error iterations in a row, the last one `api_error` 529 overloaded"
    )
    signal = row(2, stop_reason="convergence_signal", observations=[{"signal": True, "name": "g"}])
    assert finish_reason(run("complete", [row(1), signal])) == (
        "complete: convergence signal `g` in iteration 2"
    )
    assert finish_reason(run("complete", [row(1)])) == "complete: no open task left in the plan"
    tagged = row(1, signal="<loop-done>COMPLETE</loop-done>", plan_unchecked=2)
    assert finish_reason(run("complete", [tagged])) == (
        "complete: the agent said <loop-done>COMPLETE</loop-done> in iteration 1"
    )
    tagged_and_done = row(1, signal="<loop-done>COMPLETE</loop-done>", plan_unchecked=0)
    said = finish_reason(run("complete", [tagged_and_done]))
    assert said.endswith("no open task left in the plan")
    assert finish_reason(run("budget", [row(1)])).startswith("stopped: the cost budget")
    # `forgeflare stop` finishes `stopped`, not `manual`: the manual words do not name it
    assert finish_reason(run("manual", [])) == "stopped by hand (Ctrl+C or SIGTERM)"
    assert finish_reason(run(None, [row(1)])) == "still running"
    assert finish_reason(run("error", [], finish_reason="own words")) == "own words"


def test_summary_new_and_old_rows() -> None:
    s = summarize(run("max_iterations", [row(1), row(2)]))
    assert (s.iterations, s.commits, s.tokens, s.cost_usd) == (2, 2, 2220, 1.0)
    assert s.duration == 3600
    old = {"number": 1, "exit_code": 0, "final_reason": "end_turn", "tokens": 500, "commits": 0}
    s = summarize(run("max_iterations", [old]))
    assert (s.tokens, s.cost_usd) == (500, None)
    assert build_digest(run("max_iterations", [old])).rows[0].outcome == "ok"
    crashed = {"number": 1, "exit_code": 1, "final_reason": None}
    assert build_digest(run("error", [crashed])).rows[0].outcome == "agent_error"


def test_tasks_done_from_plan_counts() -> None:
    rows = [row(1, plan_unchecked=4), row(2, plan_unchecked=1)]
    assert summarize(run("complete", rows, plan_unchecked_at_start=5)).tasks_done == 4
    assert summarize(run("complete", rows)).tasks_done == 3


@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "number": st.integers(0, 999),
                "outcome": st.sampled_from(["ok", "api_error", "agent_error", "rate_limited"]),
                "duration": st.floats(0, 1e5),
                "tokens": st.one_of(st.integers(0, 10**9), st.none()),
            }
        ),
        max_size=8,
    ),
    st.sampled_from([None, "complete", "error", "budget", "manual", "max_iterations"]),
)
def test_any_record_renders(rows: list[dict[str, Any]], finish: str | None) -> None:
    digest = build_digest(run(finish, rows))
    assert render_text(digest)
    assert finish_reason(run(finish, rows))


def test_spend_by_agent_sums_each_backend_and_profile() -> None:
    from forgeflare.report import spend_by_agent
    from forgeflare.supervisor.records import IterationRecord, RunRecord

    run = RunRecord(run_id="r", mode="building", project_dir="p", started_at="2026-11-25T00:00:00Z")
    rows = [
        ("forgeflare", "", 0.5),
        ("forgeflare", "cheap", 0.25),
        ("forgeflare", "cheap", None),
        ("codex", "", 0.125),
    ]
    for n, (backend, profile, cost) in enumerate(rows, 1):
        run.iterations.append(
            IterationRecord(number=n, backend=backend, profile=profile, cost_usd=cost)
        )
    run.iterations.append(IterationRecord(number=5, skipped=True))
    assert spend_by_agent(run) == {
        "forgeflare": {"iterations": 1, "tokens": 0, "cost_usd": 0.5},
        "forgeflare:cheap": {"iterations": 2, "tokens": 0, "cost_usd": None},
        "codex": {"iterations": 1, "tokens": 0, "cost_usd": 0.125},
    }
