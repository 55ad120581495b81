"""The Edit tool: exact match, replace_all, create, append, limits and messages."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from forgeflare.agent.tools import MAX_EDIT_BYTES, MAX_READ_BYTES, ToolOutput
from tool_support import run_tool


def edit(cwd: Path, file_path: str, old: str, new: str, **extra: Any) -> ToolOutput:
    data = {"file_path": file_path, "old_str": old, "new_str": new, **extra}
    return run_tool("Edit", data, cwd=cwd)


@pytest.mark.parametrize(
    ("before", "path", "old", "new", "said", "after"),
    [
        (
            "a = 1\nb = 2\nc = 3\n",
            "f.py",
            "b = 2",
            "b = 20",
            "Replaced 1 occurrence in f.py (at line 2)",
            "a = 1\nb = 20\nc = 3\n",
        ),
        (
            None,
            "new/deep/file.md",
            "",
            "# Title\n",
            "Created new/deep/file.md (8 bytes)",
            "# Title\n",
        ),
        ("one\n", "log.txt", "", "two\n", "Appended 4 bytes to log.txt", "one\ntwo\n"),
    ],
    ids=["replaces-a-unique-match", "empty-old-creates-with-parents", "empty-old-appends"],
)
def test_an_edit_says_what_it_did(
    tmp_path: Path, before: str | None, path: str, old: str, new: str, said: str, after: str
) -> None:
    if before is not None:
        (tmp_path / path).write_text(before)
    assert edit(tmp_path, path, old, new) == ToolOutput(said)
    assert (tmp_path / path).read_text() == after


def test_not_found(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("a = 1\n")
    out = edit(tmp_path, "f.py", "a  = 1", "a = 2")
    assert out.is_error
    assert "old_str not found in f.py" in out.content
    assert (tmp_path / "f.py").read_text() == "a = 1\n"


def test_several_matches_hint_at_replace_all(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x x x")
    out = edit(tmp_path, "f.txt", "x", "y")
    assert out.is_error
    assert "occurs 3 times" in out.content
    assert "replace_all" in out.content
    assert (tmp_path / "f.txt").read_text() == "x x x"


@pytest.mark.parametrize("flag", [True, "true"])
def test_replace_all(tmp_path: Path, flag: object) -> None:
    (tmp_path / "f.txt").write_text("head\nx x\nx\n")
    out = edit(tmp_path, "f.txt", "x", "yy", replace_all=flag)
    assert out == ToolOutput("Replaced 3 occurrences in f.txt (first at line 2)")
    assert (tmp_path / "f.txt").read_text() == "head\nyy yy\nyy\n"


def test_replace_all_false_on_unique(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("one two")
    assert not edit(tmp_path, "f.txt", "one", "1", replace_all=False).is_error
    assert (tmp_path / "f.txt").read_text() == "1 two"


def test_empty_old_and_new_creates_an_empty_file(tmp_path: Path) -> None:
    assert not edit(tmp_path, "empty.txt", "", "").is_error
    assert (tmp_path / "empty.txt").read_bytes() == b""


def test_missing_file_with_old_str(tmp_path: Path) -> None:
    out = edit(tmp_path, "nope.txt", "a", "b")
    assert out.is_error
    assert "file not found: nope.txt" in out.content
    assert "empty old_str" in out.content
    assert not (tmp_path / "nope.txt").exists()


def test_nothing_to_change(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("same")
    assert "identical" in edit(tmp_path, "f.txt", "same", "same").content
    assert "both empty" in edit(tmp_path, "f.txt", "", "").content


def test_directory(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    out = edit(tmp_path, "d", "", "x")
    assert out.is_error
    assert "directory" in out.content


@pytest.mark.parametrize("key", ["old_str", "new_str"])
def test_edit_size_limit(tmp_path: Path, key: str) -> None:
    big = "é" * (MAX_EDIT_BYTES // 2 + 1)  # two bytes each: the limit counts UTF-8 bytes
    (tmp_path / "f.txt").write_text("small")
    data = {"old_str": "small", "new_str": "tiny", key: big}
    out = edit(tmp_path, "f.txt", data["old_str"], data["new_str"])
    assert out.is_error
    assert f"{key} is 102,402 bytes, over the 100 KB limit" in out.content
    assert (tmp_path / "f.txt").read_text() == "small"


def test_edit_size_at_the_limit(tmp_path: Path) -> None:
    out = edit(tmp_path, "f.txt", "", "a" * MAX_EDIT_BYTES)
    assert not out.is_error
    assert (tmp_path / "f.txt").stat().st_size == MAX_EDIT_BYTES


def test_file_over_read_limit(tmp_path: Path) -> None:
    (tmp_path / "huge.txt").write_bytes(b"a" * (MAX_READ_BYTES + 1))
    out = edit(tmp_path, "huge.txt", "a", "b", replace_all=True)
    assert out.is_error
    assert "1 MB" in out.content


def test_binary_and_undecodable(tmp_path: Path) -> None:
    (tmp_path / "b.bin").write_bytes(b"ab\x00cd")
    assert "binary" in edit(tmp_path, "b.bin", "ab", "x").content
    (tmp_path / "l.txt").write_bytes(b"caf\xe9")
    assert "not UTF-8" in edit(tmp_path, "l.txt", "caf", "x").content


def test_crlf_and_mode_survive(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_bytes(b"#!/bin/sh\r\necho old\r\n")
    script.chmod(0o755)
    assert not edit(tmp_path, "run.sh", "old", "new").is_error
    assert script.read_bytes() == b"#!/bin/sh\r\necho new\r\n"
    assert script.stat().st_mode & 0o777 == 0o755


def test_shorter_content_truncates(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a long line of text\n")
    edit(tmp_path, "f.txt", "a long line of text", "x")
    assert (tmp_path / "f.txt").read_text() == "x\n"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"file_path": "f", "new_str": "x"}, "Edit: missing required field 'old_str'"),
        ({"file_path": "f", "old_str": "x"}, "Edit: missing required field 'new_str'"),
        ({"old_str": "", "new_str": "x"}, "Edit: missing required field 'file_path'"),
        (
            {"file_path": "f", "old_str": "", "new_str": "x", "replace_all": 3},
            "Edit: 'replace_all' must be true or false, got 3",
        ),
    ],
)
def test_bad_input(tmp_path: Path, data: dict[str, Any], expected: str) -> None:
    out = run_tool("Edit", data, cwd=tmp_path)
    assert out == ToolOutput(expected, True)


_TEXT = st.text(alphabet="ab\n ", max_size=40)


@settings(max_examples=40, deadline=None)
@given(content=_TEXT, old=st.text(alphabet="ab\n ", min_size=1, max_size=3), new=_TEXT)
def test_replace_all_matches_str_replace(content: str, old: str, new: str) -> None:
    assume(old in content and old != new)
    with tempfile.TemporaryDirectory() as raw:
        root = Path(raw)
        (root / "f").write_text(content, newline="")
        out = edit(root, "f", old, new, replace_all=True)
        assert not out.is_error
        assert (root / "f").read_bytes().decode() == content.replace(old, new)
        single = edit(root, "g", "", content)
        assert not single.is_error
        result = edit(root, "g", old, new)
        if content.count(old) == 1:
            assert (root / "g").read_bytes().decode() == content.replace(old, new)
        else:
            assert result.is_error
            assert (root / "g").read_bytes().decode() == content
