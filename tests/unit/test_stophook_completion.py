"""The completion rule over transcripts in Claude Code's real shape, and what the model is told.

Claude Code writes one JSONL line per content block; the blocks of one API message share
``message.id``; tool results are user lines between messages; a turn starts at a user prompt
or a ``Stop hook feedback`` line. The generated transcripts have exactly that shape, and the
rule is checked against a forward reading of the same turns.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import SLOW_MACHINE_CHECKS
from forgeflare.stophook import (
    SIGNALS,
    FinalMessage,
    Mode,
    completion_hint,
    continued,
    final_message,
    find_signal,
    judged_text,
    run_stop_hook,
    start_loop,
    state_path,
)

TAG = "<loop-done>COMPLETE</loop-done>"
# (text block, whether it carries the tag by the rule)
TEXTS = [
    (f"All tests pass.\n{TAG}", True),
    (TAG, True),
    ("Summary: fixed two tests.", False),
    (f"```\n{TAG}\n```", False),
    (f"I will say `{TAG}` when done.", False),
    ("Still working on it.", False),
]


@dataclass
class Message:
    blocks: list[dict[str, object]]  # in order; tool_use blocks get their results after
    tagged: bool = False  # one of its text blocks carries the tag by the rule

    def texts(self) -> list[str]:
        return [str(b["text"]) for b in self.blocks if b["type"] == "text"]


def text_block(index: int, serial: int) -> dict[str, object]:
    # A unique last line keeps every text block distinct (as real ones practically are).
    return {"type": "text", "text": f"{TEXTS[index][0]}\n\n(block {serial})"}


block_kinds = st.sampled_from(["text", "text", "thinking", "tool_use"])


@st.composite
def turn(draw: st.DrawFn, serial: list[int]) -> list[Message]:
    messages = []
    for _ in range(draw(st.integers(1, 3))):
        blocks: list[dict[str, object]] = []
        tagged = False
        for kind in draw(st.lists(block_kinds, min_size=1, max_size=4)):
            serial[0] += 1
            if kind == "text":
                index = draw(st.integers(0, len(TEXTS) - 1))
                tagged = tagged or TEXTS[index][1]
                blocks.append(text_block(index, serial[0]))
            elif kind == "thinking":
                blocks.append({"type": "thinking", "thinking": f"maybe {TAG}", "signature": "s"})
            else:
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": f"toolu_{serial[0]}",
                        "name": "Bash",
                        "input": {"command": f"echo '{TAG}'"},
                    }
                )
        messages.append(Message(blocks, tagged))
    return messages


@st.composite
def transcripts(draw: st.DrawFn) -> list[list[Message]]:
    serial = [0]
    return [draw(turn(serial)) for _ in range(draw(st.integers(1, 3)))]


def lines_of(turns: list[list[Message]]) -> tuple[list[str], list[int], int]:
    """The JSONL lines, the final message's text lines, and where the last turn starts."""
    out: list[str] = []
    final_text_lines: list[int] = []
    last_turn_start = 0
    n = 0
    for t, messages in enumerate(turns):
        last_turn_start = len(out)
        opener = "Fix the tests" if t == 0 else f"Stop hook feedback:\n[ITERATION {t + 1}/9] {TAG}"
        out.append(json.dumps({"type": "user", "message": {"role": "user", "content": opener}}))
        out.append(json.dumps({"type": "attachment", "attachment": {"type": "skill_listing"}}))
        for m, message in enumerate(messages):
            n += 1
            last = t == len(turns) - 1 and m == len(messages) - 1
            results = []
            for block in message.blocks:
                msg = {"id": f"msg_{n}", "role": "assistant", "content": [block]}
                line = {"type": "assistant", "isSidechain": False, "message": msg}
                if last and block["type"] == "text":
                    final_text_lines.append(len(out))
                out.append(json.dumps(line))
                if block["type"] == "tool_use":
                    results.append(
                        {"type": "tool_result", "tool_use_id": block["id"], "content": TAG}
                    )
            if results:
                user = {"role": "user", "content": results}
                out.append(json.dumps({"type": "user", "message": user}))
        if t == len(turns) - 1:
            # A subagent's line after everything: never the main conversation.
            side = {
                "id": "msg_side",
                "role": "assistant",
                "content": [{"type": "text", "text": TAG}],
            }
            out.append(json.dumps({"type": "assistant", "isSidechain": True, "message": side}))
    return out, final_text_lines, last_turn_start


def final_texts(turns: list[list[Message]]) -> list[str]:
    return turns[-1][-1].texts()


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[*SLOW_MACHINE_CHECKS, HealthCheck.function_scoped_fixture],
)
@given(transcripts())
def test_final_message_is_the_last_turns_last_message_all_text_blocks(
    tmp_path: Path, turns: list[list[Message]]
) -> None:
    lines, _, _ = lines_of(turns)
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    texts = final_texts(turns)
    n = sum(len(t) for t in turns)
    final = final_message(path)
    assert final is not None
    assert final[:3] == (f"msg_{n}", "\n".join(texts), (texts or [""])[-1])


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[*SLOW_MACHINE_CHECKS, HealthCheck.function_scoped_fixture],
)
@given(transcripts(), st.data())
def test_the_rule_holds_also_when_the_transcript_lags(
    tmp_path: Path, turns: list[list[Message]], data: st.DataObject
) -> None:
    lines, text_lines, last_turn_start = lines_of(turns)
    # Claude Code may run the hook before the file has the end of the turn: cut it anywhere
    # after the start of the last turn.
    cut = data.draw(st.integers(last_turn_start + 1, len(lines)))
    path = tmp_path / "t.jsonl"
    path.write_text("".join(line + "\n" for line in lines[:cut]), encoding="utf-8")
    texts = final_texts(turns)
    sent = texts[-1] if texts else ""  # Claude Code's last_assistant_message

    judged = judged_text(final_message(path), sent)

    assert judged is not None
    complete = not text_lines or text_lines[-1] < cut
    if complete:
        # Everything of the final message is there: all its text blocks count, nothing else.
        assert judged == "\n".join(texts)
        assert (find_signal(judged, Mode.LOOP) is not None) == turns[-1][-1].tagged
    else:
        assert judged == sent  # lagging: decide on what Claude Code sent


def test_two_text_blocks_tag_in_the_first() -> None:
    final = FinalMessage(
        "m", f"All tests pass.\n{TAG}\nSummary: fixed two tests.", "Summary: fixed two tests."
    )
    judged = judged_text(final, "Summary: fixed two tests.")
    assert judged is not None
    assert find_signal(judged, Mode.LOOP) == TAG


@pytest.mark.parametrize(
    ("final", "sent", "judged"),
    [
        (None, None, None),
        (None, "sent", "sent"),
        (FinalMessage("m", "a\nb", "b"), None, "a\nb"),  # no field (older Claude Code)
        (FinalMessage("m", "a\nb", "b"), "b", "a\nb"),
        (FinalMessage("m", "a\nb", "b"), "  b\n", "a\nb"),  # whitespace does not matter
        (FinalMessage("m", "old", "old"), "new", "new"),  # the transcript lags
        (FinalMessage("m", "", ""), "", ""),  # a final message without text
        (FinalMessage("m", "earlier text", "earlier text"), "", ""),
    ],
)
def test_judged_text_table(
    final: FinalMessage | None, sent: str | None, judged: str | None
) -> None:
    assert judged_text(final, sent) == judged


@pytest.mark.parametrize("mode", list(Mode))
def test_hint_names_every_tag_and_the_rule_and_never_completes(mode: Mode) -> None:
    hint = completion_hint(mode)
    for tag in SIGNALS[mode]:
        assert tag in hint
    assert "on its own line, outside code, in the final message of your turn" in hint
    assert hint.count(". ") <= 2  # one or two sentences
    assert find_signal(hint, mode) is None  # quoting the hint back does not end the loop


def test_turn_without_an_assistant_message_yet_is_none(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    entries = [
        {"type": "user", "message": {"role": "user", "content": "go"}},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant",
                                          "content": [{"type": "text", "text": TAG}]}},
        {"type": "user", "message": {"role": "user", "content": "Stop hook feedback:\nx"}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    assert final_message(path) is None
    assert judged_text(final_message(path), "Working.") == "Working."


# --- the hook applies the rule ------------------------------------------------------------------


def hook(project: Path, **payload: object) -> tuple[int, str]:
    body = {"hook_event_name": "Stop", "cwd": str(project), **payload}
    out = run_stop_hook(json.dumps(body), environ={}, cwd=project, now=datetime.now(UTC))
    assert out.exit_code == 0  # a block is said on stdout, never by the exit status
    return ("block" if continued(out.stdout) is not None else "allow"), out.stderr


def loop_state(project: Path, session_id: str = "") -> Path:
    start_loop(project, mode=Mode.LOOP, max_iterations=5, prompt="p", now=datetime.now(UTC))
    path = state_path(project)
    if session_id:
        doc = json.loads(path.read_text())
        doc["stack"][0]["session_id"] = session_id
        path.write_text(json.dumps(doc))
    return path


def cc_transcript(path: Path, *texts: str, msg_id: str = "msg_1") -> Path:
    lines = [{"type": "user", "message": {"role": "user", "content": "go"}}]
    for t in texts:
        msg = {"id": msg_id, "role": "assistant", "content": [{"type": "text", "text": t}]}
        lines.append({"type": "assistant", "message": msg})
    path.write_text("".join(json.dumps(e) + "\n" for e in lines), encoding="utf-8")
    return path


def test_hook_completes_on_a_tag_in_an_earlier_text_block(tmp_path: Path) -> None:
    state = loop_state(tmp_path)
    t = cc_transcript(tmp_path / "t.jsonl", f"All tests pass.\n{TAG}", "Summary: fixed two tests.")
    code, err = hook(
        tmp_path, transcript_path=str(t), last_assistant_message="Summary: fixed two tests."
    )
    assert code == "allow", err
    assert "loop complete" in err
    assert not state.exists()


def test_hook_decides_on_last_assistant_message_when_the_transcript_lags(tmp_path: Path) -> None:
    state = loop_state(tmp_path)
    # The file still ends with an older message that had the tag; Claude Code sent a newer one.
    t = cc_transcript(tmp_path / "t.jsonl", f"Done.\n{TAG}")
    assert hook(tmp_path, transcript_path=str(t), last_assistant_message="Not yet.")[0] == "block"
    assert json.loads(state.read_text())["stack"][0]["iter"] == 2
    # ... and the other way round: the new message has the tag, the file does not yet.
    t = cc_transcript(tmp_path / "t.jsonl", "Working.")
    done = hook(tmp_path, transcript_path=str(t), last_assistant_message=f"Done.\n{TAG}")
    assert done[0] == "allow"
    assert not state.exists()


def test_hook_uses_last_assistant_message_when_the_transcript_is_unreadable(tmp_path: Path) -> None:
    loop_state(tmp_path)
    missing = str(tmp_path / "missing.jsonl")
    assert hook(tmp_path, transcript_path=missing, last_assistant_message="Working.")[0] == "block"


def test_hook_passes_another_sessions_stop_without_writing(tmp_path: Path) -> None:
    state = loop_state(tmp_path, session_id="A")
    before = state.read_bytes()
    code, err = hook(tmp_path, session_id="B", last_assistant_message="hi")
    assert (code, err) == ("allow", "")
    assert state.read_bytes() == before
    code, _ = hook(tmp_path, session_id="A", last_assistant_message="working")
    assert code == "block"
