"""One line for a pydantic validation error: ``SOURCE: KEY: problem``.

Every config reader (``.fresher/config.toml`` and its overrides, ``hooks.toml``, the fleet
file, mock-API scripts) reports a bad value with :func:`validation_message`, so the same
mistake reads the same everywhere: where it is, which key, and what is wrong in words
("not an integer", "unknown key") rather than pydantic's type codes. Only the first error
is shown: fixing it and running again is quicker than reading a list.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import ValidationError
from pydantic_core import ErrorDetails

__all__ = ["Loc", "error_key", "error_problem", "validation_message"]

Loc = tuple[int | str, ...]

_PHRASES = {
    "missing": "missing",
    "extra_forbidden": "unknown key",
    "int_parsing": "not an integer",
    "int_type": "not an integer",
    "int_from_float": "not an integer",
    "bool_parsing": "not a boolean (true or false)",
    "bool_type": "not a boolean (true or false)",
    "string_type": "not a string",
}


def error_key(loc: Loc, *, tags: frozenset[str] = frozenset()) -> str:
    """``loc`` as a key path: ``responses[0].content[1].name``.

    ``tags`` are union discriminators pydantic puts in the path after an index; they only
    repeat the item's type, so they are left out.
    """
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in tags and out.endswith("]"):
            continue
        else:
            out += f".{part}" if out else str(part)
    return out


def error_problem(error: ErrorDetails) -> str:
    """What is wrong, in words: a phrase for the common kinds, else pydantic's message."""
    phrase = _PHRASES.get(error["type"])
    if phrase is not None:
        return phrase
    return str(error["msg"]).removeprefix("Value error, ")


def validation_message(
    exc: ValidationError,
    source: str = "",
    *,
    key: Callable[[Loc], str] = error_key,
    count_others: bool = False,
) -> str:
    """``SOURCE: KEY: problem`` for the first error of ``exc`` (empty parts left out).

    ``key`` turns the error's location into the key shown; ``count_others`` adds
    "(and N more problems)" when there are more.
    """
    errors = exc.errors()
    first = errors[0]
    parts = [source, key(tuple(first["loc"])), error_problem(first)]
    line = ": ".join(part for part in parts if part)
    if count_others and len(errors) > 1:
        line += f" (and {len(errors) - 1} more problems)"
    return line
