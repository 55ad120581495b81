"""Supervisor cost per iteration over a long run, through the public CLI (``forgeflare loop``).

A trivial agent (``sh``) stamps the time when it starts and when it is done; the supervisor's
time for an iteration is the gap between one agent's end and the next one's start (records,
hooks check, finish decision, git, spawning the next agent). Two figures, as ratios measured
in this run:

- **flat cost**: a 1,000-iteration loop, not a git repository: the median over the last 100
  iterations against the first 100 (target <= 1.2x: records must not grow with the run);
- **git**: the same loop in a git repository: what the repository adds to the supervisor's
  median time per iteration, against a bare ``git status --porcelain`` in the same repository
  (target <= 2x: about the two git processes an iteration may start). The whole per-iteration
  time in the repository is printed beside it.

The 1,000-iteration loop runs ``--repeats`` times (default 3) and the median ratio is the
figure: the machine's load changes within one run. Run::

    .venv/bin/python bench/bench_loop_scale.py [--iterations N] [--git-iterations M] [--repeats R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# bash's $EPOCHREALTIME needs no fork: the stamps cost next to nothing.
AGENT = (
    'bash -c \'echo "s $EPOCHREALTIME" >> "$BENCH_STAMPS"; cat >/dev/null; '
    'echo "e $EPOCHREALTIME" >> "$BENCH_STAMPS"\''
)


def run_loop(project: Path, iterations: int) -> list[float]:
    """Run the loop; the supervisor's milliseconds between consecutive agents."""
    stamps = project.parent / "stamps"
    stamps.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRESHER_")}
    env.update(
        BENCH_STAMPS=str(stamps),
        FRESHER_SMART_TERMINATION="false",
        FRESHER_ERROR_PAUSE="0",
        FRESHER_HOOKS_ENABLED="false",
        FRESHER_STALL_AFTER="0",  # the agent commits nothing: that is the bench, not a stall
        NO_COLOR="1",
    )
    argv = [sys.executable, "-m", "forgeflare", "loop", "--dir", str(project)]
    argv += ["--agent-cmd", AGENT, "--max-iterations", str(iterations)]
    done = subprocess.run(argv, env=env, cwd=project, capture_output=True, text=True, check=False)
    if done.returncode != 10:
        raise SystemExit(f"the loop ended with {done.returncode}: {done.stderr[-2000:]}")
    starts, ends = [], []
    for line in stamps.read_text().splitlines():
        kind, seconds = line.split()
        (starts if kind == "s" else ends).append(float(seconds))
    return [(s - e) * 1000 for e, s in zip(ends, starts[1:], strict=False)]


def git_status_ms(project: Path, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def git_repo(project: Path) -> None:
    for args in (
        ["init", "-q"],
        ["config", "user.name", "Bench"],
        ["config", "user.email", "bench@example.invalid"],
    ):
        subprocess.run(["git", *args], cwd=project, check=True)
    (project / ".gitignore").write_text(".fresher/runs/\n.forgeflare/\n")
    (project / "README.md").write_text("bench\n")
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=project, check=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--git-iterations", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    window = max(1, min(100, args.iterations // 5))
    # The machine's load changes within a run: repeat, and take the median of the ratios.
    ratios, plains = [], []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            project = Path(tmp) / "plain"
            project.mkdir()
            gaps = run_loop(project, args.iterations)
        plains.append(statistics.median(gaps))
        first = statistics.median(gaps[:window])
        last = statistics.median(gaps[-window:])
        ratios.append(last / first)
        print(
            f"{args.iterations}-iteration loop: supervisor {first:6.1f} ms/iteration over the "
            f"first {window}, {last:6.1f} over the last {window}  ratio {last / first:.2f}"
        )
    print(f"flat cost: median ratio {statistics.median(ratios):.2f} (target <= 1.2)")
    plain = statistics.median(plains)
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "repo"
        project.mkdir()
        git_repo(project)
        gaps = run_loop(project, args.git_iterations)
        loop = statistics.median(gaps)
        bare = git_status_ms(project, 50)
        extra = loop - plain
        print(
            f"git repository: supervisor {loop:6.1f} ms/iteration ({extra:+.1f} ms for git), "
            f"bare git status --porcelain {bare:5.1f} ms  ratio {extra / bare:.2f} (target <= 2)"
        )


if __name__ == "__main__":
    main()
