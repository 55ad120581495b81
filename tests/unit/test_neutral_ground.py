"""Neutral ground imports nothing above it. The floor every package stands on is the package
root's light modules (``_errors``, ``_review``, ``_evidence``...) and, above them, three groups,
lowest first: ``platform`` (processes), ``disk`` (files) and ``security`` (the box, secrets, git).
A root module imports no package at all; a group imports only the groups below it (and the
root); none imports a package above the floor (``forgeflare.agent``, ``forgeflare.supervisor``...),
not even lazily or for type checking only. The groups' faces load nothing on import: the
stop-hook's quick path reads a file through ``forgeflare.disk`` and must not pay for pydantic."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import forgeflare

SRC = Path(forgeflare.__file__).parent
ENTRY_POINTS = {"__init__.py", "__main__.py", "cli.py"}
"""Root files that are faces or the command line, not floor: they sit above every package."""
FLOOR = ("platform", "disk", "security")
"""The floor's groups, lowest first."""
HEAVY = ("trio", "pydantic", "httpx")


def packages_imported(source: str) -> list[str]:
    """The forgeflare packages (not root modules) that ``source`` imports anywhere in it."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "forgeflare" and len(parts) > 1 and not parts[1].startswith("_"):
                found.append(name)
    return found


@pytest.mark.parametrize(
    ("source", "packages"),
    [
        ("from forgeflare._clock import parse_time\n", []),
        ("import forgeflare._units\n", []),
        ("import forgeflare.platform._process\n", ["forgeflare.platform._process"]),
        ("from forgeflare.agent import Message\n", ["forgeflare.agent"]),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from forgeflare.agent import AssistantResponse\n",
            ["forgeflare.agent"],
        ),
        ("def f():\n    import forgeflare.supervisor.run\n", ["forgeflare.supervisor.run"]),
        ("from forgeflare import ConfigError\n", []),
    ],
)
def test_what_counts_as_importing_a_package(source: str, packages: list[str]) -> None:
    assert packages_imported(source) == packages


def test_no_root_module_imports_a_package() -> None:
    wrong = [
        f"{path.name}: {name}"
        for path in sorted(SRC.glob("*.py"))
        if path.name not in ENTRY_POINTS
        for name in packages_imported(path.read_text(encoding="utf-8"))
    ]
    assert wrong == [], "neutral ground imports nothing above it:\n" + "\n".join(wrong)


def above(group: str, packages: list[str]) -> list[str]:
    """The ``packages`` a module of the floor's ``group`` may not import: all but the groups at
    or below its own."""
    allowed = FLOOR[: FLOOR.index(group) + 1]
    return [name for name in packages if name.split(".")[1] not in allowed]


@pytest.mark.parametrize(
    ("group", "packages", "wrong"),
    [
        ("platform", ["forgeflare.platform"], []),
        ("platform", ["forgeflare.disk"], ["forgeflare.disk"]),
        ("disk", ["forgeflare.platform", "forgeflare.security"], ["forgeflare.security"]),
        ("security", ["forgeflare.platform", "forgeflare.disk._fsutil"], []),
        ("security", ["forgeflare.agent.tools"], ["forgeflare.agent.tools"]),
    ],
)
def test_what_counts_as_above_a_group(group: str, packages: list[str], wrong: list[str]) -> None:
    assert above(group, packages) == wrong


def test_the_floors_groups_are_all_there_and_hold_modules() -> None:
    for group in FLOOR:
        assert len(list((SRC / group).glob("_*.py"))) >= 2, group


@pytest.mark.parametrize("group", FLOOR)
def test_no_group_of_the_floor_imports_above_it(group: str) -> None:
    wrong = [
        f"{path.relative_to(SRC)}: {name}"
        for path in sorted((SRC / group).glob("*.py"))
        for name in above(group, packages_imported(path.read_text(encoding="utf-8")))
    ]
    assert wrong == [], f"{group} imports only the groups below it:\n" + "\n".join(wrong)


def _outside_uses(group: str) -> set[str]:
    """The names that src/ outside ``group`` imports from it (its face or its modules)."""
    package = f"forgeflare.{group}"
    used: set[str] = set()
    for path in SRC.rglob("*.py"):
        if path.is_relative_to(SRC / group) or "files" in path.relative_to(SRC).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            module = node.module if isinstance(node, ast.ImportFrom) and node.level == 0 else None
            if module and (module == package or module.startswith(package + ".")):
                used |= {alias.name for alias in node.names}
    return used


@pytest.mark.parametrize("group", FLOOR)
def test_each_groups_face_lists_only_names_used_outside_it(group: str) -> None:
    face = __import__(f"forgeflare.{group}", fromlist=["__all__"]).__all__
    unused = sorted(set(face) - _outside_uses(group))
    assert unused == [], f"nobody outside forgeflare.{group} uses these; take them off its face"


def test_the_floors_faces_load_none_of_their_modules() -> None:
    faces = ", ".join(f"forgeflare.{group}" for group in FLOOR)
    code = f"import sys, {faces}; print(*sorted(sys.modules))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout.split()
    inside = [m for m in loaded if m.split(".")[0] in HEAVY or m.count(".") >= 2]
    assert [m for m in inside if m.startswith("forgeflare.") or m in HEAVY] == []
