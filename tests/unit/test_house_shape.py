"""The house keeps its shape: no function over 80 lines, no class of 400 lines or more.

A function's lines run from its ``def`` to its last line, nested functions counted in their
parent. The Bash check's tokenizer (one pass over a command, by design one function) is the
one exception.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import forgeflare

SRC = Path(forgeflare.__file__).parent
MOST_FUNCTION_LINES = 80
CLASS_LINES_BELOW = 400
TALL_ON_PURPOSE = {("agent/tools/_guard.py", "_scan")}
"""(file, function): the Bash check's tokenizer, one linear pass over the command."""


def _lines(node: ast.AST) -> int:
    return int(getattr(node, "end_lineno", 0)) - int(getattr(node, "lineno", 0)) + 1


def shapes(tree: ast.AST) -> list[tuple[str, str, int]]:
    """("function" | "class", name, lines) of every class and every function not inside
    another function (a nested one is part of its parent's lines)."""
    found: list[tuple[str, str, int]] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                found.append(("class", child.name, _lines(child)))
                walk(child, in_function)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                if not in_function:
                    found.append(("function", child.name, _lines(child)))
                walk(child, True)
            else:
                walk(child, in_function)

    walk(tree, False)
    return found


def too_big(kind: str, lines: int) -> bool:
    if kind == "class":
        return lines >= CLASS_LINES_BELOW
    return lines > MOST_FUNCTION_LINES


def test_shapes_counts_nested_functions_in_their_parent() -> None:
    tree = ast.parse(
        "def outer():\n    def inner():\n        pass\n    return inner\n\n"
        "class Box:\n    def method(self):\n        return 1\n"
    )
    assert shapes(tree) == [
        ("function", "outer", 4),
        ("class", "Box", 3),
        ("function", "method", 2),
    ]


@pytest.mark.parametrize(
    ("kind", "lines", "big"),
    [("function", 80, False), ("function", 81, True), ("class", 399, False), ("class", 400, True)],
)
def test_the_bounds(kind: str, lines: int, big: bool) -> None:
    assert too_big(kind, lines) is big


def test_no_long_function_and_no_big_class_in_src() -> None:
    wrong = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for kind, name, lines in shapes(ast.parse(path.read_text(encoding="utf-8"))):
            if too_big(kind, lines) and (rel, name) not in TALL_ON_PURPOSE:
                wrong.append(f"{rel}: {kind} {name}: {lines} lines")
    assert wrong == [], "split these by what they do:\n" + "\n".join(wrong)
