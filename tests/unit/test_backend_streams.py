"""Claude Code and Codex output read into display lines and iteration reports (pure)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare._completion import BLOCKED_PROMPT, BLOCKED_TAG
from forgeflare.supervisor.backends import (
    COMPLETE_TAG,
    Backend,
    ChildEnd,
    ClaudeBackend,
    ClaudeStreamReader,
    CodexBackend,
    CodexStreamReader,
    CommandBackend,
    ForgeflareBackend,
    Tokens,
    tool_line,
)


def j(obj: dict[str, Any]) -> str:
    return json.dumps(obj)


INIT = j({"type": "system", "subtype": "init", "session_id": "s-1", "model": "claude-sonnet-4-5"})
TEXT = j(
    {
        "type": "assistant",
        "message": {"id": "m1", "content": [{"type": "text", "text": "Running the tests."}]},
    }
)
TOOL = j(
    {
        "type": "assistant",
        "message": {
            "id": "m1",
            "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "pytest -q"}}],
        },
    }
)
RESULT = j(
    {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "num_turns": 3,
        "result": "All green.",
        "session_id": "s-1",
        "total_cost_usd": 0.0123,
        "usage": {
            "input_tokens": 1200,
            "output_tokens": 340,
            "cache_read_input_tokens": 20000,
            "cache_creation_input_tokens": 1000,
        },
    }
)


def read(lines: list[str]) -> tuple[ClaudeStreamReader, list[str]]:
    reader = ClaudeStreamReader()
    shown: list[str] = []
    for line in lines:
        shown += reader.feed(line)
    return reader, shown


def test_claude_success() -> None:
    reader, shown = read([INIT, TEXT, TOOL, RESULT])
    report = reader.report()
    assert report.outcome == "ok"
    assert report.tokens == Tokens(input=1200, output=340, cache_read=20000, cache_write=1000)
    assert report.cost_usd == 0.0123
    assert report.turns == 3
    assert report.session_id == "s-1"
    assert report.model == "claude-sonnet-4-5"
    assert report.final_text == "All green."
    assert "▸ Bash  pytest -q" in shown
    assert "Running the tests." in shown
    assert not any(line.lstrip().startswith("{") for line in shown)
    assert shown[-1].startswith("■ ok · 3 turns")
    assert "$0.0123" in shown[-1]


def test_claude_usage_limit() -> None:
    limit = j(
        {
            "type": "rate_limit_event",
            "rate_limit_info": {
                "status": "rejected",
                "resetsAt": 1764000000,
                "rateLimitType": "five_hour",
            },
        }
    )
    synthetic = j(
        {
            "type": "assistant",
            "error": "rate_limit",
            "message": {
                "id": "x",
                "model": "<synthetic>",
                "content": [{"type": "text", "text": "Claude AI usage limit reached"}],
            },
        }
    )
    result = j(
        {
            "type": "result",
            "subtype": "success",
            "is_error": True,
            "api_error_status": 429,
            "num_turns": 1,
            "result": "Claude AI usage limit reached",
        }
    )
    reader, _ = read([INIT, limit, synthetic, result])
    report = reader.report()
    assert report.outcome == "rate_limited"
    assert report.resets_at == "2025-11-24T16:00:00Z"


def test_claude_allowed_rate_limit_state_is_not_a_limit() -> None:
    allowed = j({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed_warning"}})
    reader, _ = read([INIT, allowed, RESULT])
    assert reader.report().outcome == "ok"
    assert reader.report().resets_at is None


def test_claude_api_errors_and_missing_result() -> None:
    def result(status: int) -> str:
        return j(
            {"type": "result", "subtype": "success", "is_error": True, "api_error_status": status}
        )

    assert read([INIT, result(529)])[0].outcome() == ("api_error", True)
    assert read([INIT, result(401)])[0].outcome() == ("api_error", False)
    assert read([INIT, TEXT])[0].outcome() == ("agent_error", False)
    failed = j({"type": "result", "subtype": "error_during_execution", "is_error": True})
    assert read([INIT, failed])[0].outcome() == ("agent_error", False)


def test_claude_unreachable_api_is_an_outage_with_its_retries_shown() -> None:
    """Claude Code 2.1.197 with the API on a closed port (CLAUDE_CODE_MAX_RETRIES=2)."""
    retry = {"type": "system", "subtype": "api_retry", "max_retries": 2, "error_status": None}
    error = "API Error: Unable to connect to API (ConnectionRefused)"
    synthetic = {
        "type": "assistant",
        "error": "server_error",
        "message": {"model": "<synthetic>", "content": [{"type": "text", "text": error}]},
    }
    result = {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "api_error_status": None,
        "stop_reason": "stop_sequence",
        "result": error,
    }
    reader, shown = read(
        [
            INIT,
            j({**retry, "attempt": 1, "retry_delay_ms": 535.8}),
            j({**retry, "attempt": 2, "retry_delay_ms": 8100.4, "error_status": 529}),
            j(synthetic),
            j(result),
        ]
    )
    assert shown[1:3] == [
        "retrying the API: attempt 1 of 2, 0.5 s",
        "retrying the API: attempt 2 of 2, 8 s (HTTP 529)",
    ]
    report = reader.report()
    assert (report.outcome, report.transient) == ("api_error", True)
    assert report.stop_reason is None  # never the result's subtype "success"
    # the same text without the assistant line's error still reads as unreachable
    assert read([INIT, j(result)])[0].outcome() == ("api_error", True)
    other = {**result, "result": "Something else broke"}
    assert read([INIT, j(other)])[0].outcome() == ("agent_error", False)


def test_claude_stop_reason_is_the_results_own() -> None:
    ended = j({**json.loads(RESULT), "stop_reason": "end_turn"})
    assert read([INIT, ended])[0].report().stop_reason == "end_turn"
    failed = j({"type": "result", "subtype": "error_max_turns", "is_error": False})
    assert read([INIT, failed])[0].report().stop_reason == "error_max_turns"
    assert read([INIT])[0].report().stop_reason == "no_result"


def test_claude_broken_and_unknown_lines_are_not_fatal() -> None:
    broken = '{"type":"assistant","message":{"content":[{"type":"text","text":"a{"type":"user"'
    reader, shown = read([INIT, broken, j({"type": "new_kind"}), "[1, 2]", RESULT])
    assert broken in shown
    assert reader.not_json_lines == 2
    assert reader.unknown_lines == 1
    assert reader.report().outcome == "ok"


@given(st.lists(st.text(max_size=40), max_size=20))
def test_claude_reader_never_raises(lines: list[str]) -> None:
    reader, _ = read(lines)
    assert reader.report().outcome in {"ok", "agent_error", "api_error", "rate_limited"}


def test_tool_line_shortens() -> None:
    assert tool_line("Read", {"file_path": "a.py"}) == "▸ Read  a.py"
    assert tool_line("Bash", {"command": "x" * 200}, width=10) == "▸ Bash  xxxxxxxxx…"
    assert tool_line("Todo", {"items": [1]}) == '▸ Todo  {"items": [1]}'


CODEX = [
    j({"type": "thread.started", "thread_id": "t-9"}),
    j({"type": "turn.started"}),
    j({"type": "item.completed", "item": {"id": "i0", "type": "reasoning", "text": "thinking"}}),
    j(
        {
            "type": "item.started",
            "item": {"id": "i1", "type": "command_execution", "command": "bash -lc ls"},
        }
    ),
    j(
        {
            "type": "item.completed",
            "item": {"id": "i1", "type": "command_execution", "exit_code": 0},
        }
    ),
    j({"type": "item.completed", "item": {"id": "i2", "type": "agent_message", "text": "Done."}}),
    j(
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 24763, "cached_input_tokens": 24448, "output_tokens": 122},
        }
    ),
]


def test_codex_tokens_subtract_cached_input() -> None:
    reader = CodexStreamReader()
    shown = [line for raw in CODEX for line in reader.feed(raw)]
    report = reader.report()
    assert report.outcome == "ok"
    assert report.tokens == Tokens(input=315, output=122, cache_read=24448)
    assert report.session_id == "t-9"
    assert report.final_text == "Done."
    assert "▸ Bash  bash -lc ls" in shown


def test_codex_failures() -> None:
    def outcome(*lines: str) -> tuple[str, bool]:
        reader = CodexStreamReader()
        for line in lines:
            reader.feed(line)
        return reader.outcome()

    start = CODEX[0]
    failed = j(
        {"type": "turn.failed", "error": {"message": "exceeded retry limit, last status: 429"}}
    )
    # a request-rate limit (not a usage window) is waited out like an outage
    assert outcome(start, failed) == ("api_error", True)
    overloaded = j({"type": "turn.failed", "error": {"message": "stream disconnected: 503"}})
    assert outcome(start, overloaded) == ("api_error", True)
    assert outcome(start) == ("agent_error", False)
    assert outcome(start, "not json", j({"type": "error", "message": "boom"})) == (
        "agent_error",
        False,
    )


@pytest.mark.parametrize(
    ("backend", "command", "model", "argv"),
    [
        (
            ClaudeBackend(),
            "",
            "m",
            [
                "claude",
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--permission-mode",
                "bypassPermissions",
                "--model",
                "m",
                "x",
            ],
        ),
        (
            ClaudeBackend(permission_mode=""),
            "cc --a",
            "",
            ["cc", "--a", "-p", "--output-format", "stream-json", "--verbose", "x"],
        ),
        (
            CodexBackend(),
            "",
            "m",
            [
                "codex",
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--sandbox",
                "workspace-write",
                "--model",
                "m",
                "x",
                "-",
            ],
        ),
        (
            ForgeflareBackend(),
            "",
            "m",
            ["py", "-P", "-m", "forgeflare", "run", "--model", "m", "x"],
        ),
        (CommandBackend(), "a b", "m", ["a", "b", "x"]),
    ],
)
def test_backend_argv(backend: Backend, command: str, model: str, argv: list[str]) -> None:
    assert backend.argv(python="py", model=model, command=command, extra=["x"]) == argv


def test_backend_seam_prompt_and_budget() -> None:
    assert ForgeflareBackend().budget_argv(1.5) == ["--max-cost", "1.500000"]
    assert ForgeflareBackend().budget_argv(-1.0) == ["--max-cost", "0.000000"]
    # Claude Code has a budget flag (checked between its API requests); Codex has none.
    assert ClaudeBackend().budget_argv(1.5) == ["--max-budget-usd", "1.500000"]
    for other in (CommandBackend(), CodexBackend()):
        assert other.budget_argv(1.5) == []
    assert COMPLETE_TAG in ClaudeBackend().prompt_suffix
    assert COMPLETE_TAG in CodexBackend().prompt_suffix
    assert CommandBackend().prompt_suffix == ""  # a command's prompt is the user's own
    assert ForgeflareBackend().prompt_suffix == BLOCKED_PROMPT
    assert BLOCKED_TAG in ClaudeBackend().prompt_suffix


def test_claude_tag_in_the_first_of_two_text_blocks_completes() -> None:
    """Claude Code writes one line per block; its result holds only the last block."""

    def block(text: str) -> str:
        return j(
            {
                "type": "assistant",
                "message": {"id": "m9", "content": [{"type": "text", "text": text}]},
            }
        )

    result = {**json.loads(RESULT), "result": "Summary: fixed two tests."}
    reader, _ = read(
        [INIT, TEXT, TOOL, block("All tests pass.\n<loop-done>COMPLETE</loop-done>"),
         block("Summary: fixed two tests."), j(result)]
    )  # fmt: skip
    assert reader.report().final_text == (
        "All tests pass.\n<loop-done>COMPLETE</loop-done>\nSummary: fixed two tests."
    )
    report = ClaudeBackend().report(reader, ChildEnd(exit_code=0), None, None)
    assert report.signal == "<loop-done>COMPLETE</loop-done>"
    # a tag in a message that then called a tool does not count
    calling = j(
        {
            "type": "assistant",
            "message": {
                "id": "m9",
                "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "ls"}}],
            },
        }
    )
    reader, _ = read([INIT, block(f"Done.\n{COMPLETE_TAG}"), calling, j(result)])
    assert ClaudeBackend().report(reader, ChildEnd(exit_code=0), None, None).signal is None


def test_claude_streamed_cost_counts_each_message_once_then_the_result() -> None:
    import json

    from forgeflare.supervisor.backends import ClaudeStreamReader

    reader = ClaudeStreamReader()
    assert reader.streamed_cost_usd() == 0.0
    reader.feed(json.dumps({"type": "system", "subtype": "init", "model": "claude-opus-4-6"}))
    usage = {"input_tokens": 1_000_000, "output_tokens": 0}
    message = {"id": "m1", "usage": usage, "content": [{"type": "text", "text": "a"}]}
    reader.feed(json.dumps({"type": "assistant", "message": message}))
    reader.feed(json.dumps({"type": "assistant", "message": message}))  # a second block
    assert reader.streamed_cost_usd() == 5.0
    sub = {"type": "assistant", "parent_tool_use_id": "t", "message": {**message, "id": "m2"}}
    reader.feed(json.dumps(sub))  # a subagent's request costs too
    assert reader.streamed_cost_usd() == 10.0
    reader.feed(json.dumps({"type": "result", "subtype": "success", "total_cost_usd": 7.5}))
    assert reader.streamed_cost_usd() == 7.5  # Claude Code's own sum wins once it comes
