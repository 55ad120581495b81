"""What ``forgeflare run`` prints and sends back: only accepted answers, server blocks verbatim."""

from __future__ import annotations

from pathlib import Path

from agent_support import run_agent, text_response
from mockapi_support import MockAPI


def test_piped_stdout_carries_only_the_accepted_answer(tmp_path: Path, mock_api: MockAPI) -> None:
    cut = {
        "content": [{"type": "text", "text": "PARTIAL-ANSWER-THAT-WAS-CUT and more words"}],
        "chunk_chars": 8,
        "truncate_after_events": 4,
    }
    broken = {
        "content": [{"type": "text", "text": "PARTSECOND-BROKEN and more words"}],
        "chunk_chars": 8,
        "stream_error": {"type": "overloaded_error", "after_events": 4},
    }
    server = mock_api({"responses": [cut, broken, text_response("FINAL-ANSWER")]})
    # The two retries back off 2 s and 4 s; scaled to 1 % they prove the same in 60 ms.
    done = run_agent(tmp_path, server.url, env={"FORGEFLARE_TIME_SCALE": "0.01"})
    assert done.returncode == 0, done.stderr
    assert done.stdout == "FINAL-ANSWER\n"
    assert done.stderr.count("Retrying from beginning of response") == 2
    assert len(server.requests()) == 3


def test_a_failed_answer_is_not_printed_when_the_agent_gives_up(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    server = mock_api(
        {
            "responses": [
                {
                    "content": [{"type": "text", "text": "HALF-AN-ANSWER that breaks"}],
                    "chunk_chars": 6,
                    "stream_error": {"type": "invalid_request_error", "after_events": 4},
                }
            ]
        }
    )
    done = run_agent(tmp_path, server.url)
    assert done.returncode != 0
    assert "HALF-AN-ANSWER" not in done.stdout
    assert "invalid_request_error" in done.stderr


def test_pause_turn_sends_server_tool_blocks_back_as_received(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    search = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"}
    search_input = {"query": "trio nursery"}
    result = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [
            {
                "type": "web_search_result",
                "url": "https://example.invalid/trio",
                "title": "Trio",
                "encrypted_content": "abc123",
            }
        ],
    }
    paused = {
        "content": [
            {"type": "text", "text": "Searching."},
            {**search, "input": search_input},
            result,
        ],
        "stop_reason": "pause_turn",
        "usage": {"input_tokens": 50, "output_tokens": 10},
    }
    server = mock_api({"responses": [paused, text_response("Found it.")]})
    done = run_agent(tmp_path, server.url)
    assert done.returncode == 0, done.stderr
    assert "Found it." in done.stdout
    first, second = server.requests()
    sent_back = second["body"]["messages"][-1]
    assert sent_back["role"] == "assistant"
    blocks = [{k: v for k, v in b.items() if k != "cache_control"} for b in sent_back["content"]]
    assert blocks == [
        {"type": "text", "text": "Searching."},
        {**search, "input": search_input},
        result,
    ]
    assert len(second["body"]["messages"]) == len(first["body"]["messages"]) + 1
