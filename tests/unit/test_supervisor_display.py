"""The loop's end-of-run summary (:func:`summary_lines`)."""

from __future__ import annotations

from pathlib import Path

from forgeflare.supervisor import IterationRecord, RunRecord, Totals
from forgeflare.supervisor.records import SUMMARY_ROWS, summary_lines


def _record(n: int, **totals: object) -> RunRecord:
    rows = [
        IterationRecord(number=i, started_at="2026-11-24T01:00:00Z", skipped=i % 2 == 0)
        for i in range(1, n + 1)
    ]
    return RunRecord(
        run_id="r1",
        mode="building",
        project_dir="/p",
        started_at="2026-11-24T01:00:00Z",
        finish_type="max_iterations",
        exit_code=10,
        finish_reason="stopped: reached max_iterations",
        iterations=rows,
        totals=Totals(iterations=1, commits=1, **totals),  # type: ignore[arg-type]
    )


def test_the_summary_of_a_long_night_is_a_screenful_and_points_to_report() -> None:
    lines = summary_lines(_record(300), Path("/elsewhere"))
    assert len(lines) == 2 + 1 + SUMMARY_ROWS + 1
    assert lines[0].startswith("finished: max_iterations (exit 10); 300 iterations (150 skipped)")
    assert "1 commit," in lines[0]
    assert "  … 290 earlier iterations" in lines
    assert lines[-1] == "  every iteration: forgeflare report r1 --dir /p"
    assert summary_lines(_record(1), Path("/p"))[-1] == "  every iteration: forgeflare report r1"


def test_the_summary_says_no_none_and_counts_in_words() -> None:
    one = summary_lines(_record(1), Path("/p"))
    text = "\n".join(one)
    assert "None" not in text
    assert "1 iteration," in text
    assert "#1 ok" in text
    unfinished = _record(2).model_copy(update={"exit_code": None})
    assert "(exit" not in summary_lines(unfinished, Path("/p"))[0]
