"""Lazy faces (PEP 562): importing a face loads none of its modules; a name loads its module on
first use and is an ordinary global after; an unknown name is the usual AttributeError."""

from __future__ import annotations

import importlib
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

FACE = """
from forgeflare._lazyface import lazy_face

_WHERE = {"value": "_mod", "other": "_mod"}
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
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
