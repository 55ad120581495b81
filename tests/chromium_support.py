"""Headless Chromium for the HTML report tests: the page as a browser builds it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from project_support import run_text

__all__ = ["CHROMIUM", "NO_CHROMIUM", "chromium", "dom_of"]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NO_CHROMIUM = "needs Debian's chromium (installed by .ci/run)"
"""The skip reason where it is absent."""


def chromium(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Headless Chromium on ``page`` with ``args`` (``--dump-dom``, ``--screenshot=F``), offline,
    its profile in ``profile``; the page's console lines on stderr (``CONSOLE``)."""
    assert CHROMIUM is not None
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=5000",
        "--enable-logging=stderr",
        "--v=0",
    ]
    return run_text(
        [CHROMIUM, *flags, *args, page.as_uri()],
        timeout=90,
    )


def dom_of(page: Path, profile: Path) -> str:
    """The DOM of ``page`` after Chromium ran its scripts (``--dump-dom``)."""
    done = chromium(page, profile, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
