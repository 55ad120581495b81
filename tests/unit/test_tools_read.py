"""The Read tool: verbatim text, its 1 MB limit, and the errors the model sees."""

from __future__ import annotations

from pathlib import Path

import pytest

from forgeflare.agent.tools import MAX_READ_BYTES
from tool_support import run_tool


def read(cwd: Path, file_path: object) -> tuple[str, bool]:
    out = run_tool("Read", {"file_path": file_path}, cwd=cwd)
    return out.content, out.is_error


def test_reads_text_verbatim(tmp_path: Path) -> None:
    text = "line one\r\n\ttabbed ünïcode ✓\nno newline at end"
    (tmp_path / "a.txt").write_bytes(text.encode())
    assert read(tmp_path, "a.txt") == (text, False)


def test_relative_to_cwd_and_absolute(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f.py").write_text("x = 1\n")
    assert read(tmp_path, "sub/f.py") == ("x = 1\n", False)
    assert read(tmp_path / "sub", str(tmp_path / "sub" / "f.py")) == ("x = 1\n", False)


def test_missing_file(tmp_path: Path) -> None:
    content, is_error = read(tmp_path, "nope.txt")
    assert is_error
    assert content == "file not found: nope.txt"


def test_directory(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    content, is_error = read(tmp_path, "d")
    assert is_error
    assert "is a directory" in content
    assert "Glob" in content


def test_binary_with_nul(tmp_path: Path) -> None:
    (tmp_path / "b.bin").write_bytes(b"\x7fELF\x00\x01\x02")
    content, is_error = read(tmp_path, "b.bin")
    assert is_error
    assert "binary" in content


def test_undecodable(tmp_path: Path) -> None:
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    content, is_error = read(tmp_path, "latin1.txt")
    assert is_error
    assert "not UTF-8" in content
    assert "offset 3" in content


def test_size_limit(tmp_path: Path) -> None:
    (tmp_path / "edge.txt").write_bytes(b"a" * MAX_READ_BYTES)
    content, is_error = read(tmp_path, "edge.txt")
    assert not is_error
    assert len(content) == MAX_READ_BYTES
    (tmp_path / "big.txt").write_bytes(b"a" * (MAX_READ_BYTES + 1))
    content, is_error = read(tmp_path, "big.txt")
    assert is_error
    assert "1 MB" in content
    assert "1,048,577 bytes" in content


def test_empty_file(tmp_path: Path) -> None:
    (tmp_path / "empty").touch()
    assert read(tmp_path, "empty") == ("(empty file: empty)", False)


def test_os_error_is_one_clear_line(tmp_path: Path) -> None:
    # A path through a regular file fails for every user, root included (CI runs as root,
    # where a chmod-0 file would still be readable).
    (tmp_path / "plain").write_text("x")
    content, is_error = read(tmp_path, "plain/inner.txt")
    assert is_error
    assert content == "cannot read plain/inner.txt: Not a directory"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({}, "Read: missing required field 'file_path'"),
        ({"file_path": None}, "Read: missing required field 'file_path'"),
        ({"file_path": 7}, "Read: 'file_path' must be a string, got int"),
        ({"file_path": ""}, "Read: 'file_path' is empty"),
    ],
)
def test_bad_input(tmp_path: Path, data: dict[str, object], expected: str) -> None:
    out = run_tool("Read", data, cwd=tmp_path)
    assert out.is_error
    assert out.content == expected
