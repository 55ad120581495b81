"""The one bounded read of a file forgeflare reads from a project, a run folder or the state
directory.

A project is not ours: its ``answer.md`` may be a FIFO nobody writes to, its ``config.toml`` a
symlink to ``/dev/zero``, its ``windows.json`` a 20 GB file. :func:`read_limited` reads only a
regular file, never follows a symlink out of the folder the file is in, never blocks on open
(``O_NONBLOCK | O_NOFOLLOW``, checked with ``fstat`` before a byte is read) and reads at most
``limit`` bytes. Anything else raises :class:`FileRefused`, an ``OSError`` whose ``strerror``
says why in words (``not a regular file (a FIFO)``), so every caller that already turns an
``OSError`` into one line does so for these too.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

__all__ = [
    "CONFIG_LIMIT",
    "FILE_LIMIT",
    "RECORD_LIMIT",
    "FileRefused",
    "file_kind",
    "not_regular",
    "read_limited",
    "read_limited_text",
]

CONFIG_LIMIT = 1 << 20
"""``config.toml``, ``hooks.toml``, a fleet file: a person writes these; 1 MB is far beyond."""
FILE_LIMIT = 16 << 20
"""Anything else people or agents write (a plan, ``answer.md``, ``convergence.json``)."""
RECORD_LIMIT = 256 << 20
"""Forgeflare's own run records and event logs: long runs grow them."""
_CHUNK = 1 << 16

_KINDS = (
    (stat.S_ISREG, "a regular file"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class FileRefused(OSError):
    """A file forgeflare would not read: not a regular file, a symlink out of its folder, or
    over its size cap. ``strerror`` says which in words."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(errno.EINVAL, why, str(path))


def file_kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words (``a FIFO``, ``a directory``...)."""
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def not_regular(mode: int) -> str | None:
    """``None`` for a regular file's ``st_mode``, else what it is (``a FIFO``)."""
    return None if stat.S_ISREG(mode) else file_kind(mode)


def _megabytes(limit: int) -> str:
    return f"{limit / (1 << 20):g} MB"


def read_limited(path: Path, *, limit: int = FILE_LIMIT, folder: Path | None = None) -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes inside ``folder``
    (default: the folder it is in), symlinks followed only within it.

    Raises ``FileNotFoundError`` (and other ``OSError``\\ s) as opening does, and
    :class:`FileRefused` for a special file, a symlink out of ``folder`` or a file over ``limit``.
    A FIFO or a device is refused from ``stat`` alone: it is never opened for a blocking read.
    """
    real = Path(os.path.realpath(path))
    home = Path(os.path.realpath(folder if folder is not None else path.parent))
    if real != home and home not in real.parents:
        raise FileRefused(path, f"a symlink out of {folder or path.parent} (to {real})")
    before = os.stat(real)
    if not stat.S_ISREG(before.st_mode):
        raise FileRefused(path, f"not a regular file ({not_regular(before.st_mode)})")
    if before.st_size > limit:
        raise FileRefused(path, f"larger than {_megabytes(limit)}")
    fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY)
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (
            before.st_dev,
            before.st_ino,
        ):
            raise FileRefused(path, "replaced while being read")
        data = bytearray()
        while len(data) <= limit:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - len(data)))
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew after the stat
        raise FileRefused(path, f"larger than {_megabytes(limit)}")
    return bytes(data)


def read_limited_text(
    path: Path, *, limit: int = FILE_LIMIT, folder: Path | None = None, errors: str = "strict"
) -> str:
    """:func:`read_limited` decoded as UTF-8 (``errors`` as for ``bytes.decode``)."""
    return read_limited(path, limit=limit, folder=folder).decode("utf-8", errors)
