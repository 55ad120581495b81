"""The Bash check through the real agent: ``forgeflare run`` against the mock API, scripted
Bash calls from the table (tests/guard_table.py), the tool results the model gets back read
from the mock's --record file: each destructive spelling refused (``blocked`` and why), each
ordinary command let through.

The agent runs inside bubblewrap with the whole file system read-only except a scratch
directory (its home, project, temporary and config directories), so a command the check
missed could do no harm. An agent turn ends at 10 refusals (3 in a row), so each turn holds
nine destructive commands, never more than two in a row, with ordinary ones between. The
counters belong to a turn, so each worker's agent is one process on a terminal (a pty), given
one prompt per batch as a user types them: one start per worker, not one per batch.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from agent_support import text_response, tool_response, tool_results
from guard_table import DESTRUCTIVE, ORDINARY, PROJECT_BELOW_HOME
from mockapi_support import MockServer, start_mock_server
from platform_support import terminal

BWRAP = shutil.which("bwrap")
_PER_RUN = 9  # refusals per turn: the 10th ends the turn (MAX_TOTAL_BLOCKS)
_WORKERS = 3  # runs at once, each worker with its own mock server
_FILLER = "echo ok"


def _runs() -> list[list[tuple[str, bool]]]:
    """Batches of (command, destructive): D D O D D O ... nine D per batch."""
    ordinary = iter(ORDINARY)
    runs = []
    for start in range(0, len(DESTRUCTIVE), _PER_RUN):
        batch: list[tuple[str, bool]] = []
        for index, command in enumerate(DESTRUCTIVE[start : start + _PER_RUN]):
            if index and index % 2 == 0:
                batch.append((next(ordinary, _FILLER), False))
            batch.append((command, True))
        batch.append((next(ordinary, _FILLER), False))
        runs.append(batch)
    leftover = list(ordinary)
    for start in range(0, len(leftover), 12):
        runs.append([(command, False) for command in leftover[start : start + 12]])
    return runs


def _boxed_agent(scratch: Path, project: Path, url: str, turns: int) -> tuple[int | None, str]:
    """``forgeflare run`` in ``project`` inside bwrap (everything read-only but ``scratch``), on
    a pty, given ``turns`` prompts and then ``exit``: (exit status or None on timeout, screen)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    home = scratch / "home"
    env.update(
        ANTHROPIC_API_URL=url,
        ANTHROPIC_API_KEY="test-key",
        NO_COLOR="1",
        HOME=str(home),
        TMPDIR=str(scratch / "tmp"),
        XDG_CONFIG_HOME=str(scratch / "config"),
        XDG_STATE_HOME=str(scratch / "state"),
        XDG_CACHE_HOME=str(home / ".cache"),
        FORGEFLARE_TRUST="1",
    )
    box = [BWRAP or "bwrap", "--ro-bind", "/", "/", "--bind", str(scratch), str(scratch)]
    box += ["--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--die-with-parent"]
    box += ["--new-session", "--chdir", str(project)]
    if os.geteuid() == 0:
        box += ["--cap-drop", "ALL"]  # root in the box cannot remount / writable
    with terminal() as (master, slave, screen):
        proc = subprocess.Popen(
            [*box, sys.executable, "-m", "forgeflare", "run"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
        )
        # Typed ahead: the terminal holds the lines and the agent reads one per turn (its Bash
        # tool's stdin is /dev/null, so no command can take them).
        os.write(master, b"run the commands\n" * turns + b"exit\n")
        try:
            code: int | None = proc.wait(timeout=60 + 15 * turns)
        except subprocess.TimeoutExpired:  # a missed command walking the read-only /
            proc.kill()
            proc.wait()
            code = None
    return code, screen.decode("utf-8", "replace")


def _worker(base: Path, runs: list[list[tuple[str, bool]]]) -> list[str]:
    """Run ``runs`` as the turns of one agent against one mock server; the problems found."""
    scratch = base / "scratch"
    project = scratch / "home" / Path(*PROJECT_BELOW_HOME)
    for name in ("tmp", "config", "state", "home/.cache"):
        (scratch / name).mkdir(parents=True, exist_ok=True)
    project.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    responses: list[dict[str, Any]] = []
    for batch in runs:
        responses.append(tool_response(*[("Bash", {"command": c}) for c, _ in batch]))
        responses.append(text_response("done"))
    server: MockServer = start_mock_server({"responses": responses}, directory=base)
    problems: list[str] = []
    try:
        code, screen = _boxed_agent(scratch, project, server.url, len(runs))
        requests = server.requests()
    finally:
        server.stop()
    if code is None:
        done = len(requests) // 2
        missed = [c for c, d in runs[min(done, len(runs) - 1)] if d]
        return [f"turn {done} timed out: {missed}\n{screen[-2000:]}"]
    if code != 0 or len(requests) != 2 * len(runs):
        return [f"the agent ended with {code} after {len(requests)} requests: {screen[-2000:]}"]
    for batch, request in zip(runs, requests[1::2], strict=True):
        results = tool_results(request)
        for (command, destructive), result in zip(batch, results, strict=True):
            text = str(result.get("content"))
            refused = result.get("is_error") and text.startswith("blocked by ")
            if destructive and not (refused and "forgeflare:bash-check" in text):
                problems.append(f"not refused: {command!r}: {text[:300]}")
            if not destructive and refused:
                problems.append(f"ordinary command refused: {command!r}: {text[:300]}")
    return problems


@pytest.mark.linux_only("bubblewrap is Linux software")
@pytest.mark.skipif(
    BWRAP is None, reason="needs bubblewrap (Debian: bubblewrap, installed by .ci/run)"
)
@pytest.mark.timeout(600)
def test_the_real_agent_refuses_every_destructive_spelling(tmp_path: Path) -> None:
    runs = _runs()
    assert sum(d for batch in runs for _, d in batch) == len(DESTRUCTIVE) >= 250
    assert {c for batch in runs for c, d in batch if not d} >= set(ORDINARY)
    shares = [runs[i::_WORKERS] for i in range(_WORKERS)]
    with ThreadPoolExecutor(_WORKERS) as pool:
        found = pool.map(_worker, [tmp_path / f"w{i}" for i in range(_WORKERS)], shares)
        problems = [p for share in found for p in share]
    assert problems == []
