"""Faces that mean something: a package is used from outside only through its face.

A package's face is its ``__init__`` (``forgeflare.hooks``, ``forgeflare.agent.tools``...): code
in one package imports another package only from there, never from its private modules
(``forgeflare.trust._store``). The small top-level modules (``forgeflare._clock``,
``forgeflare._errors``...) are the floor every package stands on: anyone may import them. The
floor's groups (``forgeflare.platform``, ``forgeflare.disk``, ``forgeflare.security``) are
packages like any other: outside them, their names come from their faces.
"""

import ast
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import forgeflare

ROOT_EXPORTS = {"ConfigError", "ForgeflareError", "__version__"}
SRC = Path(forgeflare.__file__).parent

PACKAGES = sorted(
    info.name
    for info in pkgutil.walk_packages(forgeflare.__path__, "forgeflare.")
    if info.ispkg and ".files" not in info.name
)

# (importer, imported) pairs allowed past a face, each with its reason.
PAST_THE_FACE = {
    # The console script hands a bare `stop-hook` to the process entry before typer loads;
    # the entry is kept off the stop-hook's face on purpose.
    ("forgeflare.cli", "forgeflare.stophook._entry"),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(tree: ast.AST) -> list[tuple[int, str]]:
    """Every absolute import of a forgeflare module: (line, module)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return [(line, name) for line, name in found if name.split(".")[0] == "forgeflare"]


def past_the_face(importer: str, imported: str) -> bool:
    """Does ``importer`` reach into a private module of another package?"""
    mine, theirs = importer.split("."), imported.split(".")
    if len(theirs) < 3 or (len(mine) > 1 and mine[1] == theirs[1]):
        return False  # the floor (forgeflare._clock), a face, or its own package
    return any(part.startswith("_") for part in theirs[2:])


@pytest.mark.parametrize(
    ("importer", "imported", "past"),
    [
        ("forgeflare.report._collect", "forgeflare.supervisor.records._records", True),
        ("forgeflare.report._collect", "forgeflare.supervisor", False),
        ("forgeflare.supervisor.run._loop", "forgeflare.agent.tools._sandbox", True),
        ("forgeflare.supervisor.run._loop", "forgeflare.agent.tools", False),
        ("forgeflare.supervisor.run._loop", "forgeflare.supervisor.records._records", False),
        ("forgeflare.supervisor.backends._codex", "forgeflare.supervisor.config._config", False),
        ("forgeflare.agent._run", "forgeflare._clock", False),
        ("forgeflare.agent._run", "forgeflare.platform._process", True),
        ("forgeflare.agent._run", "forgeflare.platform", False),
        ("forgeflare.security._sandbox", "forgeflare.platform._process", True),
        ("forgeflare.security._gaterun", "forgeflare.security._sandbox", False),
        ("forgeflare._review", "forgeflare._evidence", False),
        ("forgeflare.cli", "forgeflare.hooks._types", True),
        ("forgeflare.cli", "forgeflare._app", False),
    ],
)
def test_what_counts_as_past_the_face(importer: str, imported: str, past: bool) -> None:
    assert past_the_face(importer, imported) is past


def test_packages_import_each_other_through_their_faces() -> None:
    wrong = []
    for path in sorted(SRC.rglob("*.py")):
        if "files" in path.relative_to(SRC).parts:
            continue  # the templates' files are written to projects, not imported
        importer = _module_name(path)
        for line, imported in _imported(ast.parse(path.read_text(encoding="utf-8"))):
            if past_the_face(importer, imported) and (importer, imported) not in PAST_THE_FACE:
                wrong.append(f"{path.relative_to(SRC)}:{line}: {imported}")
    assert wrong == [], "import these through the package's face:\n" + "\n".join(wrong)


@pytest.mark.parametrize("name", [*PACKAGES, "forgeflare"])
def test_every_listed_name_resolves(name: str) -> None:
    package = importlib.import_module(name)
    for public in package.__all__:
        assert hasattr(package, public), (name, public)


def test_root_package_exports_its_errors_and_version() -> None:
    assert set(forgeflare.__all__) == ROOT_EXPORTS


def test_every_module_has_all() -> None:
    for name in [*PACKAGES, "forgeflare"]:
        package = importlib.import_module(name)
        for info in pkgutil.iter_modules(package.__path__):
            if info.name == "__main__":
                continue
            module = importlib.import_module(f"{name}.{info.name}")
            assert isinstance(getattr(module, "__all__", None), list), module.__name__


@pytest.mark.parametrize("name", PACKAGES)
def test_each_package_imports_alone(name: str) -> None:
    """Eager re-exports must not create an import cycle whatever is imported first."""
    subprocess.run([sys.executable, "-c", f"import {name}"], check=True)
