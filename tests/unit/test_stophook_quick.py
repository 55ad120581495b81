"""The quick Stop: what its process loads, and that it answers exactly as the full hook does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import SLOW_MACHINE_CHECKS
from forgeflare.stophook import continued, run_stop_hook, state_path
from forgeflare.stophook._quick import quick_stop

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
FORBIDDEN = ("dataclasses", "inspect", "ast", "typer", "click", "rich", "pydantic", "httpx", "trio")
"""What the Stop that claims nothing must never load (issue 42)."""
ALSO_AVOIDED = ("typing", "pathlib", "forgeflare.stophook._machine", "forgeflare.stophook._hook")
"""What it does not load today either: the quick Stop's whole point."""
BIN = Path(sys.executable).parent
ENTRIES = {
    "forgeflare stop-hook": [sys.executable, str(BIN / "forgeflare"), "stop-hook"],
    "forgeflare-stop-hook": [sys.executable, str(BIN / "forgeflare-stop-hook")],
    "python -m forgeflare stop-hook": [sys.executable, "-m", "forgeflare", "stop-hook"],
}


def write_state(project: Path, *, updated_at: str = "2026-01-01T11:59:00Z", **top: Any) -> Path:
    frame = {"mode": "loop", "iter": 1, "max": 5, "prompt": "Fix it.", **top}
    doc = {"schema": 1, "event": "STATE", "run_id": "r", "updated_at": updated_at}
    path = state_path(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**doc, "stack": [frame]}), encoding="utf-8")
    return path


def write_transcript(path: Path, text: str, message_id: str = "m2") -> Path:
    entries = [
        {"type": "user", "message": {"role": "user", "content": "Fix it."}},
        {
            "type": "assistant",
            "message": {
                "id": message_id,
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
            },
        },
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


def imported(entry: list[str], project: Path, payload: dict[str, Any]) -> tuple[int, set[str]]:
    """Exit status and every module one real hook process imported (``-X importtime``)."""
    argv = [entry[0], "-X", "importtime", *entry[1:]]
    out = subprocess.run(
        argv, input=json.dumps(payload), capture_output=True, text=True, cwd=project, timeout=60
    )
    lines = [line for line in out.stderr.splitlines() if line.startswith("import time:")]
    return out.returncode, {line.split("|")[-1].strip() for line in lines}


@pytest.mark.parametrize("entry", list(ENTRIES))
@pytest.mark.parametrize("case", ["no loop", "a loop, no claim"])
def test_the_stop_without_a_claim_loads_only_what_it_uses(
    tmp_path: Path, entry: str, case: str
) -> None:
    script = ENTRIES[entry][1]
    if script != "-m" and not Path(script).exists():
        pytest.skip(f"{entry}: not installed in this environment")
    payload = {"hook_event_name": "Stop", "cwd": str(tmp_path), "session_id": "s"}
    if case == "a loop, no claim":
        write_state(tmp_path, updated_at=datetime.now(UTC).isoformat())
        transcript = write_transcript(tmp_path / "t.jsonl", "Two tests still fail.")
        payload["transcript_path"] = str(transcript)
    code, modules = imported(ENTRIES[entry], tmp_path, payload)
    assert code == 0  # a block is said on stdout
    assert "forgeflare.stophook._quick" in modules
    roots = {name.split(".")[0] for name in modules}
    assert sorted(roots & set(FORBIDDEN)) == []
    assert sorted(set(ALSO_AVOIDED) & modules) == []
    if case == "no loop":  # nearly every Stop: json and os, not even the clock
        assert sorted({"datetime", "forgeflare.stophook._quickloop"} & modules) == []


def test_the_import_check_sees_what_a_claim_loads(tmp_path: Path) -> None:
    """The measure can fail: a claim goes to the full hook, which loads the machine."""
    write_state(tmp_path, updated_at=datetime.now(UTC).isoformat())
    transcript = write_transcript(tmp_path / "t.jsonl", "Done.\n<loop-done>COMPLETE</loop-done>")
    payload = {"hook_event_name": "Stop", "cwd": str(tmp_path), "transcript_path": str(transcript)}
    code, modules = imported(ENTRIES["python -m forgeflare stop-hook"], tmp_path, payload)
    assert code == 0
    assert {"typing", "forgeflare.stophook._machine"} <= modules


def test_no_loop_is_one_stat_and_silent(tmp_path: Path) -> None:
    payload = json.dumps({"hook_event_name": "Stop", "cwd": str(tmp_path)})
    assert quick_stop(payload, environ={}, cwd=str(tmp_path), now=NOW) == (0, "", "")
    assert list(tmp_path.iterdir()) == []


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


# --- the same answer as the full hook -----------------------------------------------------------

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
