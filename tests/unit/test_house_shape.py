"""The house keeps its shape: no function over 80 lines, and the loop is made of parts that
own their state.

A function's lines run from its ``def`` to its last line, nested functions counted in their
parent. The Bash check's tokenizer (one pass over a command, by design one function) is the
one exception. A class's size is no measure (splitting one object over files met it); what
counts for the loop is that no attribute of a part is assigned from two modules, no part is
a mixin, and each part is built alone (the per-part tests do; here, once more, together).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import forgeflare

SRC = Path(forgeflare.__file__).parent
MOST_FUNCTION_LINES = 80
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
    return kind == "function" and lines > MOST_FUNCTION_LINES


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
    [("function", 80, False), ("function", 81, True), ("class", 400, False)],
)
def test_the_bounds(kind: str, lines: int, big: bool) -> None:
    assert too_big(kind, lines) is big


def test_no_long_function_in_src() -> None:
    wrong = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for kind, name, lines in shapes(ast.parse(path.read_text(encoding="utf-8"))):
            if too_big(kind, lines) and (rel, name) not in TALL_ON_PURPOSE:
                wrong.append(f"{rel}: {kind} {name}: {lines} lines")
    assert wrong == [], "split these by what they do:\n" + "\n".join(wrong)


# -- the loop's parts -------------------------------------------------------------------------
LOOP_MODULES = (
    "_loop",
    "_step",
    "_setup",
    "_runbook",
    "_switching",
    "_iteration",
    "_checkpoint",
    "_proof",
    "_checks",
    "_waiting",
    "_dryrun",
)
"""The supervisor's modules that build or hold the loop's parts."""
PART_NAMES = {
    "setup": "LoopSetup",
    "book": "RunBook",
    "agent": "AgentSwitching",
    "iteration": "IterationRunner",
    "delivery": "LoopDelivery",
    "evidence": "LoopProof",
    "checks": "LoopChecks",
    "waits": "LoopWaits",
    "step": "LoopStep",
    "parts": "LoopParts",
    "loop": "_Loop",
}
"""How the loop's code names each part (an attribute or a local of that name) -> its class."""


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        found: list[ast.expr] = []
        for target in node.targets:
            found += target.elts if isinstance(target, ast.Tuple) else [target]
        return found
    if isinstance(node, ast.AugAssign | ast.AnnAssign):
        return [node.target]
    return []


def _objects(trees: dict[str, ast.Module]) -> dict[str, str]:
    """Class -> the object it is part of: a class and its bases among ``trees`` are one object
    (mixins are one object over many files)."""
    root: dict[str, str] = {}

    def find(name: str) -> str:
        while root.setdefault(name, name) != name:
            name = root[name]
        return name

    for tree in trees.values():
        for cls in ast.walk(tree):
            if isinstance(cls, ast.ClassDef):
                for base in cls.bases:
                    if isinstance(base, ast.Name):
                        root[find(base.id)] = find(cls.name)
    return {name: find(name) for name in list(root)}


def assigned_attributes(modules: dict[str, str]) -> dict[tuple[str, str], set[str]]:
    """(object, attribute) -> the modules that assign it: ``self.X`` in a class's methods, and
    ``P.X`` where ``P`` names a part (``self.book.X``, ``book.X``, ``loop.X``)."""
    found: dict[tuple[str, str], set[str]] = {}
    trees = {module: ast.parse(source) for module, source in modules.items()}
    objects = _objects(trees)
    for module, tree in trees.items():
        for cls in ast.walk(tree):
            if not isinstance(cls, ast.ClassDef | ast.Module):
                continue
            for node in ast.walk(cls):
                for target in _targets(node):
                    if not isinstance(target, ast.Attribute):
                        continue
                    base = target.value
                    owner = None
                    if isinstance(base, ast.Name) and base.id == "self":
                        owner = cls.name if isinstance(cls, ast.ClassDef) else None
                    elif isinstance(base, ast.Name | ast.Attribute):
                        name = base.id if isinstance(base, ast.Name) else base.attr
                        owner = PART_NAMES.get(name)
                    if owner is not None:
                        owner = objects.get(owner, owner)
                        found.setdefault((owner, target.attr), set()).add(module)
    return found


def shared_fields(modules: dict[str, str]) -> list[str]:
    """Attributes of one class assigned from two modules (one module a class's state)."""
    return sorted(
        f"{cls}.{attr}: {', '.join(sorted(where))}"
        for (cls, attr), where in assigned_attributes(modules).items()
        if len(where) > 1
    )


def test_the_scan_finds_a_field_written_from_two_modules() -> None:
    mixin = {
        "_a": "class A:\n    def f(self):\n        self.count = 1\n",
        "_b": "class B:\n    def g(self):\n        self.book.count = 2\n",
        "_c": "class RunBook:\n    def h(self):\n        self.count = 3\n",
        "_d": "def k(book):\n    book.count += 1\n",
    }
    assert shared_fields(mixin) == ["RunBook.count: _b, _c, _d"]
    assert shared_fields({"_a": mixin["_a"], "_c": mixin["_c"]}) == []
    mixins = {
        "_state": "class State:\n    pass\n",
        "_part": "class Part(State):\n    def f(self):\n        self.preamble = ''\n",
        "_loop": "class Loop(Part):\n    def g(self):\n        self.preamble = 'x'\n",
    }
    assert shared_fields(mixins) == ["Loop.preamble: _loop, _part"]


def _loop_sources() -> dict[str, str]:
    folder = SRC / "supervisor" / "run"
    return {name: (folder / f"{name}.py").read_text(encoding="utf-8") for name in LOOP_MODULES}


def test_no_field_of_a_loop_part_is_written_from_two_modules() -> None:
    assert shared_fields(_loop_sources()) == [], "one part, one module, one writer"


def test_the_loop_parts_are_no_mixins() -> None:
    import forgeflare.supervisor.run as face
    from forgeflare.supervisor.run._loop import _Loop

    parts = [getattr(face, name) for name in PART_NAMES.values() if name != "_Loop"]
    for part in [*parts, _Loop]:
        assert part.__bases__ == (object,), f"{part.__name__} is built from {part.__bases__}"
    for source in _loop_sources().values():
        assert "TYPE_CHECKING:  # the parts' methods" not in source


def test_each_loop_part_is_built_alone_from_explicit_inputs(tmp_path: Path) -> None:
    from forgeflare.supervisor.run import (
        AgentSwitching,
        IterationRunner,
        LoopChecks,
        LoopDelivery,
        LoopParts,
        LoopProof,
        LoopStep,
        LoopWaits,
        RunBook,
    )
    from loop_support import loop_setup, opened_book

    setup = loop_setup(tmp_path / "p")
    book = opened_book(setup)
    assert RunBook(setup).setup is setup
    agent, delivery = AgentSwitching(setup, book), LoopDelivery(setup, book)
    checks, waits = LoopChecks(setup, book), LoopWaits(setup, book)
    iteration = IterationRunner(setup, book, agent=agent, delivery=delivery)
    evidence = LoopProof(
        setup, book, checks=checks, delivery=delivery, waits=waits, task=lambda: ""
    )
    parts = [agent, delivery, checks, waits, iteration, evidence]
    assert all(part.setup is setup and part.book is book for part in parts)
    step = LoopStep(setup, book, LoopParts.build(setup, book))
    assert step.parts.agent is not agent  # a step's parts are its own


def _built_in(name: str) -> set[str]:
    """The modules of src that call ``name(...)`` (build one)."""
    found = set()
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            func = node.func if isinstance(node, ast.Call) else None
            if isinstance(func, ast.Name) and func.id == name:
                found.add(path.relative_to(SRC).as_posix())
    return found


def test_the_outcome_and_the_effective_limits_are_built_in_one_place_each() -> None:
    assert _built_in("IterationOutcome") == {"supervisor/run/_iteration.py"}
    assert _built_in("Limits") == {"supervisor/run/_setup.py"}
