"""Neutral ground imports nothing above it: the package root's small modules (``_review``,
``_evidence``, ``_process``...) are the floor every package stands on, so none of them imports
a package (``forgeflare.agent``, ``forgeflare.supervisor``...), not even lazily or for type
checking only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import forgeflare

SRC = Path(forgeflare.__file__).parent
ENTRY_POINTS = {"__init__.py", "__main__.py", "cli.py"}
"""Root files that are faces or the command line, not floor: they sit above every package."""


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
        ("import forgeflare.platform._process\n", []),
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
