"""Small file-system helpers shared by the parts."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["append_line", "atomic_write_text", "read_json_model"]

_M = TypeVar("_M", bound="BaseModel")


def atomic_write_text(path: Path, text: str, *, fsync: bool = True) -> None:
    """Write ``text`` to ``path`` so that readers see the old or the new file, never a part.

    The temporary file is ``<path>.tmp`` in the same directory: ``rename`` is atomic only
    within one file system, so a temp file elsewhere (``/tmp``) could fail with EXDEV.
    The parent directory is created if missing.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            if fsync:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError:
        # A full disk: a half-written temp file would hold on to the little space left.
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def overwrite_in_place(path: Path, data: bytes) -> bool:
    """Rewrite an existing file in place when ``data`` fits in the blocks it already holds.

    The fallback for a full disk or a read-only folder, where :func:`atomic_write_text` cannot
    make its temporary file: no new block is needed, so the write cannot run out of space.
    ``False`` (nothing written) when the file is missing, not writable, or ``data`` needs more
    room than it has.
    """
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        if len(data) > os.fstat(fd).st_blocks * 512:
            return False
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.ftruncate(fd, len(data))
        os.fsync(fd)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def append_line(path: Path, line: str) -> None:
    """Append ``line`` (which ends in a newline) to ``path`` in one ``write``.

    A fresh O_APPEND descriptor per line and one write for the whole line: a kill between lines
    never leaves half a line, concurrent writers do not interleave within a line, and there is
    no handle to leak or flush. The parent directory is created if missing. Raises ``OSError``.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(line.encode("utf-8"))
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def read_json_model(
    path: Path, model: type[_M], error: type[Exception], *, cannot_read: str, invalid: str
) -> _M | None:
    """The JSON file at ``path`` as ``model``; ``None`` when there is no file.

    Raises ``error`` as ``"<path>: <cannot_read>: <why>"`` or ``"<path>: <invalid>: <why>"``;
    any damage (bytes that are not UTF-8, nesting, a wrong shape) is one of these.
    """
    from pydantic import ValidationError

    from forgeflare._damaged import decode_problem, loads, read_bytes

    raw = read_bytes(path, error=error, cannot_read=cannot_read)
    if raw is None:
        return None
    try:
        return model.model_validate(loads(raw))
    except (ValueError, ValidationError, RecursionError, TypeError) as exc:
        raise error(f"{path}: {invalid}: {decode_problem(exc)}") from exc
