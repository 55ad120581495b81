"""A small local OpenAI Responses API for driving the real Codex CLI offline.

Codex (``wire_api = "responses"``) posts to ``{base_url}/responses`` and reads a stream of
``response.*`` server-sent events. This server answers each request with the next *step* of a
named script; a scenario's ``base_url`` is ``http://HOST:PORT/s/<name>/v1``, so one server
serves many scenarios at once. A scenario is one list of steps per Codex run (a new thread id
starts the next list), so a loop's iterations can meet different APIs. A step is a dict:

- ``{"text": "…"}``: an assistant message, then ``response.completed``;
- ``{"exec": "cmd"}``: an ``exec_command`` function call (Codex runs it and asks again);
- ``{"patch": "*** Begin Patch…"}``: an ``apply_patch`` custom tool call;
- ``{"status": 429, "headers": {…}, "body": {…}}``: an HTTP error with those headers and body;
- ``{"cut": true}``: the stream starts, then the connection closes without ``response.completed``;
- ``"usage": {"input": N, "output": N, "cached": N, "cache_write": N}`` on a streamed step;
- ``"times": N``: the step answers N requests (the last step answers every further request).

The rendering (:func:`responses_events`, :func:`responses_sse`) is pure; the I/O is the
standard library's threading HTTP server, which is all a test needs (Codex makes one request at
a time).
"""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from forgeflare.mockapi._listen import Listen, write_port_file

__all__ = [
    "ResponsesServer",
    "load_responses_script",
    "responses_events",
    "responses_sse",
    "serve_responses",
]

_DEFAULT_USAGE = {"input": 120, "output": 12, "cached": 0, "cache_write": 0}


def _usage(step: Mapping[str, Any]) -> dict[str, Any]:
    given = step.get("usage")
    u = {**_DEFAULT_USAGE, **(given if isinstance(given, dict) else {})}
    return {
        "input_tokens": u["input"],
        "input_tokens_details": {
            "cached_tokens": u["cached"],
            "cache_write_tokens": u["cache_write"],
        },
        "output_tokens": u["output"],
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": u["input"] + u["output"],
    }


def _tool_call(item_type: str, id_prefix: str, n: int, name: str, **call: str) -> dict[str, Any]:
    """A completed tool call output item; ``call`` is its payload (``arguments`` or ``input``)."""
    return {
        "type": item_type,
        "id": f"{id_prefix}_{n}",
        "call_id": f"call_{n}",
        "name": name,
        **call,
        "status": "completed",
    }


def _output_item(step: Mapping[str, Any], n: int) -> dict[str, Any]:
    if "exec" in step:
        arguments = json.dumps({"cmd": step["exec"]})
        return _tool_call("function_call", "fc", n, "exec_command", arguments=arguments)
    if "patch" in step:
        return _tool_call("custom_tool_call", "ctc", n, "apply_patch", input=step["patch"])
    text = str(step.get("text", ""))
    return {
        "type": "message",
        "id": f"msg_{n}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def responses_events(step: Mapping[str, Any], n: int) -> list[tuple[str, dict[str, Any]]]:
    """The ``(event name, data)`` pairs a streamed step sends for request number ``n``."""
    rid = f"resp_{n}"
    created = {"type": "response.created", "response": {"id": rid, "status": "in_progress"}}
    if step.get("cut"):
        return [("response.created", created)]
    item = _output_item(step, n)
    events: list[tuple[str, dict[str, Any]]] = [("response.created", created)]
    events.append(
        (
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": 0, "item": item},
        )
    )
    if item["type"] == "message":
        events.append(
            (
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "delta": item["content"][0]["text"],
                },
            )
        )
    events.append(
        (
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": 0, "item": item},
        )
    )
    completed = {"id": rid, "status": "completed", "output": [item], "usage": _usage(step)}
    events.append(("response.completed", {"type": "response.completed", "response": completed}))
    return events


def responses_sse(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    """Server-sent events as bytes."""
    return b"".join(
        f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events
    )


class _Scenario:
    """One script: a list of runs (one per Codex thread, in the order they first ask), each a
    list of steps; the last run serves every further thread."""

    def __init__(self, runs: list[list[dict[str, Any]]]) -> None:
        self.runs = runs
        self.requests: list[dict[str, Any]] = []
        self.threads: dict[str, int] = {}
        """Requests so far per thread (a Codex ``exec`` is one thread)."""
        self.lock = threading.Lock()

    def next_step(self, body: dict[str, Any], thread: str) -> tuple[dict[str, Any], int]:
        with self.lock:
            n = len(self.requests)
            self.requests.append(body)
            run = list(self.threads).index(thread) if thread in self.threads else len(self.threads)
            left = self.threads.get(thread, 0)
            self.threads[thread] = left + 1
        steps = self.runs[min(run, len(self.runs) - 1)]
        for step in steps:
            times = int(step.get("times", 1))
            if left < times:
                return step, n
            left -= times
        return steps[-1], n


class ResponsesServer:
    """A Responses API on loopback, in a thread: ``with ResponsesServer() as server:``.

    ``server.script(name, steps)`` gives the ``base_url`` of a new scenario;
    ``server.requests(name)`` the request bodies it received.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, record: Path | None = None) -> None:
        self._scenarios: dict[str, _Scenario] = {}
        self._record = record
        """``--record``: one JSON line per request (as the Messages mock writes them)."""
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer((host, port), self._handler())
        self._httpd.daemon_threads = True
        self.url = f"http://{host}:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> ResponsesServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def script(self, name: str, *runs: list[dict[str, Any]]) -> str:
        """Register a scenario: the steps of each Codex run (thread) in turn; its ``base_url``."""
        if not runs or not all(runs):
            raise ValueError(f"scenario {name!r} has a run without steps")
        self._scenarios[name] = _Scenario(list(runs))
        return f"{self.url}/s/{name}/v1"

    def requests(self, name: str) -> list[dict[str, Any]]:
        return list(self._scenarios[name].requests)

    def _write_record(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> None:
        if self._record is None:
            return
        from forgeflare.mockapi._decide import MockRequest, record_entry

        lower = {k.lower(): v for k, v in headers.items()}
        entry = record_entry(MockRequest(method, path, lower, raw), response_index=None)
        with self._lock, open(self._record, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        scenarios = self._scenarios
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: a test reads requests through :meth:`ResponsesServer.requests`."""

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                server._write_record(self.command, self.path, dict(self.headers.items()), raw)
                parts = self.path.split("/")
                scenario = scenarios.get(parts[2]) if len(parts) > 3 and parts[1] == "s" else None
                if self.path == "/v1/responses":  # `forgeflare mock-api --api responses`
                    scenario = scenarios.get("")
                if scenario is None or not self.path.endswith("/responses"):
                    self._reply(404, {}, {"error": {"message": f"no scenario at {self.path}"}})
                    return
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                body = body if isinstance(body, dict) else {}
                thread = self.headers.get("thread-id") or str(body.get("prompt_cache_key"))
                step, n = scenario.next_step(body, thread)
                if "status" in step:
                    self._reply(int(step["status"]), step.get("headers") or {}, step.get("body"))
                    return
                self._stream(step, n)

            def _reply(self, status: int, headers: Mapping[str, str], body: object) -> None:
                data = json.dumps(body if body is not None else {}).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, str(value))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, step: Mapping[str, Any], n: int) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                if step.get("cut"):
                    self.send_header("connection", "close")
                    self.close_connection = True
                else:
                    self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                data = responses_sse(responses_events(step, n))
                if step.get("cut"):
                    self.wfile.write(data)
                    self.wfile.flush()
                    return
                for chunk in _chunks(data):
                    self.wfile.write(chunk)
                self.wfile.flush()

        return Handler


def _chunks(data: bytes) -> Iterator[bytes]:
    yield f"{len(data):x}\r\n".encode() + data + b"\r\n"
    yield b"0\r\n\r\n"


_STEP_KEYS = ("text", "exec", "patch", "status", "cut")


def responses_runs(data: Mapping[str, Any], source: str) -> list[list[dict[str, Any]]]:
    """The runs of a Responses script: ``{"steps": [...]}`` (one run, for every Codex thread)
    or ``{"runs": [[...], ...]}`` (one per thread in turn, the last for every further one).
    Raises :class:`MockScriptError` naming the first problem."""
    from forgeflare.mockapi._errors import MockScriptError

    if "runs" not in data and "steps" not in data:
        raise MockScriptError(
            f"mock script {source}: expected 'steps' or 'runs' (a Messages script, with "
            "'responses', is served without --api responses)"
        )
    runs = data.get("runs") if "runs" in data else [data.get("steps")]
    if not isinstance(runs, list) or not runs:
        raise MockScriptError(f"mock script {source}: 'steps' or 'runs' must be a non-empty list")
    for r, run in enumerate(runs):
        where = f"runs[{r}]" if "runs" in data else "steps"
        if not isinstance(run, list) or not run:
            raise MockScriptError(f"mock script {source}: {where} must be a non-empty list")
        for n, step in enumerate(run):
            if not isinstance(step, dict) or not any(k in step for k in _STEP_KEYS):
                keys = ", ".join(_STEP_KEYS)
                raise MockScriptError(f"mock script {source}: {where}[{n}] needs one of {keys}")
    return runs


def load_responses_script(path: Path) -> list[list[dict[str, Any]]]:
    """Read and check a Responses script file (TOML when it ends in ``.toml``, JSON else)."""
    from forgeflare.mockapi._script import read_script_data

    return responses_runs(read_script_data(path, "'steps' or 'runs'"), str(path))


def serve_responses(
    runs: list[list[dict[str, Any]]], listen: Listen = Listen(), *, announce: Any = print
) -> None:
    """Serve ``runs`` at ``http://HOST:PORT/v1/responses`` until SIGINT or SIGTERM."""
    from forgeflare._errors import ConfigError

    try:
        server = ResponsesServer(listen.host, listen.port, listen.record)
    except OSError as exc:
        raise ConfigError(
            f"cannot listen on {listen.host}:{listen.port}: {exc.strerror or exc}"
        ) from exc
    server.script("", *runs)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with server:
        if listen.port_file is not None:
            write_port_file(listen.port_file, int(server.url.rsplit(":", 1)[1]))
        announce(f"listening on {server.url}", flush=True)
        while not stop.wait(1.0):
            pass
