"""The Grep tool: ripgrep when it can be found, a Python search with the same output otherwise.

``rg`` is looked up next to the running interpreter first (the ``ripgrep`` wheel, pinned to
14.1.0 because 15.x has no Linux wheel, installs it into the virtual environment's ``bin``,
which need not be on ``PATH`` when forgeflare is started as ``.venv/bin/forgeflare``), then on
``PATH``. Without it the fallback walks the tree itself: same ``path:line:text`` lines, same
limits, Python ``re`` syntax, hidden files skipped, but ``.gitignore`` is not read.

Case: ``case_sensitive`` true or false forces it; left out, the search is *smart case*, as
in ripgrep: case-insensitive when the pattern has no capital letter, sensitive otherwise.
Results are sorted by path, so the same tree always gives the same answer.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from forgeflare.agent.tools._inputs import GrepInput, parse_input
from forgeflare.agent.tools._limits import GREP_TIMEOUT, MAX_GREP_MATCHES
from forgeflare.agent.tools._types import (
    ToolError,
    ToolOutput,
    hard_link_refused,
    resolve_path,
)

__all__ = ["find_rg", "grep_tool", "search"]

_MAX_LINE = 500  # characters of one matching line (minified files have huge ones)
_COUNT_CAP = 100_000  # stop counting matches here: "more than N" is enough to narrow down
_SNIFF_BYTES = 8192

# Fallback file types: ripgrep's names for the usual languages, plus any bare extension.
_TYPE_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "py": (".py", ".pyi"),
    "python": (".py", ".pyi"),
    "rust": (".rs",),
    "rs": (".rs",),
    "go": (".go",),
    "js": (".js", ".jsx", ".mjs", ".cjs"),
    "ts": (".ts", ".tsx", ".mts", ".cts"),
    "typescript": (".ts", ".tsx", ".mts", ".cts"),
    "c": (".c", ".h"),
    "cpp": (".cpp", ".cc", ".cxx", ".hpp", ".hh", ".h"),
    "java": (".java",),
    "sh": (".sh", ".bash", ".zsh"),
    "md": (".md", ".markdown"),
    "markdown": (".md", ".markdown"),
    "json": (".json",),
    "toml": (".toml",),
    "yaml": (".yaml", ".yml"),
    "html": (".html", ".htm"),
    "css": (".css", ".scss"),
    "txt": (".txt",),
    "ruby": (".rb",),
    "rb": (".rb",),
}


@functools.cache
def find_rg() -> str | None:
    """The ``rg`` executable to use: beside ``sys.executable`` first, then on ``PATH``."""
    # Not resolved: in a venv sys.executable is a symlink, and rg sits beside the link.
    beside = Path(sys.executable).parent / ("rg.exe" if os.name == "nt" else "rg")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("rg")


def grep_tool(data: dict[str, Any], *, cwd: Path) -> ToolOutput:
    """The Grep tool on a tool_use input."""
    args = parse_input(GrepInput, "Grep", data)
    return search(
        args.pattern,
        cwd=cwd,
        path=args.path,
        file_type=args.file_type,
        case_sensitive=args.case_sensitive,
        rg=find_rg(),
    )


def search(
    pattern: str,
    *,
    cwd: Path,
    path: str | None = None,
    file_type: str | None = None,
    case_sensitive: bool | None = None,
    rg: str | None,
) -> ToolOutput:
    """Lines matching ``pattern`` as ``path:line:text``; ``rg=None`` uses the fallback."""
    if not pattern:
        raise ToolError("Grep: 'pattern' is empty")
    if path is not None and not resolve_path(cwd, path).exists():
        raise ToolError(f"Grep: path not found: {path}")
    query = GrepInput.model_construct(
        pattern=pattern, path=path, file_type=file_type, case_sensitive=case_sensitive
    )
    lines, total = _rg_lines(rg, query, cwd) if rg is not None else _python_lines(query, cwd)
    where = path or "."
    if not lines:
        return ToolOutput(f"No matches for {pattern!r} in {where}")
    if total > len(lines):
        more = f"more than {_COUNT_CAP:,}" if total > _COUNT_CAP else f"{total:,}"
        lines.append(
            f"... showing {len(lines)} of {more} matching lines; narrow the pattern, "
            "the path or the file_type"
        )
    return ToolOutput("\n".join(lines))


def _clip(line: str) -> str:
    line = line.rstrip("\r\n")
    return line if len(line) <= _MAX_LINE else line[:_MAX_LINE] + " [... line truncated]"


def _rg_lines(rg: str, query: GrepInput, cwd: Path) -> tuple[list[str], int]:
    pattern, path, file_type = query.pattern, query.path, query.file_type
    case = {True: "--case-sensitive", False: "--ignore-case", None: "--smart-case"}
    args = [
        rg,
        "--line-number",
        "--with-filename",
        "--no-heading",
        "--color=never",
        "--sort=path",
        "--no-config",
        # Unreadable files are skipped without a word; pattern errors are still reported.
        "--no-messages",
        # NUL after the file name: the name is known exactly (hard links are filtered).
        "--null",
        case[query.case_sensitive],
    ]
    if file_type:
        # A --type filter lets hidden files back in (ripgrep whitelists what it selects);
        # skipping them keeps -t consistent with plain searches.
        args += ["--type", file_type, "--glob", "!.*"]
    # -e and --: a pattern or path starting with '-' is never taken for an option.
    args += ["-e", pattern, "--"]
    if path is not None:
        args.append(path)
    try:
        proc = subprocess.Popen(
            args,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as exc:
        raise ToolError(f"Grep: could not start ripgrep ({rg}): {exc.strerror or exc}") from exc
    assert proc.stdout is not None
    assert proc.stderr is not None
    lines: list[str] = []
    total = 0
    refused: dict[bytes, bool] = {}
    with proc:
        # Killed after the timeout by a timer: reading below blocks until rg closes stdout.
        timer = _Timer(proc, GREP_TIMEOUT)
        try:
            for out in proc.stdout:
                name, _, rest = out.partition(b"\0")
                if name not in refused:
                    refused[name] = hard_link_refused(cwd, cwd / os.fsdecode(name))
                if refused[name]:
                    continue
                raw = name + b":" + rest
                total += 1
                if len(lines) < MAX_GREP_MATCHES:
                    lines.append(_clip(raw.decode("utf-8", "replace")))
                if total > _COUNT_CAP:
                    proc.kill()
                    break
            stderr = proc.stderr.read().decode("utf-8", "replace").strip()
        finally:
            timer.cancel()
            proc.kill()
    if timer.fired:
        raise ToolError(f"Grep: search took longer than {GREP_TIMEOUT:g} s and was stopped")
    if proc.returncode == 2 and not lines and stderr:
        # With --no-messages, an exit 2 with nothing on stderr means only that no file was
        # searched (e.g. a --type with no such files) or unreadable files were skipped: that is
        # "no matches", not a failure. Real errors (a bad regex) still print.
        detail = " ".join(line.strip() for line in stderr.splitlines())
        raise ToolError(f"Grep: {detail.removeprefix('rg: ')[:500]}")
    return lines, total


class _Timer:
    """Kills a process that outlives ``seconds``, and remembers having done so."""

    def __init__(self, proc: subprocess.Popen[bytes], seconds: float) -> None:
        self.fired = False

        def fire() -> None:
            self.fired = True
            proc.kill()

        self._timer = threading.Timer(seconds, fire)
        self._timer.daemon = True
        self._timer.start()

    def cancel(self) -> None:
        self._timer.cancel()


def _python_lines(query: GrepInput, cwd: Path) -> tuple[list[str], int]:
    pattern, path, file_type = query.pattern, query.path, query.file_type
    case_sensitive = query.case_sensitive
    if case_sensitive is None:  # smart case, as ripgrep: a capital (not an escape) => sensitive
        case_sensitive = any(ch.isupper() for ch in re.sub(r"\\.", "", pattern))
    try:
        regex = re.compile(pattern, 0 if case_sensitive else re.IGNORECASE)
    except re.error as exc:
        raise ToolError(f"Grep: invalid regular expression {pattern!r}: {exc}") from None
    extensions: tuple[str, ...] | None = None
    if file_type:
        key = file_type.lower().lstrip(".")
        extensions = _TYPE_EXTENSIONS.get(key, (f".{key}",))
    lines: list[str] = []
    total = 0
    deadline = time.monotonic() + GREP_TIMEOUT  # read at call time: tests set it small
    for shown, full in _walk(cwd, path):
        if time.monotonic() > deadline:
            raise ToolError(f"Grep: search took longer than {GREP_TIMEOUT:g} s and was stopped")
        if extensions is not None and not full.endswith(extensions):
            continue
        if hard_link_refused(cwd, full):
            continue
        for number, text in _matching_lines(full, regex):
            total += 1
            if len(lines) < MAX_GREP_MATCHES:
                lines.append(f"{shown}:{number}:{_clip(text)}")
            if total > _COUNT_CAP:
                return lines, total
    return lines, total


def _walk(cwd: Path, path: str | None) -> Iterator[tuple[str, str]]:
    """(name as ripgrep would print it, full path) of each file to search, sorted."""
    root = str(resolve_path(cwd, path)) if path is not None else str(cwd)
    if os.path.isfile(root):
        yield (path or root), root
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        rel_dir = os.path.relpath(dirpath, root)
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            rel = name if rel_dir == "." else os.path.join(rel_dir, name)
            shown = rel if path is None else os.path.join(path, rel)
            yield shown, os.path.join(dirpath, name)


def _matching_lines(full: str, regex: re.Pattern[str]) -> Iterator[tuple[int, str]]:
    try:
        with open(full, "rb") as fh:
            if b"\x00" in fh.read(_SNIFF_BYTES):
                return  # binary: ripgrep skips these by default too
            fh.seek(0)
            for number, raw in enumerate(fh, start=1):
                text = raw.decode("utf-8", "replace")
                if regex.search(text.rstrip("\r\n")):
                    yield number, text
    except OSError:
        return  # unreadable files are skipped, as ripgrep does (it warns on stderr)
