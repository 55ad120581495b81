"""The loop's end-of-run summary (:func:`summary_lines`)."""

from __future__ import annotations

import subprocess
import sys
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


def test_a_loop_in_a_pipe_shows_its_night_without_loading_rich() -> None:
    """rich is 5% of a loop's start: only a live display (a terminal) loads it."""
    script = (
        "import io, sys\n"
        "from forgeflare.supervisor import IterationRecord, RunRecord, Totals\n"
        "from forgeflare.supervisor.records import LoopDisplay\n"
        "err = io.StringIO()\n"
        "d = LoopDisplay(out=io.StringIO(), err=err, live=False)\n"
        "d.info('started'); d.start_iteration(1, 2); d.output(b'[tool] Bash: ls\\n')\n"
        "d.hold('paused'); d.refresh(); d.end_iteration()\n"
        "row = IterationRecord(number=1, started_at='2026-11-24T01:00:00Z')\n"
        "d.summary(RunRecord(run_id='r1', mode='building', project_dir='/p',\n"
        "    started_at='2026-11-24T01:00:00Z', finish_type='complete', exit_code=0,\n"
        "    iterations=[row], totals=Totals(iterations=1)))\n"
        "shown = err.getvalue()\n"
        "print('rich' in sys.modules, 'started' in shown and 'forgeflare report' in shown)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["False", "True"]
