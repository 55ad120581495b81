"""Stream fuzzing: every backend's reader fed damaged copies of recorded real streams.

A seeded mutator (fast, deterministic) takes the streams Claude Code and Codex really printed
(``tests/fixtures/claude``, ``tests/fixtures/codex``) and damages them as a broken CLI, a
proxy or a full pipe would: a value of another type in any field, an event's type swapped, a
line cut, duplicated, dropped or joined with junk, far-future times, lone surrogates. Every
damaged stream must read without an exception into lines that print and an
:class:`IterationReport` the loop can record. ``FORGEFLARE_STREAM_FUZZ`` sets the number of
streams per reader (default 20,000).
"""

from __future__ import annotations

import functools
import json
import os
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from forgeflare.supervisor.backends import (
    ChildEnd,
    ClaudeBackend,
    ClaudeStreamReader,
    CodexBackend,
    CodexStreamReader,
    IterationReport,
    OpenCodeBackend,
    OpenCodeStreamReader,
    PiBackend,
    PiStreamReader,
    StreamBackend,
)
from forgeflare.supervisor.backends._stream import as_cost, as_int, epoch_time, shape_problem

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
STREAMS = int(os.environ.get("FORGEFLARE_STREAM_FUZZ", "20000"))

_VALUES: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    5,
    4.5,
    10**30,
    -(10**30),
    1e308,
    float("nan"),
    float("inf"),
    "",
    "x",
    "\ud800",
    "a\udfffb",
    "9999-12-31T23:59:59-05:00",
    253402300799,
    253402300799000,
    "You’ve hit your usage limit. try again at Dec 31st, 9999 11:59 PM.",
    "Claude AI usage limit reached|99999999999999",
    [],
    [1, "a", None],
    {},
    {"message": "You’ve hit your usage limit."},
    {"type": "text", "text": 5},
    {"used_percent": 100, "resets_at": 10**20},
)


def _lines(folder: str) -> list[list[str]]:
    return [
        [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        for path in sorted((FIXTURES / folder).rglob("*.jsonl"))
    ]


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place inside a JSON value (dict keys and list indexes)."""
    found = [at]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*at, key))
    elif isinstance(value, list):
        for i, item in enumerate(value[:6]):
            found += _paths(item, (*at, i))
    return found


@functools.lru_cache(maxsize=8192)
def _line_paths(line: str) -> tuple[tuple[Any, ...], ...]:
    """The places inside one JSON line: the recorded lines repeat across 20,000 streams, and
    walking them again was a fifth of this file's CPU."""
    return tuple(_paths(json.loads(line)))


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return doc


def _damage_value(rng: random.Random, line: str, types: list[str]) -> str:
    try:
        doc = json.loads(line)
    except ValueError:
        return line
    path = rng.choice(_line_paths(line))
    if path and path[-1] == "type" and rng.random() < 0.5:
        value: Any = rng.choice(types)  # another event's type: fields of the wrong shape
    else:
        value = rng.choice(_VALUES)
    return json.dumps(_set(doc, path, value), allow_nan=True)


def _damage_bytes(rng: random.Random, line: str) -> str:
    at = rng.randrange(len(line) + 1)
    kind = rng.randrange(4)
    if kind == 0:
        return line[:at]
    if kind == 1:
        return line[:at] + rng.choice(['"', "}", "{", "\x00", "\ud800", "\\", ",", "]"]) + line[at:]
    if kind == 2:
        return line + line  # two events in one line
    return line[:at] + line[at + 1 :]


def mutate(rng: random.Random, stream: list[str], types: list[str]) -> list[str]:
    """A damaged copy of ``stream``: one to four edits."""
    out = list(stream)
    for _ in range(rng.randint(1, 4)):
        if not out:
            break
        i = rng.randrange(len(out))
        edit = rng.random()
        if edit < 0.6:
            out[i] = _damage_value(rng, out[i], types)
        elif edit < 0.8:
            out[i] = _damage_bytes(rng, out[i])
        elif edit < 0.9:
            out.insert(i, out[i])
        else:
            del out[i]
    return out


def _types(streams: list[list[str]]) -> list[str]:
    found = set()
    for stream in streams:
        for line in stream:
            try:
                kind = json.loads(line).get("type")
            except (ValueError, AttributeError):
                continue
            if isinstance(kind, str):
                found.add(kind)
    return sorted(found)


def _read(
    backend: StreamBackend, make: Callable[[], Any], lines: list[str]
) -> tuple[IterationReport, list[str]]:
    reader = make()
    shown: list[str] = []
    for line in lines:
        shown += reader.feed(line)
    return backend.report(reader, ChildEnd(exit_code=0), None, None), shown


def _codex_reader(home: Path) -> Callable[[], CodexStreamReader]:
    made = 0

    def make() -> CodexStreamReader:
        # Pricing is most of the time per stream: one in 20 runs with a model and its home
        # (priced, a damaged count meeting the price table), the rest with neither.
        nonlocal made
        made += 1
        reader = CodexStreamReader()
        if made % 20 == 0:
            argv = ["codex", "exec", "--model", "gpt-5.5"]
            reader.setup(argv=argv, env={"CODEX_HOME": str(home)})
        return reader

    return make


def _newer_backend(name: str) -> tuple[StreamBackend, Callable[[], Any], list[list[str]]]:
    """OpenCode's and pi's backend, reader and recorded streams."""
    if name == "opencode":
        return OpenCodeBackend(), OpenCodeStreamReader, _lines("opencode")
    return PiBackend(), PiStreamReader, _lines("pi")


@pytest.mark.parametrize("name", ["claude", "codex", "opencode", "pi"])
def test_damaged_streams_never_raise(name: str, tmp_path: Path) -> None:
    backend: StreamBackend
    if name == "claude":
        backend, make, streams = ClaudeBackend(), ClaudeStreamReader, _lines("claude")
    elif name == "codex":
        backend, make, streams = CodexBackend(), _codex_reader(tmp_path), _lines("codex")
    else:
        backend, make, streams = _newer_backend(name)
    assert streams, "recorded streams to start from"
    types = _types(streams)
    rng = random.Random(40)
    failures: list[str] = []
    for n in range(STREAMS):
        lines = mutate(rng, rng.choice(streams), types)
        try:
            report, shown = _read(backend, make, lines)
            for text in [*shown, report.model_dump_json()]:
                text.encode("utf-8")  # prints and writes
        except Exception as exc:
            failures.append(f"#{n}: {type(exc).__name__}: {exc}\n" + "\n".join(lines))
    assert not failures, f"{len(failures)} of {STREAMS} streams raised; first:\n{failures[0]}"


@pytest.mark.parametrize(
    ("make", "backend", "line"),
    [
        (ClaudeStreamReader, ClaudeBackend(), {"type": "system", "subtype": "init", "model": 5}),
        (ClaudeStreamReader, ClaudeBackend(), {"type": "result", "usage": [], "is_error": 0}),
        (CodexStreamReader, CodexBackend(), {"type": "thread.started", "thread_id": 4.5}),
        (
            CodexStreamReader,
            CodexBackend(),
            {"type": "thread.started", "thread_id": {"message": "You’ve hit your usage limit."}},
        ),
    ],
)
def test_a_damaged_event_is_one_warning_and_the_line_that_broke_it(
    make: Callable[[], Any], backend: StreamBackend, line: dict[str, Any]
) -> None:
    text = json.dumps(line)
    report, shown = _read(backend, make, ["", text])
    assert len(shown) == 1
    assert shown[0].startswith("warning: ignored a damaged ")
    assert "line 2:" in shown[0]
    assert report.outcome == "agent_error"
    assert report.detail is not None
    assert report.detail.startswith("the agent's stream made no sense at line 2: ")
    assert text[:40] in report.detail


def test_damage_beside_a_good_result_is_counted_not_fatal() -> None:
    lines = _lines("claude")
    ok = next(s for s in lines if '"is_error":false' in s[-1])
    damaged = [ok[0], json.dumps({"type": "system", "subtype": "init", "model": 5}), *ok[1:]]
    report, shown = _read(ClaudeBackend(), ClaudeStreamReader, damaged)
    assert report.outcome == "ok"
    assert report.detail is not None
    assert report.detail.startswith("ignored 1 damaged stream line")
    assert sum(line.startswith("warning:") for line in shown) == 1


@pytest.mark.parametrize("hours", [0, -5, 14])
def test_a_far_future_codex_reset_is_ignored(hours: int) -> None:
    reader = CodexStreamReader(now=datetime(2026, 11, 28, tzinfo=timezone(timedelta(hours=hours))))
    fail = "You’ve hit your usage limit. Try again at Dec 31st, 9999 11:59 PM."
    for event in (
        {"type": "thread.started", "thread_id": "t-1"},
        {"type": "turn.failed", "error": {"message": fail}},
    ):
        reader.feed(json.dumps(event))
    report = reader.report()
    assert report.outcome == "rate_limited"
    assert report.resets_at is None


def test_a_far_future_claude_reset_is_ignored_and_said() -> None:
    reader = ClaudeStreamReader(now=datetime(2026, 11, 28, tzinfo=UTC))
    limit = {"status": "rejected", "resetsAt": 1893456000}  # 2030-01-01
    reader.feed(json.dumps({"type": "rate_limit_event", "rate_limit_info": limit}))
    report = reader.report()
    assert report.outcome == "rate_limited"
    assert report.resets_at is None
    assert "reset 2030-01-01T00:00:00Z is over 31 days ahead: ignored" in report.detail
    reader.rate_limit = {"status": "rejected", "resetsAt": 1764547200}  # 2025-12-01: in bounds
    assert reader.report().resets_at == "2025-12-01T00:00:00Z"


def test_a_stream_of_damage_keeps_a_bounded_record() -> None:
    reader = ClaudeStreamReader()
    for _ in range(1000):
        reader.feed(json.dumps({"type": "system", "subtype": "init", "model": 5}))
    assert reader.damaged_count == 1000
    assert len(reader.damaged) == 20
    assert reader.report().detail.startswith("the agent's stream made no sense at line 1: ")


@pytest.mark.parametrize(
    ("event", "problem"),
    [
        ({"model": "m"}, None),
        ({}, None),
        ({"model": 5}, "'model' is a number"),
        ({"model": None}, "'model' is null"),
        ({"attempt": True}, "'attempt' is a boolean"),
        ({"attempt": None}, None),
        ({"retry_delay_ms": 1.5}, None),
        ({"usage": []}, None),
        ({"message": []}, None),
    ],
)
def test_shape_problem_table(event: dict[str, Any], problem: str | None) -> None:
    shape = {"model": str, "attempt": (int, type(None)), "retry_delay_ms": (int, float)}
    assert shape_problem(event, shape) == problem


@pytest.mark.parametrize(
    ("value", "count", "cost"),
    [
        (5, 5, 5.0),
        (-1, 0, None),
        (True, 0, None),
        (10**30, 0, None),
        (float("nan"), 0, None),
        (float("inf"), 0, None),
        (0.25, 0, 0.25),
        ("5", 0, None),
    ],
)
def test_counts_and_costs_in_bounds(value: object, count: int, cost: float | None) -> None:
    assert as_int(value) == count
    assert as_cost(value) == cost


@pytest.mark.parametrize(
    ("epoch", "expected"),
    [
        (1764000000, "2025-11-24T16:00:00"),
        (1764000000000, "2025-11-24T16:00:00"),  # milliseconds
        (0, None),
        (-5, None),
        (10**20, None),
        (1e308, None),
        (float("nan"), None),
        (True, None),
        ("1764000000", None),
    ],
)
def test_epoch_time_table(epoch: object, expected: str | None) -> None:
    at = epoch_time(epoch)
    assert (at.strftime("%Y-%m-%dT%H:%M:%S") if at else None) == expected
