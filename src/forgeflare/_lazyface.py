"""Faces whose names load on first use (PEP 562): importing the face loads none of its modules."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: the stop-hook's quick path does not load typing
if TYPE_CHECKING:  # mypy treats any TYPE_CHECKING as true
    from collections.abc import Callable

__all__ = ["lazy_face"]


def lazy_face(
    package: str, where: dict[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` for names ``where`` maps to their modules."""

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(__import__(f"{package}.{module}", fromlist=[name]), name)
        setattr(sys.modules[package], name, value)  # the next look-up is an ordinary global
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__
