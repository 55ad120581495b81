"""Headless Chromium for the HTML report tests: the page as a browser builds it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

__all__ = ["CHROMIUM", "NO_CHROMIUM", "dom_of"]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NO_CHROMIUM = "needs Debian's chromium (installed by .ci/run)"
"""The skip reason where it is absent."""


def dom_of(page: Path, profile: Path) -> str:
    """The DOM of ``page`` after Chromium ran its scripts (``--dump-dom``)."""
    assert CHROMIUM is not None
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=3000",
    ]
    done = subprocess.run(
        [CHROMIUM, *flags, "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
