"""Session capture: the JSONL chain, prompt.txt, context.md, and survival of a SIGKILL."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import forgeflare
from forgeflare.agent import (
    Message,
    SessionWriter,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    key_actions,
    new_session_id,
    read_transcript,
    render_context,
    transcript_timestamp,
)

SESSION_ID = re.compile(r"\d{4}-\d{2}-\d{2}-[0-9a-f-]{36}")
TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")


def tool_turn() -> tuple[Message, Message]:
    call = Message(
        role="assistant",
        content=[
            TextBlock(text="Reading it."),
            ToolUseBlock(id="toolu_1", name="Read", input={"file_path": "src/main.py"}),
        ],
    )
    result = Message(
        role="user", content=[ToolResultBlock(tool_use_id="toolu_1", content="print('hi')")]
    )
    return call, result


def lines(writer: SessionWriter) -> list[dict[str, Any]]:
    return [json.loads(line) for line in writer.transcript.read_text().splitlines()]


def test_session_id_format() -> None:
    assert SESSION_ID.fullmatch(new_session_id())
    assert new_session_id() != new_session_id()
    when = datetime(2026, 2, 10, 23, 30, tzinfo=timezone(timedelta(hours=-5)))
    assert new_session_id(when).startswith("2026-02-11-")  # the UTC date
    assert new_session_id(datetime(2026, 2, 10, 23, 30)).startswith("2026-02-10-")


def test_timestamp_format() -> None:
    assert transcript_timestamp(datetime(2026, 2, 10, 23, 31, 0, 123456, tzinfo=UTC)) == (
        "2026-02-10T23:31:00.123Z"
    )
    assert TIMESTAMP.fullmatch(transcript_timestamp())


def test_directory_and_lazy_creation(tmp_path: Path) -> None:
    writer = SessionWriter(tmp_path)
    assert SESSION_ID.fullmatch(writer.session_id)
    assert writer.directory == tmp_path / ".entire" / "metadata" / writer.session_id
    assert not writer.directory.exists()
    writer.append(Message.user_text("hi"))
    assert writer.transcript == writer.directory / "full.jsonl"
    assert writer.transcript.exists()


def test_lines_chain_and_fields(tmp_path: Path) -> None:
    writer = SessionWriter(
        tmp_path, session_id="2026-02-10-" + "0" * 8 + "-1111-2222-3333-" + "4" * 12
    )
    call, result = tool_turn()
    writer.append(Message.user_text("read main.py"))
    writer.append(call, usage=Usage(input_tokens=1200, output_tokens=40))
    writer.append(result)
    records = lines(writer)
    assert [r["type"] for r in records] == ["user", "assistant", "user"]
    assert records[0]["parentUuid"] is None
    assert [r["parentUuid"] for r in records[1:]] == [r["uuid"] for r in records[:-1]]
    assert len({r["uuid"] for r in records}) == 3
    for record in records:
        assert list(record) == [
            "type",
            "sessionId",
            "uuid",
            "parentUuid",
            "timestamp",
            "cwd",
            "version",
            "message",
        ]
        assert record["sessionId"] == writer.session_id
        assert TIMESTAMP.fullmatch(record["timestamp"])
        assert record["cwd"] == str(tmp_path)
        assert record["version"] == forgeflare.__version__
    assert records[0]["message"] == {
        "role": "user",
        "content": [{"type": "text", "text": "read main.py"}],
    }
    assert records[1]["message"]["usage"]["input_tokens"] == 1200
    assert records[1]["message"]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "Read",
        "input": {"file_path": "src/main.py"},
    }
    assert Message.model_validate(records[2]["message"]) == result
    assert "usage" not in records[2]["message"]


def test_chain_continues_across_writers_only_within_one(tmp_path: Path) -> None:
    first, second = SessionWriter(tmp_path), SessionWriter(tmp_path)
    first.append(Message.user_text("a"))
    second.append(Message.user_text("b"))
    assert first.directory != second.directory
    assert lines(second)[0]["parentUuid"] is None


def test_concurrent_appends_keep_a_linear_chain(tmp_path: Path) -> None:
    writer = SessionWriter(tmp_path)

    def work(n: int) -> None:
        for i in range(25):
            writer.append(Message.user_text(f"{n}-{i}"))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    records = lines(writer)
    assert len(records) == 100
    assert [r["parentUuid"] for r in records[1:]] == [r["uuid"] for r in records[:-1]]


def test_unicode_and_newlines_stay_on_one_line(tmp_path: Path) -> None:
    writer = SessionWriter(tmp_path)
    text = "ligne 1\nligne 2 ✓ \u2028 \u2029 \x85 \x1c done"
    writer.append(Message.user_text(text))
    raw = writer.transcript.read_text(encoding="utf-8")
    assert raw.count("\n") == 1
    assert len(raw.splitlines()) == 1
    assert "✓" in raw
    assert lines(writer)[0]["message"]["content"][0]["text"] == text


def test_prompt_first_call_wins(tmp_path: Path) -> None:
    writer = SessionWriter(tmp_path)
    writer.write_prompt("fix the tests\n")
    writer.write_prompt("second prompt")
    assert (writer.directory / "prompt.txt").read_text() == "fix the tests\n"


def test_other_entire_state_untouched(tmp_path: Path) -> None:
    settings_file = tmp_path / ".entire" / "settings.json"
    settings_file.parent.mkdir()
    settings_file.write_text('{"keep": true}')
    writer = SessionWriter(tmp_path)
    writer.append(Message.user_text("x"))
    writer.write_prompt("x")
    writer.write_context(model="m", exit_reason="end_turn", messages=[])
    assert settings_file.read_text() == '{"keep": true}'


def test_context_md(tmp_path: Path) -> None:
    writer = SessionWriter(tmp_path)
    call, result = tool_turn()
    bash = Message(
        role="assistant",
        content=[
            ToolUseBlock(
                id="t2",
                name="Bash",
                input={"command": "pytest -q\necho done", "description": "run"},
            ),
            ToolUseBlock(
                id="t3", name="Edit", input={"file_path": "a.py", "old_str": "", "new_str": "x"}
            ),
            ToolUseBlock(id="t4", name="Glob", input=None),
        ],
    )
    messages = [Message.user_text("go"), call, result, bash]
    writer.write_context(model="claude-opus-4-6", exit_reason="end_turn", messages=messages)
    text = (writer.directory / "context.md").read_text()
    assert text.startswith(f"# Session {writer.session_id}\n")
    assert "- **Model**: claude-opus-4-6" in text
    assert "- **Exit reason**: end_turn" in text
    assert re.search(r"- \*\*Started\*\*: " + TIMESTAMP.pattern, text)
    assert "- **Tool calls**: 4" in text
    actions = text.split("## Key Actions\n\n")[1].strip().splitlines()
    assert actions == [
        "- **Read**: src/main.py",
        "- **Bash**: pytest -q …",
        "- **Edit**: a.py",
        "- **Glob**: (no input)",
    ]


def test_context_without_tool_calls(tmp_path: Path) -> None:
    writer = SessionWriter(tmp_path)
    writer.write_context(model="m", exit_reason=None, messages=[Message.user_text("hi")])
    text = (writer.directory / "context.md").read_text()
    assert "- **Exit reason**: none" in text
    assert text.rstrip().endswith("(no tool calls)")


_VALUES = st.one_of(st.text(max_size=300), st.integers(), st.booleans(), st.lists(st.integers()))


@settings(max_examples=40)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["Read", "Bash", "X"]),
            st.dictionaries(st.text(max_size=5), _VALUES, max_size=3),
        ),
        max_size=8,
    )
)
def test_key_actions_one_line_each(calls: list[tuple[str, dict[str, Any]]]) -> None:
    message = Message(
        role="assistant",
        content=[ToolUseBlock(id=f"t{i}", name=n, input=d) for i, (n, d) in enumerate(calls)],
    )
    actions = key_actions([message])
    assert len(actions) == len(calls)
    for action, (name, _) in zip(actions, calls, strict=True):
        assert action.startswith(f"- **{name}**: ")
        assert len(action.splitlines()) == 1
        assert len(action) < 260
    text = render_context(
        session_id="s",
        model="m",
        started="a",
        ended="b",
        exit_reason=None,
        cwd="/",
        version="v",
        messages=[message],
    )
    assert text.count("\n- **") >= len(calls)


CHILD = """
import sys
from pathlib import Path
from forgeflare.agent import Message, SessionWriter
from forgeflare.agent import ToolResultBlock, ToolUseBlock

SESSION = "2026-01-01-00000000-0000-4000-8000-000000000000"
writer = SessionWriter(Path(sys.argv[1]), session_id=SESSION)
writer.write_prompt("loop forever")
n = 0
while True:
    n += 1
    writer.append(Message.user_text(f"turn {n}"))
    writer.append(Message(role="assistant", content=[
        ToolUseBlock(id=f"t{n}", name="Bash", input={"command": "yes | head"})]))
    # Large lines make a torn write more likely, if writes could tear.
    writer.append(Message(role="user", content=[
        ToolResultBlock(tool_use_id=f"t{n}", content="y\\n" * (20000 + n))]))
"""


def test_transcript_of_a_killed_process_parses(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path)])
    transcript = (
        tmp_path / ".entire/metadata/2026-01-01-00000000-0000-4000-8000-000000000000/full.jsonl"
    )
    try:
        end = time.monotonic() + 30
        while time.monotonic() < end:  # bounded poll: wait until the session is well under way
            if transcript.exists() and transcript.stat().st_size > 2_000_000:
                break
            assert child.poll() is None, "the writer died on its own"
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == -signal.SIGKILL
    raw = transcript.read_bytes()
    complete, _, torn = raw.rpartition(b"\n")
    # Every complete line parses on its own, and the chain is unbroken up to the kill.
    records = [json.loads(line) for line in complete.decode().split("\n")]
    assert len(records) >= 10
    assert records[0]["parentUuid"] is None
    assert [r["parentUuid"] for r in records[1:]] == [r["uuid"] for r in records[:-1]]
    for record in records:
        Message.model_validate(record["message"])
    # At most the line being written when the kill landed is cut short (see _session's
    # docstring); read_transcript gives exactly the complete records.
    assert read_transcript(transcript) == records
    if torn:
        assert torn.startswith(b'{"type":')


def test_read_transcript_drops_only_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "full.jsonl"
    path.write_text('{"a":1}\n{"b":2}\n{"c":')
    assert read_transcript(path) == [{"a": 1}, {"b": 2}]
    path.write_text('{"a":1}\n')
    assert read_transcript(path) == [{"a": 1}]
    path.write_text("")
    assert read_transcript(path) == []
