"""The documentation as tests read it: the README, the site's pages in navigation order, and
the generator of its reference (``docs/_hooks/reference.py``, the MkDocs hook)."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
MKDOCS = REPO / "mkdocs.yml"


def _flatten(entries: list[Any]) -> list[str]:
    pages: list[str] = []
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += _flatten(value) if isinstance(value, list) else [value]
    return pages


def nav_pages() -> list[Path]:
    """The site's pages, in the order of mkdocs.yml's ``nav`` (the order a reader follows)."""
    nav = yaml.safe_load(MKDOCS.read_text(encoding="utf-8"))["nav"]
    return [DOCS / page for page in _flatten(nav)]


def docs_text() -> str:
    """Every page as written (generated parts left as their markers), in navigation order."""
    return "\n".join(page.read_text(encoding="utf-8") for page in nav_pages())


@cache
def reference() -> ModuleType:
    """``docs/_hooks/reference.py``, the generator of the reference pages."""
    spec = importlib.util.spec_from_file_location(
        "forgeflare_docs_reference", DOCS / "_hooks" / "reference.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
