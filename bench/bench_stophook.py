"""Final-message lookup: a 100 MB transcript against a small one with the same tail.

Three measurements in one run, each the median of the repeats:

- **small**: ``final_message`` (what the hook judges) on a ~10 KB transcript (the baseline);
- **big**: the same call on a ~100 MB transcript (10,000 lines of 10 KB tool results before
  the same tail): reading backwards from EOF should cost about what the small one does;
- **forward**: the naive way, parsing every line from the start and keeping the last
  assistant text, on the big file.

Prints milliseconds and the ratios big/small (target: close to 1) and forward/big. Run::

    .venv/bin/python bench/bench_stophook.py [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from forgeflare.supervisor.stophook._transcript import assistant_text_of, final_message

SIGNAL_TEXT = "All tests pass.\n<loop-done>COMPLETE</loop-done>"


def last_assistant_text(path: Path) -> str:
    """The final message's text as the hook reads it (all its text blocks)."""
    final = final_message(path)
    return "" if final is None else final.text


def tail_lines() -> list[str]:
    """Claude Code's shape: one line per content block, tool results between messages."""
    entries = [
        {"type": "user", "message": {"role": "user", "content": "Fix the tests"}},
        {
            "type": "assistant",
            "message": {
                "id": "m1",
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}],
            },
        },
        {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result"}]}},
        {
            "type": "assistant",
            "message": {
                "id": "m2",
                "role": "assistant",
                "content": [{"type": "text", "text": SIGNAL_TEXT}],
            },
        },
    ]
    return [json.dumps(e) + "\n" for e in entries]


def write_transcript(path: Path, padding_lines: int) -> None:
    pad = json.dumps({"type": "user", "message": {"role": "user", "content": "x" * 10_000}})
    with open(path, "w", encoding="utf-8") as fh:
        for _ in range(padding_lines):
            fh.write(pad + "\n")
        fh.writelines(tail_lines())


def forward_scan(path: Path) -> str:
    last = ""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            found = assistant_text_of(json.loads(line))
            if found is not None and found[1].strip():
                last = found[1]
    return last


def median_ms(fn: Callable[[], str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - start) * 1000)
        if result != SIGNAL_TEXT:
            raise SystemExit(f"wrong result: {result!r}")
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        small, big = Path(tmp) / "small.jsonl", Path(tmp) / "big.jsonl"
        write_transcript(small, 1)
        write_transcript(big, 10_000)
        small_ms = median_ms(lambda: last_assistant_text(small), args.repeats)
        big_ms = median_ms(lambda: last_assistant_text(big), args.repeats)
        forward_ms = median_ms(lambda: forward_scan(big), max(1, args.repeats // 3))
        print(f"transcript sizes: small {small.stat().st_size:,} B, big {big.stat().st_size:,} B")
        print(f"small   (baseline)  {small_ms:8.3f} ms")
        print(f"big     (backwards) {big_ms:8.3f} ms   big/small = {big_ms / small_ms:.2f}x")
        print(
            f"forward (naive)     {forward_ms:8.1f} ms   forward/big = {forward_ms / big_ms:.0f}x"
        )


if __name__ == "__main__":
    main()
