"""The loop's waits, built alone: each ends on its condition or a stop and is recorded; the
hour's requests are counted from the rows; a hint is taken once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import trio

from forgeflare.supervisor import IterationRecord
from forgeflare.supervisor.records import ANSWER_FILE
from forgeflare.supervisor.run import LoopWaits
from forgeflare.supervisor.run._hand import add_hint, request_pause
from loop_support import loop_setup, opened_book


def _waits(tmp_path: Path, config: dict[str, Any] | None = None) -> LoopWaits:
    setup = loop_setup(tmp_path / "p", config=config)
    return LoopWaits(setup, opened_book(setup))


async def test_a_wait_ends_on_a_stop_and_is_recorded(tmp_path: Path) -> None:
    waits = _waits(tmp_path)
    waits.setup.stop.request("SIGTERM")
    until = datetime.now(UTC) + timedelta(hours=10)
    await waits.wait("limit_wait", 36_000, until)
    record = waits.book.record
    assert [w.kind for w in record.waits] == ["limit_wait"]
    events = (waits.book.store.dir / "events.jsonl").read_text()
    assert '"wait_started"' in events
    assert '"wait_ended"' in events


async def test_a_wait_runs_its_scaled_time_out(tmp_path: Path) -> None:
    waits = _waits(tmp_path)  # a 0.001 time scale: ten seconds are ten milliseconds
    await waits.wait("outage_wait", 10, datetime.now(UTC) + timedelta(seconds=10))
    assert [w.kind for w in waits.book.record.waits] == ["outage_wait"]


async def test_an_answer_ends_its_wait(tmp_path: Path) -> None:
    waits = _waits(tmp_path)
    (waits.book.store.dir / ANSWER_FILE).write_text("use postgres\n")
    assert await waits.wait_for_answer(36_000, poll=0.01) is True
    assert [w.kind for w in waits.book.record.waits] == ["answer_wait"]


async def test_no_answer_within_the_wait_is_false(tmp_path: Path) -> None:
    waits = _waits(tmp_path)
    assert await waits.wait_for_answer(0.0, poll=0.01) is False


async def test_a_pause_holds_until_unpaused(tmp_path: Path) -> None:
    waits = _waits(tmp_path)
    run_dir = waits.book.store.dir
    await waits.hold_while_paused(poll=0.01)  # not paused: no hold, no record
    assert waits.book.record.waits == []
    request_pause(run_dir)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(waits.hold_while_paused, 0.01)
        events = run_dir / "events.jsonl"
        with trio.fail_after(120):  # bounded: the hold says it started before it polls
            while not events.exists() or '"paused"' not in events.read_text():
                await trio.sleep(0.01)
        (run_dir / "pause").unlink()
    assert [w.kind for w in waits.book.record.waits] == ["paused"]


async def test_the_hour_s_requests_are_counted_from_the_rows(tmp_path: Path) -> None:
    waits = _waits(tmp_path, {"limits": {"max_requests_per_hour": 5}})
    await waits.hold_for_requests()
    assert waits.requests_left == 5
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    row = IterationRecord(number=1, started_at=now, turns=3)
    await waits.hold_for_requests(pending=[row])
    assert waits.requests_left == 2


async def test_without_a_limit_nothing_is_counted(tmp_path: Path) -> None:
    waits = _waits(tmp_path)
    await waits.hold_for_requests()
    assert waits.requests_left is None


def test_a_hint_is_taken_once(tmp_path: Path) -> None:
    waits = _waits(tmp_path)
    add_hint(waits.book.store.dir, "look at the parser first")
    assert waits.take_user_hint() == "look at the parser first"
    assert waits.take_user_hint() is None
