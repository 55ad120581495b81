"""Glob in a repository with symlink loops, against the same repository without them.

``glob.glob`` followed ``sub/loop1 -> ..`` for ever (memory growing, Ctrl+C ignored); the walk
now enters each directory once, so two loops cost about what the tree costs without them.
The repository: 40 directories of 25 files, plus ``sub/loop1 -> ..`` and
``sub/deep/loop2 -> ../..``; the pattern ``**/*.txt``. Printed: both times (best of the rounds),
the ratio (loops / no loops, about 1) and the loop repository's time, which must be well under
a second; and, on the tree without loops, the old ``glob.glob`` call beside the new walk alone
(the tool's other work, confinement and display, is the same as before). Run::

    .venv/bin/python bench/bench_glob.py [--rounds N]
"""

from __future__ import annotations

import argparse
import glob
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from forgeflare.agent.tools._glob import glob_files, glob_walk


def make_tree(root: Path, *, loops: bool) -> None:
    for d in range(40):
        folder = root / f"pkg{d}"
        folder.mkdir()
        for f in range(25):
            (folder / f"f{f}.txt").write_text("x")
    (root / "sub" / "deep").mkdir(parents=True)
    if loops:
        (root / "sub" / "loop1").symlink_to("..")
        (root / "sub" / "deep" / "loop2").symlink_to("../..")


def best(root: Path, rounds: int) -> tuple[float, int]:
    times, count = [], 0
    for _ in range(rounds):
        start = time.perf_counter()
        out = glob_files({"pattern": "**/*.txt"}, cwd=root)
        times.append(time.perf_counter() - start)
        count = len(out.content.splitlines())
    return min(times), count


def _timed(func: Callable[[], object]) -> float:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as plain, tempfile.TemporaryDirectory() as looped:
        make_tree(Path(plain), loops=False)
        make_tree(Path(looped), loops=True)
        base, n_base = best(Path(plain), rounds)
        loop, n_loop = best(Path(looped), rounds)
        old = min(
            _timed(lambda: glob.glob("**/*.txt", root_dir=plain, recursive=True))
            for _ in range(rounds)
        )
        new = min(_timed(lambda: glob_walk(plain, ["**", "*.txt"])) for _ in range(rounds))
    assert n_base == n_loop, (n_base, n_loop)  # the loops add no path
    print(f"{'tree':<12} {'entries':>8} {'time':>9}")
    print(f"{'no loops':<12} {n_base:>8} {base * 1000:>7.1f}ms")
    print(f"{'two loops':<12} {n_loop:>8} {loop * 1000:>7.1f}ms")
    print(f"ratio loops/no loops: {loop / base:.2f}x; under a second: {loop < 1.0}")
    print(f"no loops, glob.glob {old * 1000:.1f}ms, the walk {new * 1000:.1f}ms: {new / old:.2f}x")


if __name__ == "__main__":
    main()
