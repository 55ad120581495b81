"""One diff of the work since a base: the stop-hook's ``diff_since`` (blocking) is the
collection the loop's reviewer runs (``forgeflare.security._reviewdiff.collect_diff``,
async), on a real repository: commits, uncommitted changes and new files all show. (The loop
asks for no new
files: its checkpoint has committed them before the reviewer looks.)"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import trio

from forgeflare.security import BoxSettings, collect_diff, gate_box
from forgeflare.stophook import diff_since
from project_support import git, new_repo

_OFF = BoxSettings(sandbox="off")
_SRC = Path(__file__).resolve().parents[2] / "src" / "forgeflare"


def _worked_repo(tmp_path: Path) -> tuple[Path, str]:
    """A repository with a commit since ``base``, an uncommitted change and a new file."""
    repo = new_repo(tmp_path / "repo")
    (repo / "kept.txt").write_text("one\n")
    git(repo, "add", "kept.txt")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "kept.txt").write_text("one\ncommitted\n")
    git(repo, "commit", "-qam", "work")
    (repo / "kept.txt").write_text("one\ncommitted\nuncommitted\n")
    (repo / "new.txt").write_text("brand new\n")
    return repo, base


def test_the_stop_hook_and_the_loop_see_the_same_diff(tmp_path: Path) -> None:
    repo, base = _worked_repo(tmp_path)

    async def loop_diff() -> tuple[str, str]:
        box = await gate_box(repo, _OFF, os.environ)
        found = await collect_diff(repo, base, box=box, env=os.environ, budget=60_000, new_files=50)
        return found.diff, found.stat

    hook = diff_since(repo, base, 60_000, os.environ, _OFF)
    assert hook == trio.run(loop_diff)
    diff, stat = hook
    assert "+committed" in diff
    assert "+uncommitted" in diff
    assert "+brand new" in diff
    assert "kept.txt" in stat
    assert "new.txt" in stat


def test_outside_git_the_diff_is_empty(tmp_path: Path) -> None:
    assert diff_since(tmp_path, "HEAD", 60_000, os.environ, _OFF) == ("", "")


def test_one_diff_since_in_the_source() -> None:
    """The loop once had a second, host-side ``diff_since`` of its own (unused)."""
    defined = [
        path.relative_to(_SRC).as_posix()
        for path in sorted(_SRC.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "diff_since"
    ]
    assert defined == ["stophook/_check.py"]
