"""``[limits] max_requests_per_hour``: the requests the hour has left and when one frees up."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.supervisor.records import IterationRecord, ReviewRecord
from forgeflare.supervisor.records._hourly import Sent, hour_allowance, sent_by_rows

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def _at(minutes: float, requests: int) -> Sent:
    return Sent(T0 + timedelta(minutes=minutes), requests)


@pytest.mark.parametrize(
    ("sent", "limit", "left", "free_minutes"),
    [
        ([], 5, 5, None),
        ([_at(0, 2)], 5, 3, None),
        ([_at(0, 5)], 5, 0, 60),
        ([_at(-61, 5), _at(0, 1)], 5, 4, None),  # an hour ago: out of the window
        ([_at(-30, 3), _at(-10, 3)], 5, 0, 30),  # the oldest leaving frees enough
        ([_at(-30, 1), _at(-20, 1), _at(-10, 4)], 5, 0, 40),  # two must leave
    ],
)
def test_hour_allowance(
    sent: list[Sent], limit: int, left: int, free_minutes: float | None
) -> None:
    got_left, free_at = hour_allowance(sent, limit=limit, now=T0)
    assert got_left == left
    assert free_at == (None if free_minutes is None else T0 + timedelta(minutes=free_minutes))


@given(st.lists(st.tuples(st.integers(-120, 0), st.integers(0, 5)), max_size=8), st.integers(1, 9))
def test_once_free_there_is_room_for_one_more(rows: list[tuple[int, int]], limit: int) -> None:
    sent = [_at(m, n) for m, n in rows]
    left, free_at = hour_allowance(sent, limit=limit, now=T0)
    if free_at is None:
        assert left > 0
    else:
        assert left == 0
        assert free_at > T0
        later, _ = hour_allowance(sent, limit=limit, now=free_at)
        assert later >= 1


def test_rows_send_their_turns_and_one_per_review_at_their_end() -> None:
    start = "2026-01-01T11:00:00Z"
    rows = [
        IterationRecord(number=1, started_at=start, duration=30, turns=3),
        IterationRecord(
            number=2,
            started_at=start,
            duration=60,
            turns=2,
            review=ReviewRecord(model="m", complete=False),
        ),
        IterationRecord(  # a reviewer that failed before any token: no request was answered
            number=3, started_at=start, duration=90, turns=1, review=ReviewRecord(model="m")
        ),
        IterationRecord(number=4, started_at="", duration=5, turns=4),  # no start: not dated
        IterationRecord(number=5, started_at=start, duration=5, turns=0),  # nothing sent
    ]
    at = T0 - timedelta(hours=1)
    assert sent_by_rows(rows) == [
        Sent(at + timedelta(seconds=30), 3),
        Sent(at + timedelta(seconds=60), 3),
        Sent(at + timedelta(seconds=90), 1),
    ]
