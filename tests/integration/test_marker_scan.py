"""The marker scan still finds forgeflare's own processes now that they are non-dumpable.

A non-dumpable process's ``/proc/<pid>/environ`` is closed to its own (ordinary) user, so the
marker it inherited cannot be read there; the ``-X forgeflare_marker=…`` option the process
primitive adds to a forgeflare child's argv can (``/proc/<pid>/cmdline`` stays readable).
Run as ``nobody``: root reads every environment anyway.
"""

from __future__ import annotations

import os

import pytest

from forgeflare.platform._pgroup import MARKER_XOPTION
from nobody_support import SETPRIV, as_user, forgeflare_argv, forgeflare_env
from project_support import run_text

pytestmark = [
    pytest.mark.linux_only("/proc and PR_SET_DUMPABLE are Linux"),
    pytest.mark.skipif(os.geteuid() != 0 or SETPRIV is None, reason="runs as nobody: needs root"),
]

SCAN = """
import os, subprocess, sys
from forgeflare.platform._pgroup import marked_processes
hold = (
    "from forgeflare.platform._dumpable import forbid_dumps; forbid_dumps(); "
    "import sys; sys.stdin.read()"
)
env = {**os.environ, "FF_TEST_MARK": "v1"}
argv = [sys.executable, *sys.argv[1:], "-c", hold]
child = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE)
try:
    import time
    for _ in range(200):  # bounded: until the child made itself non-dumpable
        if os.stat(f"/proc/{child.pid}/environ").st_uid == 0:
            break
        time.sleep(0.01)
    print("FOUND" if child.pid in marked_processes("FF_TEST_MARK", "v1") else "MISSED")
finally:
    child.stdin.close()
    child.wait()
"""


@pytest.mark.parametrize(("options", "said"), [([], "MISSED"), (["-X"], "FOUND")])
def test_a_non_dumpable_child_is_found_by_its_argv(options: list[str], said: str) -> None:
    extra = ["-X", f"{MARKER_XOPTION}=FF_TEST_MARK=v1"] if options else []
    python = forgeflare_argv("nobody")[-3]  # the interpreter nobody can start
    done = run_text(
        [*as_user("nobody"), python, "-c", SCAN, *extra],
        env={**os.environ, **forgeflare_env("nobody")},
        timeout=60,
    )
    assert done.stdout.strip() == said, done.stderr
