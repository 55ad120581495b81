"""Reading the last assistant text of a transcript backwards from its end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forgeflare.stophook import TranscriptError, last_assistant_text


def assistant(*blocks: dict[str, object], msg_id: str = "m1") -> dict[str, object]:
    return {
        "type": "assistant",
        "message": {"id": msg_id, "role": "assistant", "content": list(blocks)},
    }


def text(t: str) -> dict[str, object]:
    return {"type": "text", "text": t}


def tool_use(name: str = "Bash") -> dict[str, object]:
    return {"type": "tool_use", "id": "t1", "name": name, "input": {}}


def tool_result() -> dict[str, object]:
    return {
        "type": "user",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]},
    }


def write(path: Path, entries: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


def test_last_text_skips_tool_only_messages(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.jsonl",
        [
            {"type": "user", "message": {"role": "user", "content": "go"}},
            assistant(text("old"), msg_id="m0"),
            assistant(text("Done.\n<loop-done>COMPLETE</loop-done>"), msg_id="m1"),
            assistant(tool_use(), msg_id="m2"),
            tool_result(),
            assistant(tool_use("Read"), msg_id="m3"),
            tool_result(),
        ],
    )
    assert last_assistant_text(path) == "Done.\n<loop-done>COMPLETE</loop-done>"


def test_blocks_of_one_message_on_several_lines_are_joined(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.jsonl",
        [
            assistant(text("earlier"), msg_id="m0"),
            assistant(text("first part"), msg_id="m1"),
            assistant(text("second part"), msg_id="m1"),
            assistant(tool_use(), msg_id="m1"),
        ],
    )
    assert last_assistant_text(path) == "first part\nsecond part"


def test_plain_messages_torn_lines_and_sidechains(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [
        json.dumps({"role": "assistant", "content": "plain string content"}),
        json.dumps({**assistant(text("subagent talk")), "isSidechain": True}),
        '{"type": "assistant", "message": {"content": [{"type": "te',  # torn last line
    ]
    path.write_text("\n".join(lines), encoding="utf-8")
    assert last_assistant_text(path) == "plain string content"


def test_no_assistant_text_is_empty(tmp_path: Path) -> None:
    assert last_assistant_text(write(tmp_path / "t.jsonl", [tool_result()])) == ""
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert last_assistant_text(tmp_path / "empty.jsonl") == ""


def test_missing_transcript_is_a_transcript_error(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError, match="cannot read transcript"):
        last_assistant_text(tmp_path / "missing.jsonl")


def test_huge_line_after_the_answer_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from forgeflare.stophook import _tail

    monkeypatch.setattr(_tail, "MAX_LINE_BYTES", 1000)
    path = tmp_path / "t.jsonl"
    big = json.dumps({"type": "user", "message": {"content": "assistant " * 500}})
    write(path, [assistant(text("answer"))])
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(big + "\n")
    assert last_assistant_text(path) == "answer"


def test_the_final_message_stops_at_the_prompt_that_started_its_turn(tmp_path: Path) -> None:
    from forgeflare.stophook import final_message

    prompt = {"type": "user", "message": {"role": "user", "content": "go on"}}
    calling = assistant(tool_use(), msg_id="m1")
    calling["message"]["stop_reason"] = "tool_use"  # type: ignore[index]
    entries = [assistant(text("earlier"), msg_id="m1"), prompt, calling, tool_result()]
    final = final_message(write(tmp_path / "t.jsonl", entries))
    assert final is not None
    # the same id before the prompt is another turn's (and the message called a tool)
    assert (final.message_id, final.text, final.stop_reason) == ("m1", "", "tool_use")
