"""The loop-state file as plain data: each check's one phrase, the counts jq accepted, the
timestamps, and the atomic write that leaves no temp file behind."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from forgeflare.stophook import parse_timestamp
from forgeflare.stophook._rawstate import read_frame, read_record, write_state_text

T0 = datetime(2026, 1, 1, 10, 0, 0, tzinfo=UTC)
FRAME = {"mode": "loop", "iter": 2, "max": 5, "prompt": "p"}
RECORD = {"schema": 1, "event": "STATE", "run_id": "abc", "updated_at": "2026-01-01T10:00:00Z"}


def test_a_frame_is_normalised() -> None:
    assert read_frame({**FRAME, "iter": " 3 ", "prompt": None, "session_id": None}, "f") == {
        "mode": "loop",
        "iter": 3,
        "max": 5,
        "prompt": "",
        "session_id": "",
        "judged": "",
        "gate": "",
        "failures": "",
        "stall_after": 0,
        "stalled": 0,
        "reviewer": "",
        "base": "",
        "question": "",
        "answer": "",
        "claims": [],
    }


@pytest.mark.parametrize(
    ("change", "phrase"),
    [
        ({"mode": "build"}, "f: unknown mode 'build'"),
        ({"iter": ...}, "f: missing 'iter' or 'max'"),
        ({"iter": -1}, "f: iter -1 is not a non-negative integer"),
        ({"iter": True}, "f: iter True is not a non-negative integer"),
        ({"iter": "٣"}, "f: iter '٣' is not a non-negative integer"),  # decimal, not ASCII
        ({"max": 0}, "f: max 0 is not a positive integer"),
        ({"max": "x"}, "f: max 'x' is not a positive integer"),
        ({"prompt": 3}, "f: prompt is not a string"),
        ({"session_id": 1}, "f: session_id is not a string"),
        ({"failures": ["x"]}, "f: gate or failures is not a string"),
        ({"stalled": -2}, "f: stall_after or stalled is not a non-negative integer"),
        ({"answer": ["x"]}, "f: question or answer is not a string"),
        ({"claims": "none"}, "f: claims is not a list"),
    ],
)
def test_a_bad_frame_is_one_phrase(change: dict[str, Any], phrase: str) -> None:
    raw = {k: v for k, v in {**FRAME, **change}.items() if v is not ...}
    assert read_frame(raw, "f") == phrase


@pytest.mark.parametrize(
    ("raw", "phrase"),
    [
        ([], "not a JSON object"),
        ({**RECORD, "schema": 2}, "schema 2 is not 1"),
        ({**RECORD, "event": "PAUSE"}, "unknown event 'PAUSE'"),
        ({**RECORD, "run_id": 5}, "run_id is not a string"),
        ({**RECORD, "updated_at": "soon"}, "updated_at 'soon' is not an ISO 8601 time"),
        (RECORD, "stack is missing or not a list"),
        ({**RECORD, "stack": [3]}, "stack[0] is not an object"),
        (
            {**RECORD, "stack": [FRAME, {**FRAME, "max": 0}]},
            "stack[1]: max 0 is not a positive integer",
        ),
    ],
)
def test_a_bad_record_is_one_phrase(raw: object, phrase: str) -> None:
    assert read_record(raw) == phrase


def test_a_record_reads_into_its_parts() -> None:
    event, run_id, updated_at, frames = read_record({**RECORD, "run_id": None, "stack": [FRAME]})
    assert (event, run_id, updated_at) == ("STATE", "", T0)
    assert [(f["mode"], f["iter"], f["max"]) for f in frames] == [("loop", 2, 5)]


@pytest.mark.parametrize(
    "value", ["2026-01-01T10:00:00Z", "2026-01-01T10:00:00+00:00", "2026-01-01T11:00:00+01:00"]
)
def test_timestamps_in_both_utc_spellings(value: str) -> None:
    assert parse_timestamp(value) == T0


def test_naive_timestamp_is_utc_and_garbage_is_none() -> None:
    assert parse_timestamp("2026-01-01T10:00:00") == T0
    assert parse_timestamp("yesterday") is None
    assert parse_timestamp(12) is None


def test_the_write_replaces_the_file_and_leaves_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text("old", encoding="utf-8")
    write_state_text(str(path), "new\n")
    assert path.read_text(encoding="utf-8") == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_a_failed_write_removes_its_temp_and_keeps_the_old_state(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.mkdir()  # the rename onto it fails, after the temp file is written
    with pytest.raises(IsADirectoryError):
        write_state_text(str(path), "new\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]
    assert path.is_dir()
