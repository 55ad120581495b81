"""``forgeflare pause``, ``unpause`` and ``hint`` in this process, on a loop that holds its
project's lock and has opened its run (real files, a real flock), and on a project without one."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from forgeflare import ConfigError, cli
from forgeflare.supervisor.run._handcli import _dir_words, _text_or_file
from forgeflare.supervisor.run._preflight import project_lock
from loop_support import loop_setup, opened_book


def _main(*args: str) -> int:
    with pytest.raises(SystemExit) as done:
        cli.main(list(args))
    code = done.value.code
    return code if isinstance(code, int) else 0


@pytest.fixture
def running(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A project whose loop runs: its lock held, its run folder opened; (project, run folder)."""
    project = tmp_path / "project"
    book = opened_book(loop_setup(project))
    book.save()  # run.json, as a loop writes it when it opens its run
    with project_lock(project):
        yield project, book.store.dir


def test_pause_then_unpause_the_running_loop(
    running: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    project, run_dir = running
    assert _main("pause", "--dir", str(project)) == 0
    assert (run_dir / "pause").is_file()
    assert f"`forgeflare unpause --dir {project}` goes on" in capsys.readouterr().out
    assert _main("unpause", "--dir", str(project)) == 0
    assert not (run_dir / "pause").exists()
    assert capsys.readouterr().out == f"the loop in {project} goes on\n"
    assert _main("unpause", "--dir", str(project)) == 0
    assert capsys.readouterr().out == f"the loop in {project} was not paused\n"


def test_hints_wait_in_the_run_folder_and_are_counted(
    running: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project, run_dir = running
    assert _main("hint", "use the v2 API", "--dir", str(project)) == 0
    assert capsys.readouterr().out.endswith("starts with your hint\n")
    words = tmp_path / "hint.txt"
    words.write_text("and keep the tests fast\n")
    assert _main("hint", "--file", str(words), "--dir", str(project)) == 0
    assert "(2 hints wait there)" in capsys.readouterr().out
    kept = (run_dir / "hint.md").read_text()
    assert kept.index("use the v2 API") < kept.index("keep the tests fast")


def test_without_a_loop_pause_says_so_and_a_hint_is_not_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _main("pause", "--dir", str(tmp_path)) == 0
    assert capsys.readouterr().out == f"no loop is running in {tmp_path}: nothing to pause\n"
    assert _main("hint", "x", "--dir", str(tmp_path)) == 1
    assert "the hint was not kept" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["pause", "unpause", "hint"])
def test_a_missing_project_is_a_usage_error(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    words = ["x"] if command == "hint" else []
    assert _main(command, *words, "--dir", str(tmp_path / "gone")) == 2
    assert f"--dir {tmp_path / 'gone'}: not a directory" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "file_text", "said"),
    [
        (None, None, 'give "TEXT" or --file FILE (one of them)'),
        ("a", "b", 'give "TEXT" or --file FILE (one of them)'),
        (" \n", None, "the text is empty"),
        (None, "\n\n", "the text is empty"),
        ("go on", None, None),
        (None, "from the file\n", None),
    ],
)
def test_text_or_file(
    tmp_path: Path, text: str | None, file_text: str | None, said: str | None
) -> None:
    file = None
    if file_text is not None:
        file = tmp_path / "words"
        file.write_text(file_text)
    if said is None:
        assert _text_or_file("hint", text, file) == (text or file_text)
    else:
        with pytest.raises(ConfigError, match=re.escape(f"hint: {said}")):
            _text_or_file("hint", text, file)


def test_the_suggested_command_names_a_directory_only_when_it_is_not_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _dir_words(Path(".")) == ""
    assert _dir_words(tmp_path) == ""
    assert _dir_words(tmp_path / "elsewhere") == f" --dir {tmp_path / 'elsewhere'}"
