"""The loop's preflight (``supervisor/run/_preflight.py``): the project's loop lock and who
holds it, and the checks that refuse, in one line before anything starts, what would make every
iteration fail."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from forgeflare import ConfigError
from forgeflare.supervisor.run._preflight import (
    LOCK_RELPATH,
    _check_hooks_modules,
    _check_prompt,
    lock_holder,
    project_lock,
)
from project_support import write_files


def test_no_lock_file_and_a_lock_nobody_holds_have_no_holder(tmp_path: Path) -> None:
    assert lock_holder(tmp_path) is None
    write_files(tmp_path, {str(LOCK_RELPATH): "12345"})  # left behind by a finished loop
    assert lock_holder(tmp_path) is None


def test_the_lock_names_the_pid_of_the_loop_holding_it(tmp_path: Path) -> None:
    with project_lock(tmp_path):
        assert lock_holder(tmp_path) == os.getpid()
    assert lock_holder(tmp_path) is None  # released, the file kept
    assert (tmp_path / LOCK_RELPATH).is_file()


def test_a_lock_taken_before_its_pid_is_written_is_held_by_an_unknown_pid(tmp_path: Path) -> None:
    (tmp_path / LOCK_RELPATH).parent.mkdir()
    fd = os.open(tmp_path / LOCK_RELPATH, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert lock_holder(tmp_path) == -1
    finally:
        os.close(fd)


def test_a_second_loop_in_the_project_is_refused_naming_the_first(tmp_path: Path) -> None:
    with project_lock(tmp_path), pytest.raises(ConfigError) as refused:  # noqa: SIM117
        with project_lock(tmp_path):
            pytest.fail("two loops held one project's lock")
    assert f"another forgeflare loop is running in {tmp_path} (pid {os.getpid()})" in str(
        refused.value
    )


def test_a_lock_path_that_is_not_a_folder_is_one_line(tmp_path: Path) -> None:
    write_files(tmp_path, {".fresher": "a file where the folder goes"})
    with pytest.raises(ConfigError, match=r"\.fresher"), project_lock(tmp_path):
        pytest.fail("the lock was taken")


def test_a_prompt_that_cannot_be_read_is_refused_and_a_missing_one_is_not(tmp_path: Path) -> None:
    _check_prompt(tmp_path / "PROMPT_build.md")  # not there: the loop says so later
    write_files(tmp_path, {"PROMPT_build.md": b"\xff\xfe not text"})
    with pytest.raises(ConfigError, match=r"PROMPT_build\.md"):
        _check_prompt(tmp_path / "PROMPT_build.md")


def test_hooks_modules_load_in_a_child_and_a_broken_one_is_refused(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "good_hooks.py": (
                "from forgeflare.hooks import hook\n\n"
                "@hook('PreToolUse')\n"
                "def allow(tool, input):\n"
                "    return None\n"
            ),
            "broken_hooks.py": "raise RuntimeError('this module is broken')\n",
        },
    )
    env = {"PATH": os.environ.get("PATH", "")}
    _check_hooks_modules(tmp_path, ["good_hooks"], env, timeout=120)
    with pytest.raises(ConfigError, match="every iteration would fail"):
        _check_hooks_modules(tmp_path, ["good_hooks", "broken_hooks"], env, timeout=120)
