"""Supervisor overhead per iteration: the loop against bare agent starts.

Three measurements in one run, each the median of the repeats, of N iterations of a trivial
agent (``python -c "import sys; sys.stdin.read()"``):

- **bare**: N ``supervise`` calls (process group, stdin, output pump): the baseline;
- **loop**: ``run_loop`` with ``max_iterations = N``, no hooks, not a git repository
  (records, convergence check, plan check, finish decision);
- **loop+git**: the same in a git repository (two work-tree snapshots per iteration).

Prints milliseconds per iteration and the ratios loop/bare and loop+git/bare. Run::

    .venv/bin/python bench/bench_supervisor.py [--iterations N] [--repeats R]
"""

from __future__ import annotations

import argparse
import io
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

from forgeflare.supervisor import LoopConfig, LoopOptions, run_loop, supervise
from forgeflare.supervisor._display import LoopDisplay

AGENT = [sys.executable, "-c", "import sys; sys.stdin.read()"]


async def bare(n: int, project: Path) -> None:
    for _ in range(n):
        await supervise(AGENT, cwd=project, env={}, stdin=b"prompt")


async def loop(n: int, project: Path) -> None:
    config = LoopConfig.model_validate(
        {
            "fresher": {"max_iterations": n, "smart_termination": False},
            "agent": {"command": shlex.join(AGENT), "final_required": "no"},
            "limits": {"error_pause": 0},
        }
    )
    display = LoopDisplay(out=io.StringIO(), err=io.StringIO(), live=False)
    result = await run_loop(
        LoopOptions(project_dir=project, config=config, env={}), display=display
    )
    assert result.record.totals.iterations == n, result.record


def measure(fn: object, n: int, repeats: int, git: bool) -> float:
    times = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            project = Path(tmp)
            if git:
                subprocess.run(["git", "init", "-q"], cwd=project, check=True)
            start = time.perf_counter()
            trio.run(fn, n, project)  # type: ignore[arg-type]
            times.append(time.perf_counter() - start)
    return statistics.median(times) / n * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    base = measure(bare, args.iterations, args.repeats, git=False)
    plain = measure(loop, args.iterations, args.repeats, git=False)
    git = measure(loop, args.iterations, args.repeats, git=True)
    print(f"bare agent start   {base:7.1f} ms/iteration")
    print(f"loop               {plain:7.1f} ms/iteration  ratio {plain / base:.2f}")
    print(f"loop + git         {git:7.1f} ms/iteration  ratio {git / base:.2f}")


if __name__ == "__main__":
    main()
