"""Small file-system helpers shared by the parts.

Files are written as files: a repository can commit a symbolic link where forgeflare writes
(``.fresher/loop.lock -> ~/.bashrc``, ``.fresher/runs -> /elsewhere``), and a copied tree can
hold a FIFO or a device there. So every write opens its file without following a final link
and only as a regular file (:func:`open_regular`), temporary files are made new (``O_EXCL``),
and the folders a command writes in are checked at its start to stay inside the project after
following links (:func:`check_project_folders`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from forgeflare._errors import ConfigError
from forgeflare.disk._readfile import file_kind

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "append_line",
    "atomic_write_text",
    "check_project_folders",
    "open_regular",
    "read_json_model",
]

_M = TypeVar("_M", bound="BaseModel")


def open_regular(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open(path, flags)`` without following a final symbolic link, and only onto a
    regular file: a link, FIFO or device raises ``OSError`` naming what it is (no wait on a
    FIFO without a reader)."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP and os.path.islink(path):
            why = "a symbolic link; forgeflare does not follow it"
            raise OSError(errno.ELOOP, why, str(path)) from exc
        if exc.errno == errno.ENXIO:  # a FIFO nobody reads, or a device without its driver
            kind = file_kind(os.lstat(path).st_mode)
            raise OSError(errno.ENXIO, f"{kind}, not a regular file", str(path)) from exc
        raise
    st_mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, f"{file_kind(st_mode)}, not a regular file", str(path))
    os.set_blocking(fd, True)  # O_NONBLOCK was for the open: a FIFO must not hang it
    return fd


def check_project_folders(project: Path, folders: Iterable[str | os.PathLike[str]]) -> None:
    """Raise ``ConfigError`` (one line, exit 2) when a folder forgeflare writes in below
    ``project`` leads outside it through a symbolic link (a committed ``.fresher/runs ->
    /elsewhere``), or is not a directory. A folder given outside the project (an absolute
    ``[paths] log_dir``) is the user's choice, and a trust item: it is not checked here."""
    real_project = project.resolve()
    for folder in folders:
        path = project / folder
        if not _lexically_below(path, project):
            continue
        real = path.resolve()
        if real != real_project and real_project not in real.parents:
            raise ConfigError(
                f"{path}: a symbolic link leads outside the project (to {real}); forgeflare "
                "writes only inside it: remove the link"
            )
        try:
            st_mode = real.stat().st_mode
        except OSError:
            continue  # made when first needed
        if not stat.S_ISDIR(st_mode):
            raise ConfigError(f"{path}: {file_kind(st_mode)}, not a directory: remove it")


def _lexically_below(path: Path, project: Path) -> bool:
    try:
        Path(os.path.normpath(os.path.abspath(path))).relative_to(
            os.path.normpath(os.path.abspath(project))
        )
    except ValueError:
        return False
    return True


def atomic_write_text(path: Path, text: str, *, fsync: bool = True) -> None:
    """Write ``text`` to ``path`` so that readers see the old or the new file, never a part.

    The temporary file is ``<path>.tmp`` in the same directory: ``rename`` is atomic only
    within one file system, so a temp file elsewhere (``/tmp``) could fail with EXDEV. It is
    made new (whatever had its name goes first: never written through a planted link), and
    the rename replaces a link at ``path`` rather than following it.
    The parent directory is created if missing.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        with open(fd, "w", encoding="utf-8") as fh:
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
        fd = open_regular(path, os.O_RDWR)
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
    no handle to leak or flush. The parent directory is created if missing. Raises ``OSError``
    (also for a symbolic link, FIFO or device at ``path``).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
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

    from forgeflare.disk._damaged import decode_problem, loads, read_bytes

    raw = read_bytes(path, error=error, cannot_read=cannot_read)
    if raw is None:
        return None
    try:
        return model.model_validate(loads(raw))
    except (ValueError, ValidationError, RecursionError, TypeError) as exc:
        raise error(f"{path}: {invalid}: {decode_problem(exc)}") from exc
