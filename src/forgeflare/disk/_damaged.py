"""Reading files that a model, a hook or a crash can damage, and text from across a process
boundary.

Every such read goes through here, so that any damage (bytes that are not UTF-8, JSON or TOML
that does not parse, nesting too deep to parse, the wrong shape) becomes ONE line naming the
file and what is wrong (``<path>: not UTF-8 text (byte 12)``), raised as the caller's error
type, never a traceback. The record and trust readers use the same shape.

Lone surrogates: JSON may spell one (``"\\ud800"``) and ``json.loads`` hands it back as a
``str`` that cannot be encoded as UTF-8, so the first write or print of it crashes far from
where it came in. :func:`loads` replaces them with U+FFFD on the way in (hook output, SSE
events, mock scripts, stop-hook input), so JSON forgeflare writes never carries one.

No pydantic at import time: the stop-hook's hot path reads its input through here.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from forgeflare._errors import ForgeflareError
from forgeflare.disk._readfile import FILE_LIMIT, read_limited

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "DamagedFileError",
    "decode_problem",
    "loads",
    "read_bytes",
    "read_json",
    "read_named_text",
    "read_text",
    "read_toml",
    "require_utf8",
    "scrub_surrogates",
    "validate_as",
]

_M = TypeVar("_M", bound="BaseModel")

# A JSON escape of a UTF-16 surrogate (``\ud800``..``\udfff``): text without one cannot decode
# to a lone surrogate, so the common case skips the walk.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class DamagedFileError(ForgeflareError):
    """A file forgeflare reads exists but is damaged (or unreadable): ``<path>: <what>``."""


def scrub_surrogates(value: Any) -> Any:
    """``value`` (decoded JSON) with every lone surrogate in a string or key replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [scrub_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {scrub_surrogates(k): scrub_surrogates(v) for k, v in value.items()}
    return value


def require_utf8(text: str, source: str, *, error: type[Exception] = DamagedFileError) -> str:
    """``text`` when it encodes as UTF-8; else ``error("<source>: not UTF-8 text (character
    N)")``: an argument holding bytes that are not UTF-8 (``printf '\\355\\240\\200'``)
    arrives with lone surrogates, which would fail the first write far from here."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise error(f"{source}: not UTF-8 text (character {exc.start + 1})") from exc
    return text


def loads(text: str | bytes) -> Any:
    """``json.loads`` that never returns a lone surrogate and raises only ``ValueError``.

    Non-UTF-8 bytes raise ``UnicodeDecodeError`` (a ``ValueError``); nesting too deep for the
    parser raises ``ValueError("too deeply nested")`` instead of ``RecursionError``.
    """
    try:
        value = json.loads(text)
    except RecursionError as exc:
        raise ValueError("too deeply nested") from exc
    raw = text if isinstance(text, str) else text.decode("utf-8", "replace")
    if _SURROGATE_ESCAPE.search(raw) is None:
        return value
    return scrub_surrogates(value)


def decode_problem(exc: BaseException) -> str:
    """What is wrong with damaged content, in words, for one line."""
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (byte {exc.start})"
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON: {exc}"
    if isinstance(exc, tomllib.TOMLDecodeError):
        return f"invalid TOML: {exc}"
    if isinstance(exc, RecursionError):
        return "too deeply nested"
    if isinstance(exc, OSError):
        return f"cannot read: {exc.strerror or exc}"
    if type(exc).__module__.startswith("pydantic"):  # a ValidationError: its first problem
        from forgeflare.disk._validation import validation_message

        return validation_message(exc)  # type: ignore[arg-type]
    return str(exc) or type(exc).__name__


def read_bytes(
    path: Path,
    *,
    error: type[Exception] = DamagedFileError,
    missing_ok: bool = True,
    cannot_read: str = "cannot read",
    limit: int = FILE_LIMIT,
) -> bytes | None:
    """The bytes of ``path`` (a regular file of at most ``limit`` bytes: :func:`read_limited`);
    ``None`` when it does not exist and ``missing_ok``.

    Raises ``error("<path>: <cannot_read>: <why>")`` or ``error("<path>: file not found")``.
    """
    try:
        return read_limited(path, limit=limit)
    except FileNotFoundError as exc:
        if missing_ok:
            return None
        raise error(f"{path}: file not found") from exc
    except OSError as exc:
        raise error(f"{path}: {cannot_read}: {exc.strerror or exc}") from exc
    except ValueError as exc:  # a NUL byte in the path
        raise error(f"{path}: {cannot_read}: {exc}") from exc


def read_text(
    path: Path,
    *,
    error: type[Exception] = DamagedFileError,
    missing_ok: bool = True,
    limit: int = FILE_LIMIT,
) -> str | None:
    """The UTF-8 text of ``path``; ``None`` when it does not exist and ``missing_ok``.

    Raises ``error("<path>: cannot read: <why>")`` or ``error("<path>: not UTF-8 text (byte N)")``.
    """
    raw = read_bytes(path, error=error, missing_ok=missing_ok, limit=limit)
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: {decode_problem(exc)}") from exc


def read_named_text(
    path: Path,
    named: str,
    *,
    error: type[Exception] = DamagedFileError,
    limit: int = FILE_LIMIT,
    folder: Path | None = None,
) -> str:
    """The UTF-8 text of a file a person named (``--file F``, a fleet file, a prompt), bounded
    as :func:`~forgeflare.disk._readfile.read_limited` reads (``folder``: where its links may lead).

    Raises ``error("<named>: cannot read: <why>")`` (a missing file too) or
    ``error("<named>: not UTF-8 text (byte N)")``: one line, whatever went wrong.
    """
    try:
        return read_limited(path, limit=limit, folder=folder).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{named}: {decode_problem(exc)}") from exc
    except ValueError as exc:  # a NUL byte in the path
        raise error(f"{named}: cannot read: {exc}") from exc


def read_json(
    path: Path, *, error: type[Exception] = DamagedFileError, missing_ok: bool = True
) -> Any:
    """The JSON value in ``path`` (lone surrogates replaced); ``None`` when there is no file.

    Raises ``error("<path>: <what is wrong>")`` for anything else.
    """
    text = read_text(path, error=error, missing_ok=missing_ok)
    if text is None:
        return None
    try:
        return loads(text)
    except ValueError as exc:
        raise error(f"{path}: {decode_problem(exc)}") from exc


def read_toml(
    path: Path, *, error: type[Exception] = DamagedFileError, missing_ok: bool = True
) -> dict[str, Any] | None:
    """The TOML table in ``path`` (lone surrogates replaced); ``None`` when there is no file."""
    text = read_text(path, error=error, missing_ok=missing_ok)
    if text is None:
        return None
    try:
        data: dict[str, Any] = scrub_surrogates(tomllib.loads(text))
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise error(f"{path}: {decode_problem(exc)}") from exc
    return data


def validate_as(
    value: Any, model: type[_M], source: str, *, error: type[Exception] = DamagedFileError
) -> _M:
    """``value`` as ``model``; a wrong shape raises ``error("<source>: KEY: problem")``."""
    from pydantic import ValidationError

    from forgeflare.disk._validation import validation_message

    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise error(validation_message(exc, source)) from exc
    except (RecursionError, ValueError, TypeError) as exc:
        raise error(f"{source}: {decode_problem(exc)}") from exc
