"""What keeping the key out of ``/proc/<pid>/environ`` costs at start: ``forgeflare run --help``
with ``ANTHROPIC_API_KEY`` in the environment (one re-execution, the key handed over through a
descriptor) against the same command without it (no re-execution).

Times the installed console script as real processes, round robin so both meet the same load,
and prints the median of each and their ratio. Run::

    .venv/bin/python bench/bench_reexec.py [--repeats N]
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import forgeflare


def run_ms(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, capture_output=True, check=True, env=env)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    compileall.compile_dir(Path(forgeflare.__file__).parent, quiet=1)
    script = str(Path(sys.executable).parent / "forgeflare")
    plain = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    sides = {
        "without a key (no re-exec)": plain,
        "with a key (re-exec)": {**plain, "ANTHROPIC_API_KEY": "sk-bench"},
    }
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(args.repeats):
        for name, env in sides.items():
            times[name].append(run_ms([script, "run", "--help"], env))
    median = {name: statistics.median(ms) for name, ms in times.items()}
    for name, ms in median.items():
        print(f"{name:<28} {ms:8.1f} ms")
    base, ours = median.values()
    print(f"re-exec / plain = {ours / base:.2f}x (+{ours - base:.1f} ms once per start)")


if __name__ == "__main__":
    main()
