"""The Glob tool: sorted matches, the 1000-entry limit, no shell involved."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgeflare.agent.tools import MAX_GLOB_ENTRIES, glob_files, glob_walk
from tool_support import run_tool


def glob(cwd: Path, pattern: str, path: str | None = None) -> tuple[str, bool]:
    data = {"pattern": pattern} if path is None else {"pattern": pattern, "path": path}
    out = run_tool("Glob", data, cwd=cwd)
    return out.content, out.is_error


def make_tree(root: Path) -> None:
    for name in ["b.py", "a.py", "c.txt", "src/z.py", "src/m.py", "src/deep/x.py", ".hidden.py"]:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    (root / ".git").mkdir()
    (root / ".git" / "config.py").write_text("")


def test_sorted_recursive(tmp_path: Path) -> None:
    make_tree(tmp_path)
    content, is_error = glob(tmp_path, "**/*.py")
    assert not is_error
    assert content.splitlines() == ["a.py", "b.py", "src/deep/x.py", "src/m.py", "src/z.py"]


def test_hidden_only_when_named(tmp_path: Path) -> None:
    make_tree(tmp_path)
    assert glob(tmp_path, ".*.py") == (".hidden.py", False)
    assert glob(tmp_path, ".git/*") == (".git/config.py", False)


def test_directories_marked(tmp_path: Path) -> None:
    make_tree(tmp_path)
    assert glob(tmp_path, "*")[0].splitlines() == ["a.py", "b.py", "c.txt", "src/"]


def test_path_argument_keeps_paths_usable_from_cwd(tmp_path: Path) -> None:
    make_tree(tmp_path)
    assert glob(tmp_path, "*.py", "src")[0].splitlines() == ["src/m.py", "src/z.py"]
    read = run_tool("Read", {"file_path": "src/m.py"}, cwd=tmp_path)
    assert not read.is_error


def test_path_outside_cwd_is_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "f.txt").write_text("")
    (tmp_path / "work").mkdir()
    content, error = glob(tmp_path / "work", "*.txt", str(tmp_path / "other"))
    assert error  # outside the project: refused unless allowed
    assert "outside the project" in content
    monkeypatch.setenv("FORGEFLARE_ALLOW_PATHS", str(tmp_path / "other"))
    content, _ = glob(tmp_path / "work", "*.txt", str(tmp_path / "other"))
    assert content == str(tmp_path / "other" / "f.txt")


def test_limit_says_how_many_were_cut(tmp_path: Path) -> None:
    for i in range(MAX_GLOB_ENTRIES + 7):
        (tmp_path / f"f{i:05d}.txt").write_text("")
    lines = glob(tmp_path, "*.txt")[0].splitlines()
    assert len(lines) == MAX_GLOB_ENTRIES + 1
    assert lines[0] == "f00000.txt"
    assert lines[MAX_GLOB_ENTRIES - 1] == f"f{MAX_GLOB_ENTRIES - 1:05d}.txt"
    assert lines[-1].startswith("... 7 more not shown (1000 of 1007 entries)")


def test_no_match(tmp_path: Path) -> None:
    assert glob(tmp_path, "*.rs") == ("No files match '*.rs' in .", False)


def test_errors(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    assert glob(tmp_path, "*", "missing") == ("Glob: directory not found: missing", True)
    assert glob(tmp_path, "*", "f")[1]
    assert glob(tmp_path, "  ")[1]
    out = run_tool("Glob", {}, cwd=tmp_path)
    assert out.is_error
    assert "pattern" in out.content


def test_no_injection_through_the_pattern(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("")
    for pattern in [
        "$(touch pwned)*",
        "`touch pwned`",
        "*; touch pwned",
        "* && touch pwned",
        "$(rm a.txt)",
        "a.txt | touch pwned",
    ]:
        content, is_error = glob(tmp_path, pattern)
        assert not is_error
        assert content.startswith("No files match")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


@settings(max_examples=30, deadline=None)
@given(st.sets(st.text(alphabet="abcXYZ019_-", min_size=1, max_size=8), max_size=15))
def test_output_is_sorted_and_complete(names: set[str]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as raw:
        root = Path(raw)
        for name in names:
            (root / f"{name}.dat").write_text("")
        content, _ = glob(root, "*.dat")
        lines = [] if content.startswith("No files") else content.splitlines()
        assert lines == sorted(f"{name}.dat" for name in names)


def _loops(tmp_path: Path) -> Path:
    (tmp_path / "sub" / "deep").mkdir(parents=True)
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "sub" / "b.txt").write_text("b")
    (tmp_path / "sub" / "deep" / "c.txt").write_text("c")
    (tmp_path / "sub" / "loop1").symlink_to("..")
    (tmp_path / "sub" / "deep" / "loop2").symlink_to("../..")
    (tmp_path / "docs").symlink_to("sub/deep")  # an alias of a directory walked anyway
    return tmp_path


def test_symlink_loops_are_walked_once(tmp_path: Path) -> None:
    # glob.glob followed sub/loop1 -> .. for ever (memory growing, no Ctrl+C); each real
    # directory is now entered once, through whichever name the walk meets first.
    root = _loops(tmp_path)
    out = glob_files({"pattern": "**/*.txt"}, cwd=root)
    lines = out.content.splitlines()
    assert {"a.txt", "sub/b.txt"} <= set(lines)
    assert len(lines) == 3  # c.txt once: under sub/deep or under the docs alias
    assert lines[-1] in {"sub/deep/c.txt", "docs/c.txt"}


def test_a_search_past_its_bounds_says_it_stopped(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"d{i}").mkdir()
        (tmp_path / f"d{i}" / "x.txt").write_text("x")
    walk = glob_walk(str(tmp_path), ["**", "*.txt"], max_scan=10)
    assert walk.stopped == "looked at more than 10 entries"
    walk = glob_walk(str(tmp_path), ["**", "*.txt"], timeout=-1)
    assert walk.stopped == "took longer than -1 s"
    assert len(glob_walk(str(tmp_path), ["**", "*.txt"]).hits) == 30


def test_literal_and_trailing_double_star(tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "m.py").write_text("")
    assert glob_files({"pattern": "src/pkg/m.py"}, cwd=tmp_path).content == "src/pkg/m.py"
    assert glob_files({"pattern": "src/**"}, cwd=tmp_path).content.splitlines() == [
        "src/",
        "src/pkg/",
        "src/pkg/m.py",
    ]
    assert glob_files({"pattern": "src/*/"}, cwd=tmp_path).content == "src/pkg/"
