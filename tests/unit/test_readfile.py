"""The one bounded file read: regular files only, no symlink out of the folder, a size cap."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from forgeflare.disk import DamagedFileError, require_utf8
from forgeflare.disk._readfile import FileRefused, read_limited, read_limited_text
from forgeflare.supervisor.agents import read_windows
from forgeflare.supervisor.records import read_answer


def test_a_regular_file_and_a_link_inside_its_folder_are_read(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello")
    (tmp_path / "b.txt").symlink_to("a.txt")
    assert read_limited(tmp_path / "a.txt") == b"hello"
    assert read_limited_text(tmp_path / "b.txt") == "hello"
    with pytest.raises(FileNotFoundError):
        read_limited(tmp_path / "missing")


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda p: os.mkfifo(p), "not a regular file (a FIFO)"),
        (lambda p: p.symlink_to("/dev/zero"), "a symlink out of"),
        (lambda p: p.mkdir(), "not a regular file (a directory)"),
        (lambda p: p.write_bytes(b"x" * 1025), "larger than 0.000976562 MB"),
    ],
    ids=["fifo", "dev-zero-link", "directory", "too-big"],
)
def test_refused_in_one_line_without_blocking(tmp_path: Path, make: object, why: str) -> None:
    path = tmp_path / "answer.md"
    make(path)  # type: ignore[operator]
    with pytest.raises(FileRefused) as refused:
        read_limited(path, limit=1024)
    assert why in str(refused.value.strerror)
    assert "\n" not in str(refused.value.strerror)


def test_a_device_is_refused_from_its_stat(tmp_path: Path) -> None:
    with pytest.raises(FileRefused, match="a character device"):
        read_limited(Path("/dev/zero"), folder=Path("/dev"))


def test_a_link_out_of_the_given_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.toml"
    outside.write_text("x = 1")
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "sub" / "plan.md").symlink_to(outside)
    with pytest.raises(FileRefused, match="a symlink out of"):
        read_limited(project / "sub" / "plan.md", folder=project)
    (project / "plan.md").write_text("- [ ] one")
    (project / "sub" / "inner.md").symlink_to(project / "plan.md")
    assert read_limited_text(project / "sub" / "inner.md", folder=project) == "- [ ] one"


def test_a_fifo_answer_reads_as_no_answer(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "answer.md")
    assert read_answer(tmp_path) is None  # returns at once: nobody writes to the FIFO


def _store(path: Path, **windows: str) -> Path:
    rows = {key: {"until": until, "reason": "usage limit"} for key, until in windows.items()}
    path.write_text(json.dumps({"windows": rows}))
    return path


def test_a_window_over_31_days_ahead_is_ignored_with_one_line(tmp_path: Path) -> None:
    now = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
    store = _store(
        tmp_path / "windows.json",
        **{
            "codex@https://api.openai.com/v1#a1": "2026-12-01T00:00:00Z",
            "claude@https://api.anthropic.com#a1": "9999-12-31T23:59:59-05:00",
            "claude:work@https://api.anthropic.com#b2": "2027-01-15T00:00:00Z",
        },
    )
    said: list[str] = []
    windows = read_windows(store, now=now, warn=said.append)
    assert [key.agent.label for key in windows] == ["codex"]
    assert len(said) == 2
    assert all("is over 31 days ahead" in line and "\n" not in line for line in said)
    read_windows(store, now=now, warn=said.append)
    assert len(said) == 2  # once per process


def test_a_fifo_window_store_is_ignored_with_one_line(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "windows.json")
    said: list[str] = []
    assert read_windows(tmp_path / "windows.json", warn=said.append) == {}
    assert said == [f"{tmp_path / 'windows.json'}: ignored: not a regular file (a FIFO)"]


def test_text_that_is_not_utf8_is_one_line() -> None:
    assert require_utf8("ok ✓", "answer") == "ok ✓"
    text = os.fsdecode(b"\xed\xa0\x80")  # what argv holds for printf '\355\240\200'
    with pytest.raises(DamagedFileError, match=r"^answer: not UTF-8 text \(character 1\)$"):
        require_utf8(text, "answer")
