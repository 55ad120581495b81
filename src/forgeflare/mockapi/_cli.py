"""Command-line commands of this part (registered on the root app by ``forgeflare.cli``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register"]

_HELP = """Serve a scripted, protocol-accurate Anthropic Messages API on loopback.

POST /v1/messages answers with the script's next response (a server-sent-event stream when
the request has "stream": true, a JSON message otherwise), across connections and client
processes; POST /v1/messages/count_tokens answers a plausible count. The script is JSON
(or TOML for *.toml files):

  {"responses": [
     {"content": [{"type": "text", "text": "Running the tests."},
                  {"type": "tool_use", "name": "Bash", "input": {"command": "pytest -q"}}],
      "stop_reason": "tool_use", "usage": {"input_tokens": 1200, "output_tokens": 40}},
     {"error": {"status": 529, "type": "overloaded_error", "headers": {"retry-after": "0"}}},
     {"stream_error": {"type": "overloaded_error", "after_events": 3}},
     {"truncate_after_events": 4, "content": [{"type": "text", "text": "cut"}]},
     {"content": [{"type": "thinking", "thinking": "...", "signature": "sig"}],
      "delay_ms": 20, "stall": {"after_events": 2, "ms": 5000}}],
   "when_exhausted": "error"}

Blocks: text, tool_use (id generated when absent), thinking, redacted_thinking. Other
response keys: stop_sequence, model, event_delay_ms, chunk_chars, truncate_mode
("eof" or "drop"). Once the script is used up the server answers a 500 api_error with
x-should-retry: false, so clients stop at once ("when_exhausted": "end_turn" answers a plain
end_turn text instead). An error's "headers" may carry retry-after and the
anthropic-ratelimit-unified-* headers of a usage limit.
A response with "repeat_for_ms": N answers every request for N ms of wall clock from the
first one it answers, then the script moves on (an outage of that length).

Side requests (a client's title or summary calls) do not consume the script: a request with
no tools whose system prompt asks for a title, a summary, a topic or a quota, or whose
max_tokens is 1, is answered "Loop session". Prompt caching is counted: cache_read and
cache_creation input tokens follow the cache_control prefixes the server has seen (a
scripted usage with input_tokens wins). --record redacts x-api-key and authorization
(key_sha256 holds the first 16 hex digits of the key's SHA-256).

For parallel clients a script may hold conversations instead of "responses":
{"conversations": [{"match": "parser", "responses": [...]}, ...]}. A request goes to the
first conversation whose "match" is in its first user message, each consumed in its own
order; side requests are recognised first; an unmatched request gets a 500 naming it.

--api responses serves the OpenAI Responses API the Codex CLI speaks instead, at
http://HOST:PORT/v1 (Codex's base_url), from a script of steps, one run per Codex thread:

  {"steps": [{"exec": "pytest -q"}, {"text": "Done.", "usage": {"input": 900, "output": 20}}]}
  {"runs": [[{"status": 429, "headers": {"retry-after": "7200"}}], [{"text": "ok"}]]}

A step is {"text": ...} (a message), {"exec": "cmd"} (a command Codex runs, then it asks
again), {"patch": "*** Begin Patch..."}, {"status": N, "headers": {...}, "body": {...}} (an
HTTP error) or {"cut": true} (the stream ends early); "times": N answers N requests. The last
step answers every further request; --record works alike, --verbose applies to messages only.

Prints "listening on http://HOST:PORT" when ready; stops cleanly on SIGINT or SIGTERM.
A malformed script is reported in one line (exit status 2) before anything listens.
"""


def _mock_api(
    script: Annotated[
        Path,
        typer.Option(
            "--script", metavar="FILE", help="Script of responses (JSON, or TOML if *.toml)."
        ),
    ],
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[
        int,
        typer.Option("--port", min=0, max=65535, help="Port to listen on; 0 takes a free port."),
    ] = 0,
    record: Annotated[
        Path | None,
        typer.Option(
            "--record",
            metavar="FILE",
            help="Append one JSON line per request (method, path, headers, body), "
            "flushed before the response is sent.",
        ),
    ] = None,
    port_file: Annotated[
        Path | None,
        typer.Option(
            "--port-file",
            metavar="FILE",
            help="Write the bound port here (atomically) once the socket listens.",
        ),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Log one line per request on stderr.")
    ] = False,
    api: Annotated[
        str,
        typer.Option(
            "--api",
            metavar="messages|responses",
            help="The protocol: the Anthropic Messages API, or the OpenAI Responses API "
            "(Codex) at /v1/responses with a script of steps.",
        ),
    ] = "messages",
) -> None:
    from forgeflare.mockapi._listen import Listen

    listen = Listen(host, port, port_file, record)
    if api == "responses":
        from forgeflare.mockapi._responses import load_responses_script, serve_responses

        serve_responses(load_responses_script(script), listen)
        return
    if api != "messages":
        from forgeflare._errors import ConfigError

        raise ConfigError(f"--api {api}: expected messages or responses")
    # Imported here so that `forgeflare --help` does not pay for trio and h11.
    from forgeflare.mockapi._script import load_script
    from forgeflare.mockapi._server import run_server

    run_server(load_script(script), listen, verbose=verbose)


def register(app: typer.Typer) -> None:
    """Add this part's commands to ``app``."""
    app.command(
        "mock-api",
        help=_HELP,
        short_help="Serve a scripted, protocol-accurate Messages API (offline).",
    )(_mock_api)
