"""File helpers: the atomic write, and the in-place rewrite a full disk falls back to."""

from __future__ import annotations

from pathlib import Path

import pytest

from forgeflare._fsutil import atomic_write_text, overwrite_in_place


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
