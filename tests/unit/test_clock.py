"""The one timestamp format of the records, read back, and spans of time in words."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare._clock import format_wait, parse_time, utc_timestamp


def test_a_timestamp_is_utc_in_whole_seconds_with_a_z() -> None:
    moment = datetime(2026, 2, 13, 20, 30, 0, 999_999, tzinfo=timezone(timedelta(hours=1)))
    assert utc_timestamp(moment) == "2026-02-13T19:30:00Z"
    assert utc_timestamp().endswith("Z")


@pytest.mark.parametrize(
    ("value", "moment"),
    [
        ("2026-02-13T19:30:00Z", datetime(2026, 2, 13, 19, 30, tzinfo=UTC)),
        ("2026-02-13T19:30:00", datetime(2026, 2, 13, 19, 30, tzinfo=UTC)),  # naive: UTC
        ("2026-02-13T20:30:00+01:00", datetime(2026, 2, 13, 19, 30, tzinfo=UTC)),
        ("", None),
        ("yesterday", None),
        (None, None),
        (1700000000, None),
    ],
)
def test_parse_time(value: object, moment: datetime | None) -> None:
    assert parse_time(value) == moment


# Four-digit years: strftime writes year 999 as "999", which is no ISO time (no record has it).
@given(st.datetimes(min_value=datetime(1000, 1, 1), timezones=st.just(UTC)))
def test_a_timestamp_reads_back_to_its_second(moment: datetime) -> None:
    assert parse_time(utc_timestamp(moment)) == moment.replace(microsecond=0)


def test_a_wait_reads_as_a_duration() -> None:
    assert [format_wait(s) for s in (45, 720, 3840)] == ["45s", "12m 00s", "1h 04m"]
