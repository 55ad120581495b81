"""Every package re-exports exactly the public names of its private modules."""

import importlib
import pkgutil
import subprocess
import sys
from types import ModuleType

import pytest

import forgeflare

# Modules whose names stay out of their package on purpose: the command registrations, the
# stop-hook's process entry, and the root package's internals (it exports its errors only).
NOT_REEXPORTED = {"_cli", "_hookscli", "_trustcli", "_entry", "__main__"}
ROOT_EXPORTS = {"ConfigError", "ForgeflareError", "__version__"}

PACKAGES = sorted(
    info.name
    for info in pkgutil.walk_packages(forgeflare.__path__, "forgeflare.")
    if info.ispkg and ".files" not in info.name
)


def _modules(package: ModuleType) -> list[ModuleType]:
    return [
        importlib.import_module(f"{package.__name__}.{info.name}")
        for info in pkgutil.iter_modules(package.__path__)
        if not info.ispkg and info.name not in NOT_REEXPORTED
    ]


def test_every_part_is_listed() -> None:
    parts = {name.split(".")[1] for name in PACKAGES}
    assert {"agent", "hooks", "supervisor", "stophook", "templates", "mockapi", "trust"} <= parts


@pytest.mark.parametrize("name", PACKAGES)
def test_package_exports_the_union_of_its_modules(name: str) -> None:
    package = importlib.import_module(name)
    expected: dict[str, object] = {}
    for module in _modules(package):
        assert module.__name__.rsplit(".", 1)[1].startswith("_"), module.__name__
        for public in module.__all__:
            value = getattr(module, public)
            # One name per concept: two modules of a package may not export the same name.
            assert expected.setdefault(public, value) is value, (name, public)
    assert sorted(package.__all__) == sorted(expected)
    assert len(set(package.__all__)) == len(package.__all__)
    for public, value in expected.items():
        assert getattr(package, public) is value, (name, public)


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
