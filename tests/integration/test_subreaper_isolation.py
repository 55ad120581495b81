"""A test that makes the worker a child subreaper must not kill the next test's processes.

``forgeflare run``/``loop`` run in a test's own process make it a subreaper; after every child
it starts, a subreaper ends the "adopted" children that started in the second before. A process
the test started itself (the live-lock test's fake git) then died, in later tests of the same
xdist worker only. ``tests/conftest.py`` resets the worker after each test.
"""

from __future__ import annotations

import subprocess

import pytest

from forgeflare.platform import become_subreaper, run_child
from platform_support import reset_subreaper

pytestmark = pytest.mark.linux_only("child subreapers are a Linux prctl")


def _holder() -> subprocess.Popen[bytes]:
    return subprocess.Popen(["sleep", "60"])


async def test_a_subreaper_ends_a_child_the_test_started_and_a_reset_one_does_not() -> None:
    assert become_subreaper()
    killed = _holder()
    try:
        await run_child(["true"])
        assert killed.wait(timeout=60) is not None  # the hazard the reset removes
    finally:
        killed.kill()
        killed.wait()
        reset_subreaper()
    kept = _holder()
    try:
        await run_child(["true"])
        assert kept.poll() is None
    finally:
        kept.kill()
        kept.wait()
