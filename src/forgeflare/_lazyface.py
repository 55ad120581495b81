"""Faces whose names load on first use (PEP 562): importing the face loads none of its modules."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: the stop-hook's quick path does not load typing
if TYPE_CHECKING:  # mypy treats any TYPE_CHECKING as true
    from collections.abc import Callable

__all__ = ["lazy_face"]


def lazy_face(
    package: str, **modules: str
) -> tuple[Callable[[str], object], Callable[[], list[str]], list[str]]:
    """A package's ``__getattr__``, ``__dir__`` and ``__all__`` for the names its modules hold.

    Each keyword is a private module and the names the face takes from it, space-separated
    (``_outputcap="HeadTail LineCap"``): the face's one table, besides what mypy reads.
    """
    where = {name: module for module, names in modules.items() for name in names.split()}

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(__import__(f"{package}.{module}", fromlist=[name]), name)
        setattr(sys.modules[package], name, value)  # the next look-up is an ordinary global
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__, sorted(where)
