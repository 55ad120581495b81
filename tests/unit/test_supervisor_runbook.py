"""The run book, built alone over a real run folder: active time, run.json, rows, a held
records failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forgeflare.supervisor import IterationRecord, RecordError
from forgeflare.supervisor.run import RunBook
from loop_support import loop_setup, opened_book


def test_a_book_is_not_opened_until_it_begins(tmp_path: Path) -> None:
    book = RunBook(loop_setup(tmp_path / "p"))
    assert not book.opened
    assert book.finish_reason is None
    assert not book.finishing


def test_active_time_counts_on_from_a_resumed_run(tmp_path: Path) -> None:
    setup = loop_setup(tmp_path / "p")
    book = opened_book(setup)
    resumed = RunBook(setup, t0=book.t0)
    book.record.totals.active_seconds = 100.0
    resumed.begin(book.store, book.record)
    assert (book.base_active, resumed.base_active) == (0.0, 100.0)
    assert resumed.elapsed() >= 100.0


def test_save_writes_run_json_with_the_active_time(tmp_path: Path) -> None:
    book = opened_book(loop_setup(tmp_path / "p"), "run-1")
    book.save()
    saved = json.loads((book.store.dir / "run.json").read_text())
    assert saved["run_id"] == "run-1"
    assert saved["totals"]["active_seconds"] >= 0


def test_a_finished_iteration_is_a_row_and_an_event(tmp_path: Path) -> None:
    book = opened_book(loop_setup(tmp_path / "p"))
    it = IterationRecord(number=1, started_at="2026-01-01T00:00:01Z")
    book.finish_iteration(it, "continue", counted=True)
    assert [row.decision for row in book.record.iterations] == ["continue"]
    assert book.record.counted_iterations == 1
    events = (book.store.dir / "events.jsonl").read_text().splitlines()
    assert json.loads(events[-1])["event"] == "iteration"


def test_a_held_failure_is_raised_once_its_iteration_is_recorded(tmp_path: Path) -> None:
    book = opened_book(loop_setup(tmp_path / "p"))
    book.hold_failure(RecordError("log: disk full"))
    it = IterationRecord(number=1, started_at="2026-01-01T00:00:01Z")
    with pytest.raises(RecordError, match="disk full"):
        book.finish_iteration(it, "continue", counted=True)
    assert len(book.record.iterations) == 1  # recorded first
    book.finish_iteration(
        IterationRecord(number=2, started_at="2026-01-01T00:00:02Z"), "continue", counted=True
    )  # raised once, not again


def test_the_summary_names_the_run_and_its_folder(tmp_path: Path) -> None:
    book = opened_book(loop_setup(tmp_path / "p"), "run-1")
    book.say_why("stopped: because")
    summary = book.summary()
    assert summary["run_id"] == "run-1"
    assert summary["run_dir"] == str(book.store.dir)
    assert book.finish_reason == "stopped: because"
