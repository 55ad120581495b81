"""The Glob tool: file names matching a pattern, sorted, without any shell.

The pattern is matched by a walk of our own (``fnmatch`` per path segment, ``**`` spanning
directories, :func:`glob.glob`'s rules for hidden names), so nothing in it is ever executed:
``$(...)``, ``;`` and backticks are plain characters that match (or do not match) file names.

Why not :func:`glob.glob`: its ``**`` follows every symlink to a directory, so two loops
(``sub/loop1 -> ..``) make it walk for ever, with memory growing and no way to stop it. The walk
here enters a symlinked directory only when it has not been in that directory already, looks
at most :data:`MAX_GLOB_SCAN` entries and stops after :data:`GLOB_TIMEOUT` seconds, saying so.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forgeflare.agent.tools._inputs import GlobInput, parse_input
from forgeflare.agent.tools._limits import GLOB_TIMEOUT, MAX_GLOB_ENTRIES, MAX_GLOB_SCAN
from forgeflare.agent.tools._types import (
    ToolError,
    ToolOutput,
    allowed_roots,
    confine,
    resolve_path,
)

__all__ = ["glob_files", "glob_walk"]


@dataclass
class GlobWalk:
    """What :func:`glob_walk` found: full paths, and why it stopped early (``""``: it did not)."""

    hits: list[str] = field(default_factory=list)
    stopped: str = ""


def _segment(pat: str) -> re.Pattern[str] | None:
    """A compiled segment pattern; ``None`` for ``**``."""
    return None if pat == "**" else re.compile(fnmatch.translate(pat))


class _Automaton:
    """States over segment patterns: a state is how many segments are matched so far."""

    def __init__(self, pats: list[str]) -> None:
        self.n = len(pats)
        self.compiled = [_segment(p) for p in pats]
        self.hidden_ok = [p.startswith(".") for p in pats]

    def closure(self, states: frozenset[int]) -> frozenset[int]:
        """``states`` plus every state a run of ``**`` segments can skip to."""
        more = set(states)
        for i in sorted(states):
            j = i
            while j < self.n and self.compiled[j] is None:
                j += 1
                more.add(j)
        return frozenset(more)

    def step(self, states: frozenset[int], name: str) -> frozenset[int]:
        """The states after one more path segment ``name``."""
        hidden = name.startswith(".")
        nxt: set[int] = set()
        for i in states:
            if i >= self.n:
                continue
            regex = self.compiled[i]
            if regex is None:
                if not hidden:
                    nxt.add(i)
            elif (not hidden or self.hidden_ok[i]) and regex.match(name):
                nxt.add(i + 1)
        return self.closure(frozenset(nxt))


def glob_walk(
    start: str,
    pats: list[str],
    *,
    dirs_only: bool = False,
    max_scan: int = MAX_GLOB_SCAN,
    timeout: float = GLOB_TIMEOUT,
) -> GlobWalk:
    """Entries under ``start`` whose relative path matches the segment patterns ``pats``.

    A small automaton over ``pats``: a state is how many segments are matched; ``**`` matches
    zero or more segments that are not hidden. A directory is entered only while some state
    can still go on; through a symlink only when its target was not entered before (so loops
    and aliases are walked once).
    """
    out = GlobWalk()
    auto = _Automaton(pats)
    n, step = auto.n, auto.step
    deadline = time.monotonic() + timeout
    scanned = 0
    entered: set[tuple[int, int]] = set()
    try:
        st = os.stat(start)
        entered.add((st.st_dev, st.st_ino))
    except OSError:
        return out
    stack: list[tuple[str, frozenset[int]]] = [(start, auto.closure(frozenset({0})))]
    # Directories reached through a symlink wait until every real one is walked, so a link to
    # a directory the walk enters anyway is skipped and hits keep their real names.
    linked: list[tuple[str, frozenset[int], tuple[int, int]]] = []
    while stack or linked:
        if stack:
            directory, states = stack.pop()
        else:
            directory, states, key = linked.pop()
            if key in entered:
                continue  # a loop or an alias: that directory is walked once
            entered.add(key)
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError:
            continue  # unreadable or vanished: glob.glob skips these too
        scanned += len(entries)
        if scanned > max_scan:
            out.stopped = f"looked at more than {max_scan:,} entries"
            return out
        if time.monotonic() > deadline:
            out.stopped = f"took longer than {timeout:g} s"
            return out
        for entry in entries:
            nxt = step(states, entry.name)
            if not nxt:
                continue
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if n in nxt and (is_dir or not dirs_only):
                out.hits.append(entry.path)
            if not is_dir or not any(i < n for i in nxt):
                continue
            try:
                st = os.stat(entry.path)
            except OSError:
                continue
            key = (st.st_dev, st.st_ino)
            if entry.is_symlink():
                linked.append((entry.path, nxt, key))
            elif key not in entered:
                entered.add(key)
                stack.append((entry.path, nxt))
    return out


def glob_files(data: dict[str, Any], *, cwd: Path) -> ToolOutput:
    """Paths matching ``data["pattern"]`` under ``data["path"]`` (default ``cwd``).

    ``**`` matches any number of directories. Hidden files and directories (leading dot)
    are only matched by a pattern that names the dot, as in a shell: ``.github/**``.
    Paths are shown relative to ``cwd`` (absolute when outside it), so Read can open them
    as given; directories end with ``/``.
    """
    args = parse_input(GlobInput, "Glob", data)
    pattern = args.pattern
    if not pattern.strip():
        raise ToolError("Glob: 'pattern' is empty; try '**/*.py'")
    raw_base = args.path
    base = cwd if raw_base is None else resolve_path(cwd, raw_base)
    shown_base = raw_base or "."
    if not base.exists():
        raise ToolError(f"Glob: directory not found: {shown_base}")
    if not base.is_dir():
        raise ToolError(f"Glob: {shown_base} is a file, not a directory; pass its parent")
    if "\x00" in pattern:
        raise ToolError("Glob: pattern contains a NUL byte")
    if os.path.isabs(os.path.expanduser(pattern)) or ".." in Path(pattern).parts:
        # the pattern's own directory part must stay in the project too
        confine(cwd, Path(os.path.expanduser(pattern.split("*")[0] or ".")), pattern)
        if ".." in Path(pattern).parts:
            confine(cwd, base / pattern.split("*")[0], pattern)
    roots = allowed_roots(cwd)
    walk = _search(base, os.path.expanduser(pattern))
    inside = [hit for hit in walk.hits if any(_resolves_in(hit, root) for root in roots)]
    entries = sorted({_display(Path(hit), cwd) for hit in inside})
    stopped = (
        f"... the search stopped early ({walk.stopped}); narrow the pattern or the path"
        if walk.stopped
        else ""
    )
    if not entries:
        return ToolOutput(stopped or f"No files match {pattern!r} in {shown_base}")
    shown = [_mark_dir(entry, cwd) for entry in entries[:MAX_GLOB_ENTRIES]]
    cut = len(entries) - len(shown)
    if cut:
        shown.append(
            f"... {cut} more not shown ({MAX_GLOB_ENTRIES} of {len(entries)} entries); "
            "narrow the pattern or the path"
        )
    if stopped:
        shown.append(stopped)
    return ToolOutput("\n".join(shown))


def _search(base: Path, pattern: str) -> GlobWalk:
    """Walk for ``pattern`` from ``base``: its literal leading segments name the start."""
    dirs_only = pattern.endswith("/")
    parts = [p for p in pattern.split("/") if p and p != "."]
    start = "/" if pattern.startswith("/") else str(base)
    while parts and not glob.has_magic(parts[0]):
        start = os.path.join(start, parts.pop(0))
    if not parts:  # no wildcard at all: the path itself, if it is there
        found = os.path.isdir(start) if dirs_only else os.path.lexists(start)
        return GlobWalk(hits=[start] if found else [])
    walk = glob_walk(start, parts, dirs_only=dirs_only)
    if start != str(base) and all(p == "**" for p in parts) and os.path.isdir(start):
        walk.hits.append(start)  # 'src/**' matches src/ itself, as in glob.glob
    return walk


def _resolves_in(hit: str, root: Path) -> bool:
    try:
        return Path(hit).resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # a symlink loop as the hit itself
        return False


def _display(path: Path, cwd: Path) -> str:
    # os.path.relpath would walk up with '..' out of cwd; an absolute path reads better there.
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def _mark_dir(entry: str, cwd: Path) -> str:
    full = entry if os.path.isabs(entry) else os.path.join(cwd, entry)
    return entry + "/" if os.path.isdir(full) and not entry.endswith("/") else entry
