"""Lazy faces (``forgeflare._lazyface``, PEP 562): importing a face loads none of its modules; a
name loads its module on first use and is an ordinary global after; an unknown name is the usual
AttributeError; and what mypy reads (the ``TYPE_CHECKING`` imports) and what Python loads (the
``lazy_face`` table) name the same things from the same modules.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import forgeflare

FACE = """
from forgeflare._lazyface import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, _mod="value other")
"""
MODULE = """
import sys
sys.modules[__name__.rsplit(".", 1)[0]].loads.append(1)
value = "from _mod"
other = 2
"""


@pytest.fixture
def face(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name = f"lazyface_{uuid.uuid4().hex}"
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text("loads: list[int] = []\n" + FACE)
    (package / "_mod.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        del sys.modules[key]


def test_a_name_loads_its_module_once_on_first_use(face: str) -> None:
    package = importlib.import_module(face)
    assert f"{face}._mod" not in sys.modules
    assert package.loads == []
    assert package.value == "from _mod"
    assert package.loads == [1]
    assert "value" in vars(package)  # cached: the next look-up is an ordinary global
    assert package.other == 2
    assert package.loads == [1]


def test_an_unknown_name_is_an_attribute_error(face: str) -> None:
    package = importlib.import_module(face)
    with pytest.raises(AttributeError, match=rf"module '{face}' has no attribute 'nope'"):
        _ = package.nope
    assert not hasattr(package, "nope")


def test_dir_lists_the_lazy_names_before_they_load(face: str) -> None:
    package = importlib.import_module(face)
    names = dir(package)
    assert {"value", "other", "loads"} <= set(names)
    assert names == sorted(names)
    assert package.__all__ == ["other", "value"]
    assert f"{face}._mod" not in sys.modules


def test_a_real_face_loads_nothing_on_import() -> None:
    code = (
        "import sys, forgeflare.platform as face; "
        "print(sorted(m for m in sys.modules if m.startswith('forgeflare.platform.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


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
