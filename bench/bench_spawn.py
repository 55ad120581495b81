"""Spawn cost: a forking shell hook through the process primitive against a bare spawn.

Both sides run the same forking command, ``bash -c`` that reads its stdin, runs a pipeline
(two more processes) and answers JSON:

- **bare**: ``trio.run_process(["bash", "-c", ...], stdin=payload, capture_stdout=True)``,
  no process group, no cleanup: the floor.
- **primitive**: ``run_hook_process`` (``forgeflare._process.run_child``: its own process
  group with ``setpgid``, streamed stdout, the group ended after the hook exits).

Rounds alternate the two so machine load hits both alike; the figure is the median of the
per-round ratios primitive/bare (target about 1.1), with medians and minimums beside it::

    .venv/bin/python bench/bench_spawn.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

import trio

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
        bare: list[float] = []
        ours: list[float] = []
        sides: list[tuple[Callable[[], Awaitable[None]], list[float]]] = [
            (partial(bare_call, cwd), bare),
            (partial(primitive_call, cwd), ours),
        ]
        for i in range(rounds):
            for call, times in sides if i % 2 == 0 else sides[::-1]:
                start = time.perf_counter()
                await call()
                times.append(time.perf_counter() - start)
    b, o = statistics.median(bare), statistics.median(ours)
    # Each round's two calls ran back to back under the same load: the least disturbed figure.
    paired = statistics.median(x / y for x, y in zip(ours, bare, strict=True))
    print(f"rounds: {rounds}")
    print(f"bare trio.run_process:   median {b * 1000:.2f} ms, min {min(bare) * 1000:.2f} ms")
    print(f"run_hook_process:        median {o * 1000:.2f} ms, min {min(ours) * 1000:.2f} ms")
    print(f"ratio of medians: {o / b:.3f}; of minimums: {min(ours) / min(bare):.3f}")
    print(f"ratio primitive/bare (median of paired rounds): {paired:.3f} (target about 1.1)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    trio.run(main, parser.parse_args().rounds)
