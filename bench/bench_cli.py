"""``forgeflare --help`` against ``forgeflare --version``: listing the commands imports no part.

Times the installed console script as real processes, round robin so every command meets the
same load, and prints the median of each and the ratio help/version (target: at most 2x;
it was 7-14x when the listing imported every part). A bare ``--version`` no longer loads typer
(it answers before the app is imported), so the version side is ``--version --help``: typer and
the root app, no part, the start the listing is measured against. Run::

    .venv/bin/python bench/bench_cli.py [--repeats N]
"""

from __future__ import annotations

import argparse
import compileall
import statistics
import subprocess
import sys
import time
from pathlib import Path

import forgeflare


def run_ms(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, capture_output=True, check=True)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    # An installed package has its bytecode (pip compiles it); a checkout run with
    # PYTHONDONTWRITEBYTECODE would compile every module on every run instead.
    compileall.compile_dir(Path(forgeflare.__file__).parent, quiet=1)
    script = str(Path(sys.executable).parent / "forgeflare")
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "forgeflare --version": [script, "--version"],
        "forgeflare --version --help": [script, "--version", "--help"],
        "forgeflare --help": [script, "--help"],
        "forgeflare stop-hook --help": [script, "stop-hook", "--help"],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.repeats):
        for name, argv in commands.items():
            times[name].append(run_ms(argv))
    median = {name: statistics.median(ms) for name, ms in times.items()}
    for name, ms in median.items():
        print(f"{name:<28} {ms:8.1f} ms")
    ratio = median["forgeflare --help"] / median["forgeflare --version --help"]
    print(f"help / version = {ratio:.2f}x (target <= 2x)")


if __name__ == "__main__":
    main()
