"""The mock's prompt-cache accounting: reads and writes from cache_control prefixes."""

from __future__ import annotations

from typing import Any

from forgeflare.mockapi._render import cache_usage, count_tokens

CC = {"type": "ephemeral"}


def body(*turns: str, cache: bool = True) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": [{"type": "text", "text": t}]}
        for i, t in enumerate(turns)
    ]
    if cache:
        messages[-1]["content"][-1]["cache_control"] = CC
    system: Any = [{"type": "text", "text": "S" * 4000, **({"cache_control": CC} if cache else {})}]
    return {"model": "m", "system": system, "messages": messages}


def test_first_request_writes_the_next_reads() -> None:
    cached: set[str] = set()
    first = body("hello " * 100)
    fresh, read, write = cache_usage(first, cached)
    assert read == 0
    assert write > 0
    assert fresh + read + write == count_tokens(first)
    second = body("hello " * 100, "answer " * 50, "more " * 50)
    fresh, read, write = cache_usage(second, cached)
    assert read >= write > 0  # the old conversation is read, the new tail written
    assert fresh + read + write == count_tokens(second)


def test_no_breakpoints_no_cache() -> None:
    cached: set[str] = set()
    for _ in range(2):
        plain = body("hello", cache=False)
        assert cache_usage(plain, cached) == (count_tokens(plain), 0, 0)
    assert cached == set()
