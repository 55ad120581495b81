"""Small file-system helpers shared by the parts."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["atomic_write_text"]


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old or the new file, never a part.

    The temporary file is ``<path>.tmp`` in the same directory: ``rename`` is atomic only
    within one file system, so a temp file elsewhere (``/tmp``) could fail with EXDEV.
    The parent directory is created if missing.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
