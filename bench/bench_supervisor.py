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

from forgeflare._clock import utc_timestamp
from forgeflare.supervisor import LoopConfig, LoopOptions, loop_trust_items, run_loop
from forgeflare.supervisor.agents import supervise
from forgeflare.supervisor.records._display import LoopDisplay
from forgeflare.trust._store import TrustStore, default_trust_file

AGENT = [sys.executable, "-c", "import sys; sys.stdin.read()"]


async def bare(n: int, project: Path) -> None:
    for _ in range(n):
        await supervise(AGENT, cwd=project, env={}, stdin=b"prompt")


def loop_config(n: int) -> LoopConfig:
    return LoopConfig.model_validate(
        {
            "fresher": {"max_iterations": n, "smart_termination": False},
            "agent": {"command": shlex.join(AGENT), "final_required": "no"},
            "limits": {"error_pause": 0},
        }
    )


def trusted_env(project: Path, config: LoopConfig) -> dict[str, str]:
    """The loop's environment, with ``project`` trusted as ``forgeflare trust`` would: the
    agent command is a trust item, as a user's is. The trust file is in a config folder of
    the bench's own; the user's is never touched."""
    env = {"XDG_CONFIG_HOME": str(project.parent / "config")}
    items = loop_trust_items(project, config)
    TrustStore(default_trust_file(env)).trust(str(project.resolve()), items, utc_timestamp())
    return env


async def loop(n: int, project: Path) -> None:
    config = loop_config(n)
    env = {"XDG_CONFIG_HOME": str(project.parent / "config")}
    display = LoopDisplay(out=io.StringIO(), err=io.StringIO(), live=False)
    result = await run_loop(
        LoopOptions(project_dir=project, config=config, env=env), display=display
    )
    assert result.record.totals.iterations == n, (result.finish_type, result.record.finish_reason)


def measure(fn: object, n: int, repeats: int, git: bool) -> float:
    times = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            project = Path(tmp) / "project"
            project.mkdir()
            if git:
                subprocess.run(["git", "init", "-q"], cwd=project, check=True)
            trusted_env(project, loop_config(n))
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
