"""The project directory from ``--dir`` or the older positional spelling (0.3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from forgeflare._cliopts import project_dir
from forgeflare._errors import ConfigError


def test_dir_is_the_project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert project_dir(tmp_path, None, "report") == tmp_path
    assert capsys.readouterr().err == ""


def test_the_positional_spelling_works_and_says_the_new_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert project_dir(Path("."), tmp_path, "report") == tmp_path
    assert capsys.readouterr().err == (
        "note: `forgeflare report DIR` is now spelled `forgeflare report --dir DIR`\n"
    )


@pytest.mark.parametrize(
    ("option", "positional", "said"),
    [
        ("elsewhere", "here", "report: give the project directory once, as --dir PATH"),
        ("missing", None, "missing: no such directory"),
        ("file.txt", None, "file.txt: not a directory"),
    ],
    ids=["both", "missing", "a-file"],
)
def test_a_bad_project_directory_is_a_usage_error(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    option: str,
    positional: str | None,
    said: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "here").mkdir()
    (tmp_path / "file.txt").write_text("x\n")
    with pytest.raises(ConfigError) as info:
        project_dir(Path(option), None if positional is None else Path(positional), "report")
    assert str(info.value) == said
    assert info.value.exit_code == 2
