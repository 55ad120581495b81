"""The backend is the seam: no module outside a backend's own tests the backend's name, and
every fact of an agent is a member of the :class:`Backend` protocol (an AST scan of ``src/``)."""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import forgeflare
from forgeflare.disk import Final
from forgeflare.supervisor.backends import (
    BACKENDS,
    BaseBackend,
    ChildEnd,
    IterationReport,
    LineReader,
    register_backend,
)

SRC = Path(forgeflare.__file__).resolve().parent
BACKENDS_DIR = SRC / "supervisor" / "backends"

GENERIC_NAMES = {
    "forgeflare": "also the package, the program and the git identity's name",
    "command": 'also a key of hooks, [notify] and the trust items (`type = "command"`)',
}
"""Built-in backend names that are ordinary words elsewhere: not scanned (say why)."""

ALLOWED: dict[tuple[str, str], str] = {}
"""``(path under src/forgeflare, name)`` where the name may stay, with the reason: none."""


@dataclass(frozen=True)
class Found:
    path: str
    line: int
    name: str


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of docstring constants (documentation may name an agent)."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
        # An attribute docstring: a string expression right after an assignment.
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list):
                for before, stmt in itertools.pairwise(stmts):
                    if (
                        isinstance(before, ast.Assign | ast.AnnAssign)
                        and isinstance(stmt, ast.Expr)
                        and isinstance(stmt.value, ast.Constant)
                    ):
                        ids.add(id(stmt.value))
    return ids


def _own(path: Path, name: str) -> bool:
    """A backend's own modules: ``backends/_NAME*.py``."""
    return path.parent == BACKENDS_DIR and path.name.startswith(f"_{name}")


def name_literals(source: str, names: set[str]) -> Iterator[tuple[int, str]]:
    """``(line, name)`` of each string literal in ``source`` that is a backend name, or quotes
    one (``'backend = "codex"'``), docstrings aside."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    quoted = {name: re.compile(rf"""(["']){re.escape(name)}\1""") for name in names}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
            continue
        if id(node) in docs:
            continue
        for name in names:
            if node.value == name or quoted[name].search(node.value):
                yield node.lineno, name


def scan(names: set[str]) -> list[Found]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for line, name in name_literals(path.read_text(encoding="utf-8"), names):
            if not _own(path, name) and (rel, name) not in ALLOWED:
                found.append(Found(rel, line, name))
    return found


def _scanned() -> set[str]:
    return {"claude", "codex", *BACKENDS} - set(GENERIC_NAMES)


def test_no_backend_name_outside_its_own_modules() -> None:
    assert {"claude", "codex"} <= set(BACKENDS)
    assert scan(_scanned()) == []


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ('if backend == "codex":\n    pass\n', [(1, "codex")]),
        ('KEYS = {"claude": ("A",)}\n', [(1, "claude")]),
        ("TEXT = 'backend = \"codex\"'\n", [(1, "codex")]),
        ('def f() -> None:\n    """The claude backend ("codex" too)."""\n', []),
        ('X = 1\n"""Unlike "codex", it ..."""\n', []),
        ('PATH = ".claude/settings.json"\nVAR = "CODEX_HOME"\n', []),
    ],
)
def test_the_scan_finds_names_in_code_not_in_docs(
    source: str, found: list[tuple[int, str]]
) -> None:
    assert list(name_literals(source, {"claude", "codex"})) == found


def test_the_scan_would_find_a_switch_in_a_shared_module() -> None:
    """The real tree had such switches (``_sandbox``, ``_secrets``, ``_agentkey``, …): the scan
    of a shared module with one must fail."""
    shared = SRC / "security" / "_sandbox.py"
    planted = shared.read_text(encoding="utf-8") + '\nOWN = ("claude", "codex")\n'
    assert {name for _, name in name_literals(planted, _scanned())} >= {"claude", "codex"}


def test_every_protocol_member_is_documented_for_a_new_backend() -> None:
    """A new backend's author reads what to supply on each member of :class:`Backend`."""
    source = ast.parse((BACKENDS_DIR / "_backends.py").read_text(encoding="utf-8"))
    (protocol,) = [n for n in source.body if isinstance(n, ast.ClassDef) and n.name == "Backend"]
    undocumented = []
    body = protocol.body
    for i, node in enumerate(body):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            after = body[i + 1] if i + 1 < len(body) else None
            if not (isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)):
                undocumented.append(node.target.id)
        elif isinstance(node, ast.FunctionDef) and ast.get_docstring(node) is None:
            undocumented.append(node.name)
    assert undocumented == []


def test_registering_a_class_without_the_protocols_members_names_what_it_lacks() -> None:
    class Half:
        name = "half"

        def argv(self) -> list[str]:
            return []

    with pytest.raises(TypeError, match=r"backend 'half' \(Half\) lacks account, agent_env, box, "):
        register_backend(Half)
    assert "half" not in BACKENDS

    @dataclass
    class Whole(BaseBackend):
        name: str = "whole"
        prompt_suffix: str = ""

    with pytest.raises(TypeError, match=r"lacks argv, reader, report: subclass BaseBackend"):
        register_backend(Whole)  # what no default can say: how to start and read the agent

    @dataclass
    class Started(Whole):
        def argv(self, *, python: str, model: str, command: str, extra: list[str]) -> list[str]:
            return ["true"]

        def reader(self) -> LineReader:
            raise NotImplementedError

        def report(
            self, reader: LineReader, end: ChildEnd, final: Final | None, file: Path | None
        ) -> IterationReport:
            return IterationReport()

    try:
        register_backend(Started)
        assert BACKENDS["whole"] is Started
    finally:
        BACKENDS.pop("whole", None)
