"""The stop-hook waits, briefly, for a lagging transcript (Claude Code 2.1.197's timing).

The lag is simulated by a transcript writer that appends the turn's final message when the
hook first waits (its ``sleep``), or never: the hook itself runs for real, in process.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from forgeflare.stophook import (
    DEFAULT_WAIT_MS,
    FinalMessage,
    continued,
    read_settled,
    run_stop_hook,
    settled,
    state_path,
    wait_seconds,
)
from stophook_support import DONE, NOW


@pytest.mark.parametrize(
    ("final", "sent", "judged", "expected"),
    [
        (None, "x", "", False),  # the turn's message is not written yet
        (FinalMessage("m2", "a\nb", "b", "end_turn"), "b", "", True),
        (FinalMessage("m2", "a\nb", "b", "end_turn"), " b \n", "", True),  # trimmed
        (FinalMessage("m1", "old", "old", "end_turn"), "b", "", False),  # an older message
        (FinalMessage("m2", "a", "a", "tool_use"), None, "", False),  # called a tool
        (FinalMessage("m1", "old", "old", "end_turn"), None, "m1", False),  # judged already
        (FinalMessage("m2", "a", "a", "end_turn"), None, "m1", True),  # thinking-last
        (FinalMessage("m2", "", "", None), "", "", True),  # blank sent: nothing to compare
    ],
)
def test_settled(final: FinalMessage | None, sent: str | None, judged: str, expected: bool) -> None:
    assert settled(final, sent, judged) is expected


def test_wait_setting() -> None:
    assert wait_seconds({}) == DEFAULT_WAIT_MS / 1000 == 0.2
    assert wait_seconds({"FORGEFLARE_STOPHOOK_WAIT_MS": "50"}) == 0.05
    assert wait_seconds({"FORGEFLARE_STOPHOOK_WAIT_MS": "0"}) == 0
    for bad in ("-1", "fast", "1e3", "٣"):
        assert wait_seconds({"FORGEFLARE_STOPHOOK_WAIT_MS": bad}) == 0.2


def test_read_settled_polls_until_the_message_is_there() -> None:
    now = [0.0]
    reads: list[FinalMessage | None] = [None, None, FinalMessage("m", "t", "t", "end_turn")]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    got = read_settled(lambda: reads.pop(0), "t", "", wait=1.0, sleep=sleep, clock=lambda: now[0])
    assert got.settled
    assert got.final is not None
    assert got.final.message_id == "m"
    assert 0 < got.waited < 0.05
    never = read_settled(lambda: None, "t", "", wait=0.1, sleep=sleep, clock=lambda: now[0])
    assert not never.settled
    assert never.waited == pytest.approx(0.1)


# --- the hook with a lagging transcript -------------------------------------------------------


def entry(message_id: str, blocks: list[dict[str, Any]], stop: str = "end_turn") -> str:
    message = {"id": message_id, "role": "assistant", "content": blocks, "stop_reason": stop}
    return json.dumps({"type": "assistant", "message": message}) + "\n"


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def prompt(t: str) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": t}}) + "\n"


def loop(project: Path, *modes: str, judged: str = "") -> Path:
    path = state_path(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    stack = [{"mode": m, "iter": 1, "max": 5, "prompt": ""} for m in modes]
    if judged:
        stack[-1]["judged"] = judged
    doc = {"schema": 1, "event": "STATE", "run_id": "r", "updated_at": "2026-01-01T11:59:00Z"}
    path.write_text(json.dumps({**doc, "stack": stack}))
    return path


def writer(transcript: Path, *lines: str) -> Callable[[float], None]:
    """A ``sleep`` that is Claude Code catching up: the lines land at the hook's first wait."""
    pending = list(lines)

    def sleep(seconds: float) -> None:
        with transcript.open("a") as fh:
            fh.writelines(pending)
        pending.clear()

    return sleep


def stop(
    project: Path, transcript: Path, sent: str | None, sleep: Callable[[float], None], wait: str
) -> tuple[int, str]:
    payload: dict[str, Any] = {"transcript_path": str(transcript), "session_id": "s"}
    if sent is not None:
        payload["last_assistant_message"] = sent
    out = run_stop_hook(
        json.dumps(payload),
        environ={"FORGEFLARE_STOPHOOK_WAIT_MS": wait},
        cwd=project,
        now=NOW,
        sleep=sleep,
    )
    assert out.exit_code == 0  # a block is said on stdout, never by the exit status
    return ("block" if continued(out.stdout) is not None else "allow"), out.stderr


def test_a_tag_in_the_first_of_two_blocks_completes_once_the_file_catches_up(
    tmp_path: Path,
) -> None:
    state = loop(tmp_path, "loop")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(prompt("Fix it") + entry("m1", [text("Looking.")], "tool_use"))
    final = entry("m2", [text(f"All tests pass.\n{DONE}"), text("Summary: fixed two.")])
    code, err = stop(tmp_path, transcript, "Summary: fixed two.", writer(transcript, final), "5000")
    assert code == "allow", err
    assert "loop complete" in err
    assert not state.exists()


def test_a_transcript_not_created_yet_is_waited_for_like_a_lagging_one(tmp_path: Path) -> None:
    """Claude Code 2.1.197 may run a session's first Stop hook before the transcript exists
    (seen: about one first turn in two on a busy machine); a missing file is lag, not an
    unreadable one that leaves only the last block to judge."""
    state = loop(tmp_path, "loop")
    transcript = tmp_path / "t.jsonl"
    final = entry("m2", [text(f"All tests pass.\n{DONE}"), text("Summary: fixed two.")])
    catch_up = writer(transcript, prompt("Fix it"), final)
    code, err = stop(tmp_path, transcript, "Summary: fixed two.", catch_up, "5000")
    assert code == "allow", err
    assert "loop complete" in err
    assert not state.exists()


def test_without_waiting_the_same_stop_misses_the_tag(tmp_path: Path) -> None:
    """The check above fails without the wait: judged on Claude Code's last block alone."""
    state = loop(tmp_path, "loop")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(prompt("Fix it") + entry("m1", [text("Looking.")], "tool_use"))
    final = entry("m2", [text(f"All tests pass.\n{DONE}"), text("Summary: fixed two.")])
    code, _ = stop(tmp_path, transcript, "Summary: fixed two.", writer(transcript, final), "0")
    assert code == "block"
    assert json.loads(state.read_text())["stack"][0]["iter"] == 2


def test_thinking_last_without_a_tag_never_ends_the_loop(tmp_path: Path) -> None:
    state = loop(tmp_path, "loop", judged="m1")
    transcript = tmp_path / "t.jsonl"
    # the previous turn's final message (judged at the last Stop) had the tag in a code block
    transcript.write_text(prompt("Fix it") + entry("m1", [text("Working.")]) + prompt("Go on"))
    code, err = stop(tmp_path, transcript, None, writer(transcript), "30")
    assert code == "block"  # unknown in time: one more turn, never a stop on a guess
    first = err.splitlines()[0]
    assert first.startswith("forgeflare stop-hook: ")
    assert "final message is not in the transcript" in first
    assert "FORGEFLARE_STOPHOOK_WAIT_MS" in first
    assert json.loads(state.read_text())["stack"][0]["iter"] == 2


def test_thinking_last_final_message_is_judged_when_it_arrives(tmp_path: Path) -> None:
    state = loop(tmp_path, "loop", judged="m1")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(prompt("Fix it") + entry("m1", [text("Working.")]))
    thinking = {"type": "thinking", "thinking": "done?", "signature": "x"}
    final = entry("m2", [text(f"Done.\n{DONE}"), thinking])
    code, err = stop(tmp_path, transcript, None, writer(transcript, final), "5000")
    assert code == "allow", err
    assert not state.exists()


def test_a_lagging_second_stop_keeps_the_outer_loop(tmp_path: Path) -> None:
    """Nested loops of one mode: the inner one completes on m1; at the next Stop the file
    still ends at m1 (its tag), which must not complete the outer loop."""
    state = loop(tmp_path, "loop", "loop")
    transcript = tmp_path / "t.jsonl"
    inner_done = entry("m1", [text(f"Inner done.\n{DONE}")])
    transcript.write_text(prompt("Work") + inner_done)
    code, err = stop(tmp_path, transcript, f"Inner done.\n{DONE}", writer(transcript), "30")
    assert code == "block", err  # the outer loop goes on
    (outer,) = json.loads(state.read_text())["stack"]
    assert (outer["iter"], outer["judged"]) == (2, "m1")
    # second Stop, thinking-last so no text from Claude Code, and the file lags at m1
    code, err = stop(tmp_path, transcript, None, writer(transcript), "30")
    assert code == "block", err
    assert state.exists()
    (outer,) = json.loads(state.read_text())["stack"]
    assert outer["iter"] == 3


def test_another_sessions_stop_does_not_wait(tmp_path: Path) -> None:
    state = loop(tmp_path, "loop")
    doc = json.loads(state.read_text())
    doc["stack"][0]["session_id"] = "owner"
    state.write_text(json.dumps(doc))
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(prompt("hi"))  # its message is not written yet

    def sleep(seconds: float) -> None:
        raise AssertionError("waited for another session's transcript")

    code, _ = stop(tmp_path, transcript, None, sleep, "5000")  # the Stop's session is "s"
    assert code == "allow"
    assert json.loads(state.read_text()) == doc
