"""Run records: atomic run.json, events.jsonl, the run --resume picks, orphan detection."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import forgeflare.supervisor as supervisor
from forgeflare._errors import ConfigError
from forgeflare.platform import process_started
from forgeflare.supervisor.backends import IterationReport, Tokens
from forgeflare.supervisor.records import (
    InProgress,
    IterationRecord,
    RecordError,
    RunRecord,
    RunStore,
    find_resumable,
    orphan_group,
)
from forgeflare.supervisor.run._resume import open_resumable


def make(root: Path, run_id: str, *, finished: bool) -> RunStore:
    store = RunStore(root / run_id)
    store.create()
    record = RunRecord(run_id=run_id, mode="building", project_dir="/p", started_at="t")
    if finished:
        record.finished_at = "t2"
    store.save(record)
    return store


def test_save_load_and_events(tmp_path: Path) -> None:
    store = make(tmp_path, "20260101-000000-aaaa", finished=False)
    assert store.load().run_id == "20260101-000000-aaaa"
    store.event("hook", hook="started", exit_code=0)
    store.event("iteration", number=1)
    lines = (store.dir / "events.jsonl").read_text().splitlines()
    assert [json.loads(line)["event"] for line in lines] == ["hook", "iteration"]
    assert not list(store.dir.glob("*.tmp"))
    assert store.iteration_log(7).name == "iteration-007.log"


def test_find_resumable_takes_newest_unfinished(tmp_path: Path) -> None:
    assert find_resumable(tmp_path / "none") is None
    make(tmp_path, "20260101-000000-aaaa", finished=False)
    newest = make(tmp_path, "20260102-000000-bbbb", finished=False)
    make(tmp_path, "20260103-000000-cccc", finished=True)
    (tmp_path / "20260104-000000-dddd").mkdir()  # no run.json
    broken = tmp_path / "20260105-000000-eeee"
    broken.mkdir()
    (broken / "run.json").write_text("{not json")
    found = find_resumable(tmp_path)
    assert found is not None
    assert found.dir == newest.dir


def test_unreadable_record(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match=r"no run\.json"):
        RunStore(tmp_path).load()


def test_orphan_group_only_trusts_our_own_agent(tmp_path: Path) -> None:
    record = RunRecord(run_id="r1", mode="building", project_dir="/p", started_at="t")
    assert orphan_group(record) is None
    # This very process is alive but has no FRESHER_RUN_ID=r1: never signalled.
    record.current = InProgress(number=1, agent_pid=os.getpid())
    assert orphan_group(record) is None
    record.current = InProgress(number=1, agent_pid=2**22 + 12345)  # no such process
    assert orphan_group(record) is None


def test_public_exports_exist() -> None:
    for name in supervisor.__all__:
        assert hasattr(supervisor, name), name


def test_resume_refuses_a_live_supervisor(tmp_path: Path) -> None:
    store = make(tmp_path, "20260101-000000-aaaa", finished=False)
    record = store.load()
    record.supervisor_pid = os.getpid()
    record.supervisor_started = process_started(os.getpid())
    store.save(record)
    with pytest.raises(ConfigError, match="is still running"):
        open_resumable(tmp_path, tmp_path, grace=0.1)


def test_resume_records_the_cut_iteration_as_killed(tmp_path: Path) -> None:
    store = make(tmp_path, "20260101-000000-aaaa", finished=False)
    record = store.load()
    record.supervisor_pid = 2**22 + 12345  # no such process: the supervisor is dead
    record.current = InProgress(number=3, started_at="2026-01-01T00:00:00Z")
    store.save(record)
    store.event("iteration_started", number=3, head=None, log="iteration-003.log")
    resumed = open_resumable(tmp_path, tmp_path, grace=0.1)
    assert resumed.record.current is None
    assert resumed.killed is not None
    assert (resumed.killed.number, resumed.killed.outcome) == (3, "killed")
    assert resumed.killed.log == "iteration-003.log"
    assert resumed.killed.commits == 0


def test_resume_reads_past_an_events_line_that_is_not_utf8(tmp_path: Path) -> None:
    # A crash or a full disk can leave bytes that are not UTF-8 in events.jsonl: the other
    # lines stay readable and --resume still finds the cut iteration.
    store = make(tmp_path, "20260101-000000-aaaa", finished=False)
    record = store.load()
    record.supervisor_pid = 2**22 + 12345  # no such process: the supervisor is dead
    store.save(record)
    store.event("iteration_started", number=3, head=None, log="iteration-003.log")
    with (store.dir / "events.jsonl").open("ab") as fh:
        fh.write(b'{"event": "hook", "note": "caf\xe9 \\ud800"}\n')
    resumed = open_resumable(tmp_path, tmp_path, grace=0.1)
    assert resumed.killed is not None
    assert resumed.killed.number == 3


def test_resume_without_an_unfinished_run(tmp_path: Path) -> None:
    make(tmp_path, "20260101-000000-aaaa", finished=True)
    with pytest.raises(RecordError, match="no unfinished run"):
        open_resumable(tmp_path, tmp_path, grace=0.1)


def test_rows_derive_from_the_report_and_add_to_the_totals() -> None:
    record = RunRecord(run_id="r1", mode="building", project_dir="/p", started_at="t")
    priced = IterationReport(
        outcome="api_error",
        transient=True,
        tokens=Tokens(input=10, output=5, cache_read=100),
        cost_usd=0.25,
        model="m",
    )
    row = IterationRecord.from_report(priced, number=1, started_at="t", commits=2)
    assert (row.outcome, row.transient, row.tokens.total, row.model) == (
        "api_error",
        True,
        115,
        "m",
    )
    assert (
        IterationRecord.from_report(
            IterationReport(transient=True), number=2, started_at="t"
        ).transient
        is None
    )
    record.add_iteration(row, counted=True)
    waited = IterationRecord.from_report(
        IterationReport(outcome="rate_limited", tokens=Tokens(output=7)), number=2, started_at="t"
    )
    waited.decision = "limit_wait"
    record.add_iteration(waited, counted=False)
    skipped = IterationRecord(number=3, started_at="t", skipped=True)
    record.add_iteration(skipped, counted=True)
    totals = record.totals
    assert (totals.iterations, totals.commits, totals.tokens) == (1, 2, 122)
    assert totals.tokens_by_kind == Tokens(input=10, output=12, cache_read=100)
    assert (totals.cost_usd, totals.cost_unknown) == (0.25, 1)
    assert record.counted_iterations == 2
    assert record.iterations_done == 3
    # On disk the row is flat, with the report's field names.
    on_disk = json.loads(row.model_dump_json())
    assert on_disk["tokens"] == {"input": 10, "output": 5, "cache_read": 100, "cache_write": 0}
    assert on_disk["cost_usd"] == 0.25


def test_a_failed_save_rewrites_run_json_in_place_and_still_raises(tmp_path: Path) -> None:
    # A full disk or a read-only folder: the temporary file cannot be made, but a finished
    # run must not be left resumable, so the record goes over the old one where it fits.
    store = make(tmp_path, "20260101-000000-aaaa", finished=False)
    (store.dir / "run.json.tmp").mkdir()
    record = store.load()
    record.finished_at = "t2"
    with pytest.raises(RecordError, match="cannot write"):
        store.save(record)
    assert store.load().finished_at == "t2"
    assert find_resumable(tmp_path) is None


def test_an_iteration_log_is_never_overwritten(tmp_path: Path) -> None:
    store = make(tmp_path, "20260101-000000-aaaa", finished=False)
    names = []
    for _ in range(3):
        path = store.iteration_log(7)
        path.write_text("kept\n")
        names.append(path.name)
    assert names == ["iteration-007.log", "iteration-007.r1.log", "iteration-007.r2.log"]


def test_saved_run_json_equals_the_record_as_rows_are_added_and_reloaded(tmp_path: Path) -> None:
    # Rows are serialised once per run (a save must not cost more at iteration 1,000): what is
    # on disk is still exactly the record, also after a resume loads new row objects.
    store = make(tmp_path, "20260101-000000-aaaa", finished=False)
    record = store.load()
    for number in range(1, 4):
        record.add_iteration(IterationRecord(number=number, started_at="t"), counted=True)
        store.save(record)
        assert json.loads(store.run_json.read_text()) == json.loads(record.model_dump_json())
    record = store.load()
    record.add_iteration(IterationRecord(number=4, started_at="t", commits=2), counted=True)
    store.save(record)
    assert json.loads(store.run_json.read_text()) == json.loads(record.model_dump_json())
    other = RunRecord(run_id="other", mode="planning", project_dir="/q", started_at="u")
    store.save(other)
    assert store.load() == other


@pytest.mark.parametrize(
    ("events", "current", "killed"),
    [
        ([], None, None),  # killed between iterations: nothing was cut short
        ([("iteration_started", 3)], None, 3),  # killed before run.json knew of the agent
        ([("iteration_started", 3)], 3, 3),
        ([("iteration_started", 2), ("iteration", 2)], None, None),  # row 2 is recorded
        ([("iteration_started", 2), ("iteration", 2), ("iteration_started", 3)], None, 3),
    ],
)
def test_the_cut_iteration_comes_from_events_before_run_json(
    tmp_path: Path, events: list[tuple[str, int]], current: int | None, killed: int | None
) -> None:
    store = make(tmp_path, "20260101-000000-aaaa", finished=False)
    record = store.load()
    record.supervisor_pid = 2**22 + 12345  # no such process: the supervisor is dead
    for name, number in events:
        store.event(name, number=number, head=None, log=f"iteration-{number:03d}.log")
        if name == "iteration":
            record.add_iteration(IterationRecord(number=number, started_at="t"), counted=True)
    if current is not None:
        record.current = InProgress(number=current, started_at="2026-01-01T00:00:00Z")
    store.save(record)
    resumed = open_resumable(tmp_path, tmp_path, grace=0.1)
    assert (resumed.killed.number if resumed.killed else None) == killed
    if resumed.killed is not None:
        assert resumed.killed.log == f"iteration-{killed:03d}.log"


@pytest.mark.parametrize(
    "decisions",
    [
        [],
        ["continue"] * 5,
        ["limit_wait", "continue", "outage", "outage", "complete"],
        ["outage"] * 3,
    ],
)
def test_counted_iterations_leave_out_waits_as_rows_are_added(decisions: list[str]) -> None:
    record = RunRecord(run_id="r", mode="building", project_dir="/p", started_at="t")
    for number, decision in enumerate(decisions, 1):
        row = IterationRecord(number=number, started_at="t", decision=decision)
        record.add_iteration(row, counted=True)
        expected = sum(d not in ("limit_wait", "outage") for d in decisions[:number])
        assert record.counted_iterations == expected
    reloaded = RunRecord.model_validate_json(record.model_dump_json())
    assert reloaded.counted_iterations == record.counted_iterations
