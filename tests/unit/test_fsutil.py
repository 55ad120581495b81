"""File helpers: the atomic write, and the in-place rewrite a full disk falls back to; files
written as files (no link followed, no FIFO or device), folders that stay in the project."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from forgeflare._errors import ConfigError
from forgeflare.disk import (
    append_line,
    atomic_write_text,
    check_project_folders,
    open_regular,
    overwrite_in_place,
)
from forgeflare.disk._readfile import file_kind


@pytest.mark.parametrize(
    ("old", "new", "written"),
    [
        (b"x" * 100, b"y" * 50, True),  # shorter: truncated to the new length
        (b"x" * 100, b"y" * 4000, True),  # longer, within the block the file holds
        (b"x" * 100, b"y" * 70_000, False),  # needs blocks the file does not hold
        (b"", b"y", False),  # an empty file holds no block
    ],
)
def test_overwrite_in_place_only_within_the_blocks_held(
    tmp_path: Path, old: bytes, new: bytes, written: bool
) -> None:
    path = tmp_path / "run.json"
    path.write_bytes(old)
    assert overwrite_in_place(path, new) is written
    assert path.read_bytes() == (new if written else old)


def test_overwrite_in_place_needs_an_existing_file(tmp_path: Path) -> None:
    assert overwrite_in_place(tmp_path / "missing", b"x") is False
    assert not (tmp_path / "missing").exists()


def test_atomic_write_failure_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    atomic_write_text(path, "old\n")
    (tmp_path / "run.json.tmp").mkdir()  # the temporary file cannot be made
    with pytest.raises(IsADirectoryError):
        atomic_write_text(path, "new\n")
    assert path.read_text() == "old\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A user's file outside the project, which nothing may write."""
    victim = tmp_path / "home" / ".bashrc"
    victim.parent.mkdir()
    victim.write_text("the user's own\n")
    return victim


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "p").mkdir()
    return tmp_path / "p"


def test_append_line_does_not_follow_a_link(project: Path, outside: Path) -> None:
    log = project / "loop.log"
    log.symlink_to(outside)
    with pytest.raises(OSError, match="symbolic link"):
        append_line(log, "planted\n")
    assert outside.read_text() == "the user's own\n"


def test_append_line_refuses_a_fifo_without_waiting(project: Path) -> None:
    fifo = project / "events.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="a FIFO, not a regular file"):
        append_line(fifo, "x\n")


def test_open_regular_refuses_a_device(project: Path) -> None:
    with pytest.raises(OSError, match="a character device, not a regular file"):
        open_regular(Path("/dev/null"), os.O_WRONLY)


def test_atomic_write_never_writes_through_a_planted_temporary_link(
    project: Path, outside: Path
) -> None:
    path = project / "convergence.json"
    (project / "convergence.json.tmp").symlink_to(outside)
    atomic_write_text(path, "{}\n")
    assert path.read_text() == "{}\n"
    assert outside.read_text() == "the user's own\n"


def test_atomic_write_replaces_a_link_rather_than_following_it(
    project: Path, outside: Path
) -> None:
    path = project / "run.json"
    path.symlink_to(outside)
    atomic_write_text(path, "{}\n")
    assert not path.is_symlink()
    assert outside.read_text() == "the user's own\n"


def test_overwrite_in_place_does_not_follow_a_link(project: Path, outside: Path) -> None:
    path = project / "run.json"
    path.symlink_to(outside)
    assert overwrite_in_place(path, b"x") is False
    assert outside.read_text() == "the user's own\n"


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        ({".fresher": "->outside"}, "a symbolic link leads outside the project"),
        ({".fresher/runs": "->outside"}, "a symbolic link leads outside the project"),
        ({".entire": "->outside/deeper"}, "a symbolic link leads outside the project"),
        ({"logs": "->..", ".fresher": "dir"}, None),  # logs is not written: not checked
        ({".fresher": "->inside"}, None),  # a link that stays in the project
        ({".fresher": "fifo"}, "a FIFO, not a directory"),
        ({".forgeflare": "file"}, "a regular file, not a directory"),
        ({}, None),  # nothing yet: made when first needed
    ],
)
def test_check_project_folders(
    tmp_path: Path, project: Path, layout: dict[str, str], message: str | None
) -> None:
    (tmp_path / "outside").mkdir()
    (project / "inside").mkdir()
    for rel, kind in layout.items():
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind.startswith("->"):
            target = kind[2:]
            path.symlink_to(tmp_path / target if target.startswith("outside") else project / target)
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "file":
            path.write_text("")
        else:
            path.mkdir()
    folders = [".fresher", ".fresher/runs", ".forgeflare", ".entire"]
    if message is None:
        check_project_folders(project, folders)
    else:
        with pytest.raises(ConfigError, match=message):
            check_project_folders(project, folders)


def test_a_folder_given_outside_the_project_is_not_checked(tmp_path: Path, project: Path) -> None:
    check_project_folders(project, [tmp_path / "records", "../elsewhere"])


@pytest.mark.parametrize(
    ("mode", "kind"),
    [
        (stat.S_IFREG, "a regular file"),
        (stat.S_IFDIR, "a directory"),
        (stat.S_IFLNK, "a symbolic link"),
        (stat.S_IFIFO, "a FIFO"),
        (stat.S_IFCHR, "a character device"),
        (stat.S_IFBLK, "a block device"),
        (stat.S_IFSOCK, "a socket"),
        (0, "a special file"),
    ],
)
def test_file_kind(mode: int, kind: str) -> None:
    assert file_kind(mode | 0o644) == kind
