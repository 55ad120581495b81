"""Damaged run records: every reader says which run it skipped and why, and never tracebacks.

A ``run.json`` that is not UTF-8, not JSON, or of the wrong shape (``"waits": 1.5``, a row's
``"observations": 1.5``, a count past any real run) is one line naming the file and the first
mistake; the other runs stay readable. The fuzz test damages a real record at random (a fixed
seed: ``derandomize``) and runs ``runs``, ``runs --json``, ``report``, ``report --html`` on it
and ``loop --resume`` through the real CLI entry point in the test process (``cli_inprocess``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_inprocess import forgeflare_here
from conftest import SLOW_MACHINE_CHECKS
from forgeflare.supervisor import IterationRecord, RunRecord
from forgeflare.supervisor.backends import Tokens
from forgeflare.supervisor.records import WaitRecord
from supervisor_agents.project import base_env

RUN_ID = "20261124-010000-abcd"


def good_record(*, finished: bool = True) -> dict[str, Any]:
    """A record as the loop writes it: two iterations, a wait, totals."""
    record = RunRecord(
        run_id=RUN_ID,
        mode="building",
        project_dir="/p",
        started_at="2026-11-24T01:00:00Z",
        max_iterations=3,
    )
    for n in (1, 2):
        row = IterationRecord(
            number=n,
            started_at=f"2026-11-24T01:0{n}:00Z",
            duration=30.0,
            tokens=Tokens(input=10, output=5, cache_read=100),
            cost_usd=0.25,
            commits=1,
            observations=[{"signal": "converged", "reason": "tests pass"}],
        )
        record.add_iteration(row, counted=True)
    record.waits.append(
        WaitRecord(kind="limit_wait", started_at="2026-11-24T01:30:00Z", duration=60.0)
    )
    if finished:
        record.finished_at, record.finish_type, record.exit_code = (
            "2026-11-24T02:00:00Z",
            "max_iterations",
            10,
        )
    return record.model_dump(mode="json")


def write_run(project: Path, run_id: str, data: bytes) -> Path:
    run_dir = project / ".fresher" / "runs" / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "run.json").write_bytes(data)
    return run_dir


DAMAGES: list[tuple[str, bytes, str]] = [
    ("not UTF-8", b'{"run_id": "\xff\xfe"}', "not UTF-8"),
    ("not JSON", b'{"run_id": ', "Invalid JSON"),
    ("waits a number", json.dumps({**good_record(), "waits": 1.5}).encode(), "waits"),
    (
        "a huge count",
        json.dumps({**good_record(), "totals": {"tokens": 10**40}}).encode(),
        "totals.tokens",
    ),
    ("a list", b"[1, 2]", "run record"),
    (
        "a time out of range",
        json.dumps({**good_record(), "started_at": "9999-12-31T23:59:59Z"}).encode(),
        "started_at",
    ),
]


@pytest.mark.parametrize(("what", "data", "named"), DAMAGES, ids=[d[0] for d in DAMAGES])
def test_runs_and_report_name_the_damaged_run_and_show_the_rest(
    tmp_path: Path, what: str, data: bytes, named: str
) -> None:
    write_run(tmp_path, "20261124-000000-good", json.dumps(good_record()).encode())
    write_run(tmp_path, "20261124-020000-bad0", data)
    runs = forgeflare_here(tmp_path, "runs")
    assert runs.returncode == 0, runs.stderr
    assert RUN_ID in runs.stdout  # the good run is still listed
    lines = runs.stderr.splitlines()
    assert len(lines) == 1, runs.stderr
    assert lines[0].startswith("forgeflare: skipped a run: ")
    assert str(Path(".fresher/runs/20261124-020000-bad0/run.json")) in lines[0]
    assert named in lines[0], lines[0]
    as_json = forgeflare_here(tmp_path, "runs", "--json")
    assert [r["run_id"] for r in json.loads(as_json.stdout)] == [RUN_ID]
    report = forgeflare_here(tmp_path, "report")
    assert report.returncode == 0, report.stderr
    assert f"run {RUN_ID}" in report.stdout
    assert "skipped a run" in report.stderr
    assert named in report.stderr
    assert "Traceback" not in runs.stderr + as_json.stderr + report.stderr


def test_a_damaged_row_is_left_out_and_the_rest_of_the_run_shown(tmp_path: Path) -> None:
    record = good_record()
    record["iterations"][0]["observations"] = 1.5
    write_run(tmp_path, "20261124-020000-bad0", json.dumps(record).encode())
    runs = forgeflare_here(tmp_path, "runs", "--json")
    assert runs.returncode == 0, runs.stderr
    (run,) = json.loads(runs.stdout)
    assert (run["run_id"], run["tokens"], run["cost_usd"]) == (RUN_ID, 230, 0.5)  # its totals
    (line,) = runs.stderr.splitlines()
    assert line.startswith("forgeflare: warning: ")
    assert "20261124-020000-bad0/run.json: iterations.0.observations:" in line
    assert line.endswith("(row left out)")
    report = forgeflare_here(tmp_path, "report")
    assert report.returncode == 0, report.stderr
    assert "#2 30s ok" in report.stdout
    assert "#1 " not in report.stdout
    assert "iterations.0.observations" in report.stderr


def test_resume_names_the_damaged_record_it_could_not_read(tmp_path: Path) -> None:
    write_run(tmp_path, "20261124-020000-bad0", b'{"run_id": "\xff"}')
    done = forgeflare_here(tmp_path, "loop", "--resume", "--agent-cmd", "false")
    assert done.returncode == 1, done.stderr
    (line,) = done.stderr.splitlines()
    assert "--resume: no readable unfinished run in" in line
    assert "20261124-020000-bad0/run.json: not a readable run record: not UTF-8" in line


# -- fuzz ---------------------------------------------------------------------------------------

_EDGES = st.sampled_from(
    [
        1.5,
        -1,
        1e300,
        -1e300,
        10**20,
        10**400,
        float("inf"),
        float("nan"),
        "",
        "9999-12-31T23:59:59Z",
    ]
)
"""Values at the edges of what a reader computes with (durations, times, counts)."""

_JSON = st.recursive(
    _EDGES
    | st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)

_PATHS = [
    (),
    ("run_id",),
    ("started_at",),
    ("finished_at",),
    ("finish_type",),
    ("max_iterations",),
    ("iterations",),
    ("iterations", 0),
    ("iterations", 0, "number"),
    ("iterations", 0, "tokens"),
    ("iterations", 0, "tokens", "input"),
    ("iterations", 0, "duration"),
    ("iterations", 0, "observations"),
    ("iterations", 0, "started_at"),
    ("iterations", 1, "outcome"),
    ("iterations", 1, "cost_usd"),
    ("iterations", 1, "next_iteration_hook"),
    ("iterations", 1, "head_before"),
    ("totals",),
    ("totals", "tokens_by_kind"),
    ("totals", "cost_usd"),
    ("waits",),
    ("waits", 0, "duration"),
    ("waits", 0, "started_at"),
    ("totals", "tokens"),
    ("totals", "iterations"),
    ("iterations", 1, "duration"),
    ("iterations", 1, "tokens", "cache_read"),
    ("hooks",),
    ("current",),
    ("plan_file",),
    ("head_at_start",),
    ("schema_version",),
]


def _damage(record: dict[str, Any], path: tuple[str | int, ...], value: object) -> object:
    if not path:
        return value
    where: Any = record
    for key in path[:-1]:
        where = where[key]
    where[path[-1]] = value
    return record


@st.composite
def damaged_records(draw: st.DrawFn) -> bytes:
    record = good_record(finished=draw(st.booleans()))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_PATHS))
        # an earlier damage may have removed the place: that is damage enough
        with contextlib.suppress(KeyError, IndexError, TypeError):
            record = _damage(record, path, draw(_EDGES | _JSON))  # type: ignore[assignment]
    text = json.dumps(record).encode()
    cut = draw(st.sampled_from(["whole", "whole", "whole", "torn", "binary"]))
    if cut == "torn":
        return text[: draw(st.integers(0, len(text)))]
    if cut == "binary":
        at = draw(st.integers(0, len(text)))
        return text[:at] + draw(st.binary(min_size=1, max_size=4)) + text[at:]
    return text


def _damaged_records(max_examples: int) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """``@given`` a damaged record, ``max_examples`` of them, the same ones every run; the
    test's ``tmp_path`` is shared by its examples (``_only_run`` clears it for each)."""
    tuned = settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[*SLOW_MACHINE_CHECKS, HealthCheck.function_scoped_fixture],
    )
    return lambda test: tuned(given(data=damaged_records())(test))


def _only_run(tmp_path: Path, data: bytes) -> Path:
    """The project in ``tmp_path`` whose only run record is ``data``."""
    project = tmp_path / "p"
    for path in (project / ".fresher").glob("runs/*/run.json"):
        path.unlink()
    write_run(project, RUN_ID, data)
    return project


@_damaged_records(max_examples=40)
def test_no_reader_tracebacks_on_a_damaged_record(tmp_path: Path, data: bytes) -> None:
    project = _only_run(tmp_path, data)
    for args in (
        ["runs", "--dir", str(project)],
        ["runs", "--dir", str(project), "--json"],
        ["report", "--dir", str(project)],
        ["report", "--dir", str(project), "--html", str(tmp_path / "r.html")],
    ):
        done = forgeflare_here(tmp_path, *args)  # a traceback raises out of here: the test fails
        assert done.returncode in (0, 2), (args, done.returncode, done.stderr)
        assert "Traceback" not in done.stderr


@_damaged_records(max_examples=6)
def test_resume_never_tracebacks_on_a_damaged_record(tmp_path: Path, data: bytes) -> None:
    project = _only_run(tmp_path, data)
    # An agent that fails: a resumable record ends on the error streak, whatever its bounds.
    # In the test process: a traceback raises out of ``forgeflare_here`` (the test fails); what
    # only a process shows of ``loop --resume`` has its own process tests.
    done = forgeflare_here(
        project,
        "loop",
        "--resume",
        "--agent-cmd",
        "false",
        env=base_env(FRESHER_MAX_CONSECUTIVE_ERRORS="2"),
    )
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.returncode in (0, 1, 2, 10, 12, 13, 17, 18), done.stderr[-3000:]
