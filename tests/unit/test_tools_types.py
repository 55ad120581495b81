"""Path confinement of the file tools: inside the project or an allowed directory after
resolving links, and no project file with another hard link; on real files in tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from forgeflare.agent.tools import (
    ALLOW_PATHS_ENV,
    ToolError,
    allowed_roots,
    confine,
    extra_links,
    hard_link_refused,
    link_refused,
    resolve_path,
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(ALLOW_PATHS_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("s\n")
    return root


@pytest.mark.parametrize(
    ("inside_project_only", "extra", "refused"),
    [(True, 0, False), (True, 1, True), (True, 5, True), (False, 0, False), (False, 3, False)],
)
def test_a_linked_file_is_refused_only_in_the_project(
    inside_project_only: bool, extra: int, refused: bool
) -> None:
    assert link_refused(inside_project_only, extra) is refused


@pytest.mark.parametrize("raw", ["src/a.py", "./src/../src/a.py", "src", ".", "new/file.txt"])
def test_paths_inside_the_project_resolve(project: Path, raw: str) -> None:
    assert resolve_path(project, raw) == project / raw


@pytest.mark.parametrize("raw", ["../outside/secret", "..", "/etc/passwd", "~/x", "link/secret"])
def test_paths_out_of_the_project_are_refused(project: Path, raw: str) -> None:
    (project / "link").symlink_to(project.parent / "outside")
    with pytest.raises(ToolError, match="is outside the project") as info:
        resolve_path(project, raw)
    assert str(info.value).startswith(raw)
    assert ALLOW_PATHS_ENV in str(info.value)


def test_a_nul_byte_is_refused(project: Path) -> None:
    with pytest.raises(ToolError, match="NUL byte"):
        resolve_path(project, "src/a.py\x00.txt")


def test_an_allowed_directory_is_usable_and_its_links_too(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = project.parent / "outside"
    monkeypatch.setenv(ALLOW_PATHS_ENV, f" {outside} {os.pathsep}{os.pathsep}")
    assert allowed_roots(project) == [project.resolve(), outside.resolve()]
    assert resolve_path(project, str(outside / "secret")) == outside / "secret"
    os.link(outside / "secret", outside / "second-name")
    assert not hard_link_refused(project, outside / "secret")  # the user named that folder


def test_a_project_file_with_another_name_is_refused(project: Path) -> None:
    target = project / "src" / "a.py"
    assert extra_links(target) == 0
    assert not hard_link_refused(project, target)
    os.link(target, project.parent / "outside" / "other-name")
    assert extra_links(target) == 1
    assert hard_link_refused(project, target)
    with pytest.raises(ToolError, match=r"src/a.py has 2 hard links"):
        confine(project, target, "src/a.py")


def test_extra_links_of_what_is_not_a_regular_file(project: Path) -> None:
    assert extra_links(project / "src") == 0  # a directory's links are its subfolders
    assert extra_links(project / "missing") == 0
    assert extra_links("bad\x00path") == 0
