"""The Grep tool, with ripgrep and with the Python fallback: same output shape and limits."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from forgeflare.agent.tools import MAX_GREP_MATCHES, ToolError, ToolOutput, find_rg, search
from project_support import write_files
from tool_support import run_tool

RG = find_rg()

Search = Callable[..., ToolOutput]


@pytest.fixture(params=["rg", "python"])
def grep(request: pytest.FixtureRequest) -> Search:
    if request.param == "rg" and RG is None:
        pytest.fail("ripgrep must be installed (the ripgrep wheel is a dependency)")
    rg = RG if request.param == "rg" else None

    def run(pattern: str, cwd: Path, **options: object) -> ToolOutput:
        return search(pattern, cwd=cwd, rg=rg, **options)  # type: ignore[arg-type]

    return run


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    files = {
        "a.py": "import os\ndef main():\n    return os.getcwd()\n",
        "b.md": "# Main title\nnothing here\n",
        "src/c.py": "MAIN = 1\nmain()\n",
        "src/d.rs": "fn main() {}\n",
        ".hidden/e.py": "def main(): pass\n",
        ".secret.py": "main\n",
        "blob.bin": b"main\x00\x01\x02",
    }
    return write_files(tmp_path, files)


def test_path_line_text_shape_sorted(grep: Search, tree: Path) -> None:
    out = grep("main", tree, case_sensitive=True)
    assert out == ToolOutput("a.py:2:def main():\nsrc/c.py:2:main()\nsrc/d.rs:1:fn main() {}")


def test_smart_case_by_default(grep: Search, tree: Path) -> None:
    lower = grep("main", tree).content.splitlines()
    assert "b.md:1:# Main title" in lower
    assert "src/c.py:1:MAIN = 1" in lower
    assert grep("Main", tree).content == "b.md:1:# Main title"


def test_forced_case(grep: Search, tree: Path) -> None:
    assert "src/c.py:1:MAIN = 1" in grep("Main", tree, case_sensitive=False).content
    assert grep("MAIN", tree, case_sensitive=True).content == "src/c.py:1:MAIN = 1"


def test_path_directory_and_file(grep: Search, tree: Path) -> None:
    assert grep("main", tree, path="src", case_sensitive=True).content == (
        "src/c.py:2:main()\nsrc/d.rs:1:fn main() {}"
    )
    assert grep("fn", tree, path="src/d.rs").content == "src/d.rs:1:fn main() {}"


def test_file_type(grep: Search, tree: Path) -> None:
    assert grep("main", tree, file_type="rust").content == "src/d.rs:1:fn main() {}"
    assert grep("main", tree, file_type="py", case_sensitive=True).content == (
        "a.py:2:def main():\nsrc/c.py:2:main()"
    )


def test_no_match(grep: Search, tree: Path) -> None:
    assert grep("zebra", tree) == ToolOutput("No matches for 'zebra' in .")


def test_file_type_with_no_such_files_is_no_match(grep: Search, tree: Path) -> None:
    # ripgrep exits 2 ("No files were searched") when a known type selects nothing.
    assert grep("main", tree, file_type="go") == ToolOutput("No matches for 'main' in .")


def test_pattern_starting_with_dash(grep: Search, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a --flag here\n")
    assert grep("--flag", tmp_path).content == "f.txt:1:a --flag here"


def test_limit_says_how_many(grep: Search, tmp_path: Path) -> None:
    (tmp_path / "many.txt").write_text("".join(f"hit {i}\n" for i in range(73)))
    lines = grep("hit", tmp_path).content.splitlines()
    assert len(lines) == MAX_GREP_MATCHES + 1
    assert lines[0] == "many.txt:1:hit 0"
    assert lines[MAX_GREP_MATCHES - 1] == f"many.txt:{MAX_GREP_MATCHES}:hit 49"
    assert lines[-1].startswith("... showing 50 of 73 matching lines")


def test_long_lines_are_clipped(grep: Search, tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("x" * 5000 + "needle\n")
    out = grep("x", tmp_path).content
    assert len(out) < 600
    assert out.endswith("[... line truncated]")


def test_missing_path(grep: Search, tmp_path: Path) -> None:
    with pytest.raises(ToolError, match=r"^Grep: path not found: nowhere$"):
        grep("x", tmp_path, path="nowhere")


def test_invalid_regex(grep: Search, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("(\n")
    with pytest.raises(ToolError, match="Grep: "):
        grep("(unclosed", tmp_path)


def test_backends_agree(tree: Path) -> None:
    assert RG is not None
    for pattern, options in [
        ("main", {}),
        ("^def", {}),
        ("o", {"path": "src"}),
        ("MAIN|main", {"case_sensitive": True, "file_type": "py"}),
    ]:
        with_rg = search(pattern, cwd=tree, rg=RG, **options)  # type: ignore[arg-type]
        fallback = search(pattern, cwd=tree, rg=None, **options)  # type: ignore[arg-type]
        assert with_rg == fallback, pattern


def test_dispatch_uses_rg_and_reports_errors(tree: Path) -> None:
    assert run_tool("Grep", {"pattern": "fn main"}, cwd=tree) == ToolOutput(
        "src/d.rs:1:fn main() {}"
    )
    bad = run_tool("Grep", {"pattern": "(unclosed"}, cwd=tree)
    assert bad.is_error
    assert "unclosed" in bad.content
    assert run_tool("Grep", {"pattern": ""}, cwd=tree).is_error
    unknown = run_tool("Grep", {"pattern": "x", "file_type": "nosuchtype"}, cwd=tree)
    assert unknown == ToolOutput("Grep: unrecognized file type: nosuchtype", True)


def test_rg_found_beside_the_interpreter_without_path(monkeypatch: pytest.MonkeyPatch) -> None:
    beside = Path(sys.executable).parent / "rg"
    if not beside.is_file():
        pytest.skip("this interpreter has no rg beside it")
    monkeypatch.setenv("PATH", os.defpath if not os.defpath else "/nonexistent")
    find_rg.cache_clear()
    try:
        assert find_rg() == str(beside)
    finally:
        find_rg.cache_clear()


def test_symlink_loops_are_not_followed_and_the_search_is_bounded(
    grep: Search, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("needle\n")
    (tmp_path / "sub" / "loop1").symlink_to("..")
    (tmp_path / "sub" / "loop2").symlink_to("../sub")
    assert grep("needle", tmp_path).content == "sub/a.txt:1:needle"
    # Both searches stop at their time bound (a setting, here already spent) with one line.
    monkeypatch.setattr("forgeflare.agent.tools._grep.GREP_TIMEOUT", -1.0)
    with pytest.raises(ToolError, match=r"took longer than -1 s and was stopped"):
        grep("needle", tmp_path)
