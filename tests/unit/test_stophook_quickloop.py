"""The quick Stop of a running loop: the next iteration when the final message claims nothing,
the full hook for anything else, and the same answer and state file as the full hook (a
property over generated states and messages)."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import SLOW_MACHINE_CHECKS
from forgeflare.stophook import continued, run_stop_hook, state_path
from forgeflare.stophook._quick import quick_stop
from forgeflare.stophook._quickloop import next_iteration
from stophook_support import NOW, write_state, write_transcript


@pytest.mark.parametrize(
    ("why", "top", "text"),
    [
        ("a claim", {}, "Done.\n<loop-done>COMPLETE</loop-done>"),
        ("a tag inside code", {}, "`<loop-done>STUCK</loop-done>`"),
        ("a question", {}, "<loop-done>BLOCKED</loop-done>\nWhich API?"),
        ("a parked frame", {"question": "Which API?"}, "ok"),
        ("its cap", {"iter": 5}, "ok"),
        ("another session's frame", {"session_id": "other"}, "ok"),
        ("refused claims on record", {"claims": [{"iteration": 1}]}, "ok"),
        ("a lagging transcript", {"judged": "m2"}, "ok"),
    ],
)
def test_anything_else_goes_to_the_full_hook(
    tmp_path: Path, why: str, top: dict[str, Any], text: str
) -> None:
    path = write_state(tmp_path, **top)
    before = path.read_text(encoding="utf-8")
    transcript = write_transcript(tmp_path / "t.jsonl", text)
    stdin = json.dumps(
        {"cwd": str(tmp_path), "transcript_path": str(transcript), "session_id": "s"}
    )
    assert quick_stop(stdin, environ={}, cwd=str(tmp_path), now=NOW) is None, why
    assert path.read_text(encoding="utf-8") == before


def test_a_stale_state_goes_to_the_full_hook(tmp_path: Path) -> None:
    write_state(tmp_path)
    transcript = write_transcript(tmp_path / "t.jsonl", "ok")
    stdin = json.dumps({"cwd": str(tmp_path), "transcript_path": str(transcript)})
    later = NOW + timedelta(hours=3)
    assert quick_stop(stdin, environ={}, cwd=str(tmp_path), now=later) is None


texts = st.sampled_from(
    [
        "Two tests still fail.",
        "",
        "Done.\n<loop-done>COMPLETE</loop-done>",
        "<loop-done>BLOCKED</loop-done>\nWhich one?",
        "All issues closed.\n<grind-done>NO_MORE_ISSUES</grind-done>",
        "I will write `<loop-done>COMPLETE</loop-done>` when done.",
    ]
)
frames = st.fixed_dictionaries(
    {
        "mode": st.sampled_from(["loop", "task", "issue", "grind"]),
        "iter": st.integers(0, 4) | st.sampled_from(["2", -1]),
        "max": st.integers(1, 4) | st.just("3"),
        "prompt": st.sampled_from(["", "Fix it.", None]),
    },
    optional={
        "session_id": st.sampled_from(["", "s1", "s2"]),
        "judged": st.sampled_from(["", "m1", "m2"]),
        "question": st.sampled_from(["", "Which API?"]),
        "gate": st.sampled_from(["", "true"]),
        "extra": st.just("kept"),
    },
)
records = st.fixed_dictionaries(
    {
        "schema": st.just(1) | st.just(2),
        "event": st.sampled_from(["STATE", "STATE", "DONE", "ABORT"]),
        "run_id": st.just("r"),
        "updated_at": st.sampled_from(["2026-01-01T11:59:00Z", "2026-01-01T08:00:00Z", "soon"]),
        "stack": st.lists(frames, max_size=2),
    }
)
payloads = st.fixed_dictionaries(
    {"hook_event_name": st.sampled_from(["Stop", "Stop", "SubagentStop"])},
    optional={
        "session_id": st.sampled_from(["s1", "s2", ""]),
        "last_assistant_message": texts,
        "transcript": st.booleans(),
    },
)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[*SLOW_MACHINE_CHECKS, HealthCheck.function_scoped_fixture],
)
@given(records, payloads, texts)
def test_the_quick_stop_answers_as_the_full_hook(
    tmp_path: Path, record: dict[str, Any], payload: dict[str, Any], text: str
) -> None:
    project = tmp_path / "p"
    project.mkdir(exist_ok=True)
    path = state_path(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    transcript = write_transcript(tmp_path / "t.jsonl", text)
    if payload.pop("transcript", False):
        payload["transcript_path"] = str(transcript)
    payload["cwd"] = str(project)
    stdin = json.dumps(payload)
    environ = {"FORGEFLARE_STOPHOOK_WAIT_MS": "0"}  # one read, as the quick Stop makes

    def after(run: Any) -> tuple[Any, str | None]:
        path.write_text(json.dumps(record), encoding="utf-8")
        answer = run()
        return answer, path.read_text(encoding="utf-8") if path.exists() else None

    quick, quick_file = after(lambda: quick_stop(stdin, environ=environ, cwd=str(project), now=NOW))
    full, full_file = after(lambda: run_stop_hook(stdin, environ=environ, cwd=project, now=NOW))
    if quick is None:
        return  # the full hook decides: nothing to compare
    assert quick == tuple(full)
    assert (quick_file is None) == (full_file is None)
    if quick_file is not None and full_file is not None:
        from forgeflare.stophook import parse_json_state

        assert parse_json_state(quick_file) == parse_json_state(full_file)


def test_the_equivalence_covers_the_quick_answers(tmp_path: Path) -> None:
    """The property above is not vacuous: the ordinary loop Stop is a quick one."""
    write_state(tmp_path)
    transcript = write_transcript(tmp_path / "t.jsonl", "Two tests still fail.")
    stdin = json.dumps({"cwd": str(tmp_path), "transcript_path": str(transcript)})
    answer = quick_stop(stdin, environ=dict(os.environ), cwd=str(tmp_path), now=NOW)
    assert answer is not None
    assert answer[0] == 0
    assert (continued(answer[1]) or "").startswith("[ITERATION 2/5]")


def test_the_next_iteration_adopts_the_session_and_records_the_judged_message(
    tmp_path: Path,
) -> None:
    state = write_state(tmp_path, extra="kept")
    transcript = write_transcript(tmp_path / "t.jsonl", "Two tests still fail.", "m7")
    payload = {"session_id": "s1", "transcript_path": str(transcript)}
    answer = next_iteration(str(state), payload, NOW)
    assert answer is not None
    assert (continued(answer[1]) or "").startswith("[ITERATION 2/5]")
    written = json.loads(state.read_text(encoding="utf-8"))
    (frame,) = written["stack"]
    assert (frame["iter"], frame["session_id"], frame["judged"]) == (2, "s1", "m7")
    assert frame["extra"] == "kept"  # a field the quick Stop does not know is left as it was
    assert written["updated_at"] == "2026-01-01T12:00:00Z"


@pytest.mark.parametrize(
    ("payload", "goes_on"),
    [
        ({"last_assistant_message": "Still working."}, True),
        ({"last_assistant_message": "  "}, False),
        ({}, False),
        ({"transcript_path": "missing.jsonl", "last_assistant_message": "Still working."}, False),
    ],
)
def test_without_a_transcript_the_message_sent_is_judged(
    tmp_path: Path, payload: dict[str, Any], goes_on: bool
) -> None:
    state = write_state(tmp_path)
    if "transcript_path" in payload:
        payload = {**payload, "transcript_path": str(tmp_path / payload["transcript_path"])}
    answer = next_iteration(str(state), payload, NOW)
    assert (answer is not None) == goes_on
    assert ('"iter": 2' in state.read_text(encoding="utf-8")) == goes_on


@pytest.mark.parametrize("text", ["{not json", '{"event": "STATE"}', "[]"])
def test_a_state_it_cannot_read_goes_to_the_full_hook(tmp_path: Path, text: str) -> None:
    state = write_state(tmp_path)
    state.write_text(text, encoding="utf-8")
    assert next_iteration(str(state), {"last_assistant_message": "ok"}, NOW) is None
    assert state.read_text(encoding="utf-8") == text
