"""Spawn cost: a forking shell hook through the process primitive against a bare spawn.

Both sides run the same forking command, ``bash -c`` that reads its stdin, runs a pipeline
(two more processes) and answers JSON:

- **bare**: ``trio.run_process(["bash", "-c", ...], stdin=payload, capture_stdout=True)``,
  no process group, no cleanup: the floor.
- **primitive**: ``run_hook_process`` (``forgeflare.platform._process.run_child``: its own process
  group with ``setpgid``, streamed stdout, the group ended after the hook exits).

Rounds alternate the two so machine load hits both alike; the figure is the median of the
per-round ratios primitive/bare (target about 1.1), with medians and minimums beside it::

    .venv/bin/python bench/bench_spawn.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from functools import partial
from pathlib import Path

import trio

from _paired import alternate, report
from forgeflare.hooks._shell import run_hook_process

COMMAND = """read -r -d '' _; n=$(echo x | wc -c); echo "{\\"action\\":\\"allow\\",\\"n\\":$n}" """
PAYLOAD = json.dumps({"event": "PreToolUse", "tool": "Bash", "input": {"command": "ls"}}).encode()


async def bare_call(cwd: Path) -> None:
    done = await trio.run_process(
        ["bash", "-c", COMMAND], stdin=PAYLOAD, capture_stdout=True, cwd=cwd, check=False
    )
    assert json.loads(done.stdout)["action"] == "allow"


async def primitive_call(cwd: Path) -> None:
    out = await run_hook_process(COMMAND, PAYLOAD, cwd=cwd, timeout_ms=30_000)
    assert out.kind == "exited"
    assert json.loads(out.stdout)["action"] == "allow"


async def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        for _ in range(20):  # warm up both paths
            await bare_call(cwd)
            await primitive_call(cwd)
        bare, ours = await alternate(partial(bare_call, cwd), partial(primitive_call, cwd), rounds)
    report(("bare", bare), ("primitive", ours), "target about 1.1")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    trio.run(main, parser.parse_args().rounds)
