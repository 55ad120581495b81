"""Bash deny-list cost: the check on big commands against a linear scan of the same text.

The check must stay linear (a 300 KB command in well under 50 ms; the regex deny-list before
it took 5.5 s on 32 KB). Each input is checked at 32 KB and 300 KB:

- **baseline**: one linear pass over the same text (lower-case it, split it at shell
  separators with one regex, split each part into words): the floor any reading pays.
- **guard**: ``check_command`` on it, from a project five directories below the home (as the
  agent calls it: the working directory followed through ``cd``, ``pushd`` and subshells).

Printed per input: the guard's time for 300 KB, its ratio to the baseline, and its growth
from 32 KB to 300 KB beside the baseline's (about 9.4 when linear, about 88 when quadratic;
both grow more when the bigger input no longer fits the CPU caches). Run::

    .venv/bin/python bench/bench_guard.py [--rounds N]
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable

from forgeflare.agent.tools._guard import check_command

_SEPARATORS = re.compile(r"&&|\|\||[;&|\n()`]")

INPUTS: dict[str, Callable[[int], str]] = {
    "heredoc of code": lambda n: (
        "cat > app.py <<'EOF'\n"
        + ("def f(x):\n    return g(x, 'a b', \"c\") | 3  # note\n" * (n // 49))
        + "EOF"
    ),
    "one long echo": lambda n: "echo '" + "lorem ipsum " * (n // 12) + "'",
    "many commands": lambda n: "git add -A && git commit -m wip; " * (n // 33),
    "rm of many files": lambda n: "rm -rf " + "build/out.o " * (n // 12),
    "quotes and subs": lambda n: "echo \"$(date) `id` $HOME\" 'x'; " * (n // 30),
    "cd and pushd": lambda n: (
        "cd src && rm -rf __pycache__ && cd ..; pushd docs; popd; " * (n // 54)
    ),
    "subshells, xargs": lambda n: "(cd docs && make html); echo a b | xargs -n1 echo; " * (n // 50),
    "one-liners": lambda n: "python3 -c 'print(1)'; echo cHJpbnQK | base64 -d | sh; " * (n // 52),
    "a disaster at the end": lambda n: (
        "make -C src all && git add -A; " * (n // 32) + "cd / && rm -rf *"
    ),
}
_HOME = "/home/dev"
_PROJECT = _HOME + "/src/a/b/c/proj"


def guard(command: str) -> str | None:
    return check_command(command, cwd=_PROJECT, home=_HOME)


def baseline(text: str) -> int:
    return sum(len(part.split()) for part in _SEPARATORS.split(text.lower()))


def _timed(func: Callable[[str], object], text: str, rounds: int) -> float:
    # The best of the rounds: other work on the machine only ever adds time.
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        func(text)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    rounds = parser.parse_args().rounds
    print(
        f"{'input':<22} {'guard 300KB':>12} {'x baseline':>11} {'32KB->300KB':>12}"
        f" {'(baseline)':>11}"
    )
    worst = 0.0
    for name, make in INPUTS.items():
        small, big = make(32_000), make(300_000)
        refused = guard(big) is not None
        if refused != name.startswith("a disaster"):
            raise SystemExit(f"{name}: the check {'refused' if refused else 'allowed'} it")
        guard_small = _timed(guard, small, rounds)
        guard_big = _timed(guard, big, rounds)
        base_small = _timed(baseline, small, rounds)
        base_big = _timed(baseline, big, rounds)
        worst = max(worst, guard_big)
        print(
            f"{name:<22} {guard_big * 1000:>9.1f} ms {guard_big / base_big:>10.1f}x "
            f"{guard_big / guard_small:>11.1f}x {base_big / base_small:>10.1f}x"
        )
    print(f"slowest 300 KB check: {worst * 1000:.1f} ms (target < 50 ms)")


if __name__ == "__main__":
    main()
