"""The lazy faces (``forgeflare._lazyface``): what mypy reads and what Python loads agree.

A lazy face names each export twice: the import under ``TYPE_CHECKING`` (for mypy) and its
``lazy_face`` table (for Python). Nothing else checks that the two say the same thing, so a
name only mypy sees would fail at run time, and one only the table holds would be untyped.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import forgeflare

SRC = Path(forgeflare.__file__).parent
LAZY_FACES = sorted(
    ".".join(("forgeflare", *path.parent.relative_to(SRC).parts))
    for path in SRC.rglob("__init__.py")
    if "lazy_face(" in path.read_text(encoding="utf-8")
)


def _typed_imports(package: str) -> dict[str, str]:
    """What the face imports under ``TYPE_CHECKING``: name -> module."""
    path = SRC.joinpath(*package.split(".")[1:], "__init__.py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for line in node.body:
                assert isinstance(line, ast.ImportFrom), ast.unparse(line)
                assert line.module, ast.unparse(line)
                for alias in line.names:
                    assert alias.asname == alias.name, f"{package}: import {alias.name} as itself"
                    found[alias.name] = line.module
    return found


def test_the_lazy_faces_are_found() -> None:
    assert {"forgeflare.platform", "forgeflare.disk", "forgeflare.security"} <= set(LAZY_FACES)
    assert "forgeflare.stophook" in LAZY_FACES


@pytest.mark.parametrize("package", LAZY_FACES)
def test_mypy_and_python_see_the_same_names_from_the_same_modules(package: str) -> None:
    face = importlib.import_module(package)
    typed = _typed_imports(package)
    assert sorted(typed) == face.__all__
    for name, module in typed.items():
        assert getattr(face, name) is getattr(importlib.import_module(module), name), name


def test_a_name_the_face_does_not_hold_is_an_attribute_error() -> None:
    face = importlib.import_module("forgeflare.platform")
    with pytest.raises(AttributeError, match=r"'forgeflare\.platform' has no attribute 'nothing'"):
        _ = face.nothing
    assert {"run_child", "HeadTail"} <= set(dir(face))
