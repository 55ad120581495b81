"""The supervisor's rooms and their faces: each sub-package's face lists only names that code
outside it imports, and the supervisor's own face stays small (what the rest of forgeflare and
a user need), every name on it used outside the supervisor."""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path

import pytest

import forgeflare

SRC = Path(forgeflare.__file__).parent
REPO = SRC.parent.parent
SUPERVISOR = "forgeflare.supervisor"
ROOMS = ("agents", "config", "records", "evidence", "run")
MOST_FACE_NAMES = 35


def imported_names(source: str) -> set[tuple[str, str]]:
    """(module, name) of every ``from forgeflare.supervisor... import name`` in ``source``."""
    found: set[tuple[str, str]] = set()
    for node in ast.walk(ast.parse(source)):
        module = node.module if isinstance(node, ast.ImportFrom) and node.level == 0 else None
        if module and (module == SUPERVISOR or module.startswith(SUPERVISOR + ".")):
            found |= {(module, alias.name) for alias in node.names}
    return found


def unused_on_face(face: list[str], room: str, imports: set[tuple[str, str]]) -> list[str]:
    """The names on ``room``'s face (a dotted package) that no import from outside it names:
    imports from the room itself, one of its modules, or a face above it all count."""
    used = {
        name
        for module, name in imports
        if module == room or module.startswith(room + ".") or room.startswith(module + ".")
    }
    return sorted(set(face) - used)


@pytest.mark.parametrize(
    ("imports", "unused"),
    [
        ({("forgeflare.supervisor.run", "run_loop")}, ["LoopStep"]),
        ({("forgeflare.supervisor.run._step", "LoopStep")}, ["run_loop"]),
        ({("forgeflare.supervisor", "run_loop"), ("forgeflare.supervisor", "LoopStep")}, []),
        ({("forgeflare.supervisor.records", "run_loop")}, ["LoopStep", "run_loop"]),
        ({("forgeflare.supervisor.runner", "run_loop")}, ["LoopStep", "run_loop"]),
    ],
)
def test_what_counts_as_a_use(imports: set[tuple[str, str]], unused: list[str]) -> None:
    face = ["LoopStep", "run_loop"]
    assert unused_on_face(face, "forgeflare.supervisor.run", imports) == unused


def test_imported_names_reads_only_the_supervisors_imports() -> None:
    source = (
        "from forgeflare.supervisor import RunRecord\n"
        "from forgeflare.supervisor.run._loop import run_loop as go\n"
        "from forgeflare.supervisors import Other\n"
        "from forgeflare.report import summarize\n"
    )
    assert imported_names(source) == {
        ("forgeflare.supervisor", "RunRecord"),
        ("forgeflare.supervisor.run._loop", "run_loop"),
    }


@functools.cache
def _imports_by_file() -> tuple[tuple[Path, frozenset[tuple[str, str]]], ...]:
    found = []
    for root in (SRC, REPO / "tests", REPO / "bench"):
        for path in root.rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if SUPERVISOR in text and "files" not in path.relative_to(root).parts:
                found.append((path, frozenset(imported_names(text))))
    return tuple(found)


def _imports_outside(folder: Path) -> set[tuple[str, str]]:
    outside = (names for path, names in _imports_by_file() if folder not in path.parents)
    return set().union(*outside)


@pytest.mark.parametrize("room", ROOMS)
def test_each_rooms_face_lists_only_names_used_outside_it(room: str) -> None:
    package = f"{SUPERVISOR}.{room}"
    face = importlib.import_module(package).__all__
    unused = unused_on_face(face, package, _imports_outside(SRC / "supervisor" / room))
    assert unused == [], f"nobody outside {package} uses these; take them off its face"


def test_the_supervisors_face_is_small_and_used_outside_it() -> None:
    face = importlib.import_module(SUPERVISOR).__all__
    assert len(face) <= MOST_FACE_NAMES, f"{len(face)} names on the supervisor's face"
    through_it = {(m, n) for m, n in _imports_outside(SRC / "supervisor") if m == SUPERVISOR}
    unused = unused_on_face(face, SUPERVISOR, through_it)
    assert unused == [], "nobody outside the supervisor uses these; take them off its face"
