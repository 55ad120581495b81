"""Sandbox cost: a Bash tool call under bubblewrap against the same call unconfined.

Both sides go through ``run_bash`` (the Bash tool: process group, streamed output, cleanup);
the sandboxed side also plans the sandbox (caches, socket list) and starts ``bwrap`` (new
namespaces, a private ``/tmp``, fresh ``/dev`` and ``/proc``). Two commands:

- **trivial**: ``true``, so the figure is bwrap's start-up against a bare ``bash -c``;
- **realistic**: what an agent runs between edits, ``git status`` and a short Python run
  (tens of milliseconds unconfined).

Rounds alternate the two sides so machine load hits both alike; the figure is the median of
the per-round ratios sandboxed/unconfined (target ≤ 1.5 for a realistic command)::

    .venv/bin/python bench/bench_sandbox.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio

from _paired import alternate, report
from forgeflare.agent.tools import SANDBOX_ENV, run_bash

COMMANDS = {
    "trivial": "true",
    "realistic": (
        f"git status --short >/dev/null && {sys.executable} -c 'import json, pathlib' && "
        "ls -R | wc -l"
    ),
}


def _project(root: Path) -> Path:
    project = root / "p"
    for i in range(40):
        (project / "src" / f"m{i % 5}").mkdir(parents=True, exist_ok=True)
        (project / "src" / f"m{i % 5}" / f"f{i}.py").write_text(f"X = {i}\n")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    return project


async def main(rounds: int) -> int:
    if shutil.which("bwrap") is None:
        print("skipped: needs bubblewrap (Debian: apt-get install bubblewrap)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        project = _project(Path(tmp))

        def call(command: str, sandboxed: bool) -> Callable[[], Awaitable[None]]:
            async def run() -> None:
                if sandboxed:
                    os.environ[SANDBOX_ENV] = "network"
                else:
                    os.environ.pop(SANDBOX_ENV, None)
                out = await run_bash(command, cwd=project)
                assert not out.is_error, out.content

            return run

        for name, command in COMMANDS.items():
            print(f"-- {name}: {command}")
            await call(command, True)()  # warm the caches (git dir, page cache)
            base, ours = await alternate(call(command, False), call(command, True), rounds)
            target = "target <= 1.5" if name == "realistic" else "bwrap start-up, for the record"
            report(("unconfined", base), ("sandboxed", ours), target)
    os.environ.pop(SANDBOX_ENV, None)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    sys.exit(trio.run(main, parser.parse_args().rounds))
