"""The I/O shell of the mock server: trio sockets, h11 framing, the record file.

Each connection is served in its own task; ``_State.handle`` runs without awaiting between
deciding, counting and recording, so in trio's single thread every request takes the next
scripted response atomically, whatever connection or client process it came from.
"""

from __future__ import annotations

import json
import signal
import sys
import traceback
from collections.abc import Callable
from functools import partial
from http import HTTPStatus
from pathlib import Path
from typing import IO

import h11
import trio

from forgeflare.mockapi._decide import (
    JSONReply,
    MockRequest,
    ScriptReply,
    StreamReply,
    decide,
    record_entry,
)
from forgeflare.mockapi._errors import MockAPIError, MockListenError
from forgeflare.mockapi._listen import Listen, write_port_file
from forgeflare.mockapi._render import encode_event, error_body
from forgeflare.mockapi._repeat import RepeatWindows
from forgeflare.mockapi._script import Script

__all__ = ["run_server", "serve"]

_READ_SIZE = 65536
_WRITE_SIZE = 32768


class _State:
    """Shared by all connections: script position, request count, record file."""

    def __init__(self, script: Script, record: IO[str] | None, log: IO[str] | None) -> None:
        self.script = script
        self.record = record
        self.log = log
        self.used = 0
        self.conversation_used: dict[int, int] = {}
        """Responses used per conversation of a multi-conversation script."""
        self.requests = 0
        self.cached: set[str] = set()
        """Prompt-cache prefixes seen so far (hashes), for cache_read/creation tokens."""
        self.repeats = RepeatWindows()
        """When each ``repeat_for_ms`` response began to repeat."""

    def handle(self, method: str, target: str, headers: dict[str, str], body: bytes) -> ScriptReply:
        path, _, query = target.partition("?")
        request = MockRequest(method, path, headers, body, query)
        number = self.requests
        self.requests += 1
        self.used = self.repeats.position(self.script, self.used)
        try:
            decision = decide(
                self.script,
                request,
                used=self.used,
                request_number=number,
                cached=self.cached,
                conversation_used=self.conversation_used,
            )
        except Exception as exc:  # a bug here must cost one request, not the server
            traceback.print_exc(file=sys.stderr)
            reply = JSONReply(500, error_body("api_error", f"mock server bug: {exc!r}"))
            decision = ScriptReply(reply)
        index = decision.response_index
        if decision.consumed and decision.conversation is not None:
            conv = decision.conversation
            self.conversation_used[conv] = self.conversation_used.get(conv, 0) + 1
        elif decision.consumed and not (
            index is not None and self.repeats.holds(self.script, index)
        ):
            self.used += 1
        if self.record is not None:
            entry = record_entry(request, response_index=decision.response_index)
            if decision.conversation is not None:
                entry["conversation"] = decision.conversation
            # Flushed before the reply is sent: a client that has its answer finds the line.
            self.record.write(json.dumps(entry, ensure_ascii=False) + "\n")
            self.record.flush()
        if self.log is not None:
            status = 200 if isinstance(decision.reply, StreamReply) else decision.reply.status
            kind = "stream" if isinstance(decision.reply, StreamReply) else "json"
            idx = decision.response_index
            print(
                f"mock-api: {method} {path} -> {status} {kind}"
                + (f" (response {idx})" if idx is not None else ""),
                file=self.log,
                flush=True,
            )
        return decision


def _reason(status: int) -> bytes:
    try:
        return HTTPStatus(status).phrase.encode()
    except ValueError:
        return b"Overloaded" if status == 529 else b""


class _Conn:
    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.h11 = h11.Connection(h11.SERVER)

    async def send(self, event: h11.Event) -> None:
        data = self.h11.send(event)
        if data:
            await self.stream.send_all(data)

    async def read_request(self) -> tuple[h11.Request, bytes] | None:
        request: h11.Request | None = None
        body = bytearray()
        while True:
            event = self.h11.next_event()
            if event is h11.NEED_DATA:
                if self.h11.they_are_waiting_for_100_continue:
                    # curl asks before sending a large body; answering saves it a 1 s wait.
                    await self.send(h11.InformationalResponse(status_code=100, headers=[]))
                self.h11.receive_data(await self.stream.receive_some(_READ_SIZE))
            elif isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                assert request is not None
                return request, bytes(body)
            else:  # ConnectionClosed or PAUSED: nothing more to serve here
                return None


async def _send_json(conn: _Conn, reply: JSONReply) -> None:
    if reply.delay_ms:
        await trio.sleep(reply.delay_ms / 1000)
    data = json.dumps(reply.body, ensure_ascii=False).encode()
    headers = [
        ("content-type", "application/json"),
        ("content-length", str(len(data))),
        *reply.headers,
    ]
    await conn.send(
        h11.Response(status_code=reply.status, headers=headers, reason=_reason(reply.status))
    )
    await conn.send(h11.Data(data=data))
    await conn.send(h11.EndOfMessage())


async def _flush(conn: _Conn, pending: list[bytes]) -> None:
    if pending:
        data = b"".join(pending)
        pending.clear()
        await conn.stream.send_all(data)


async def _send_stream(conn: _Conn, reply: StreamReply) -> bool:
    """Send the stream; ``False`` when the connection must close (truncated or dropped)."""
    if reply.delay_ms:
        await trio.sleep(reply.delay_ms / 1000)
    headers = [
        ("content-type", "text/event-stream; charset=utf-8"),
        ("cache-control", "no-cache"),
        *reply.headers,
    ]
    if reply.truncated:
        headers.append(("connection", "close"))
    await conn.send(h11.Response(status_code=200, headers=headers, reason=b"OK"))
    stall = reply.stall
    pending: list[bytes] = []
    size = 0
    for n, (name, data) in enumerate(reply.events):
        pause = 0
        if stall is not None and n == stall.after_events:
            pause = stall.ms
        elif n and reply.event_delay_ms:
            pause = reply.event_delay_ms
        if pause:
            # Everything before a pause is on the wire before it: clients see it in real time.
            await _flush(conn, pending)
            size = 0
            await trio.sleep(pause / 1000)
        # One HTTP chunk per event. Events with no pause between them share a write (they
        # would arrive within microseconds anyway); that keeps large streams fast.
        chunk = conn.h11.send(h11.Data(data=encode_event(name, data))) or b""
        pending.append(chunk)
        size += len(chunk)
        if size >= _WRITE_SIZE:
            await _flush(conn, pending)
            size = 0
    await _flush(conn, pending)
    if stall is not None and stall.after_events >= len(reply.events):
        await trio.sleep(stall.ms / 1000)
    if reply.drop:
        return False
    await conn.send(h11.EndOfMessage())
    return not reply.truncated


async def _serve_connection(state: _State, stream: trio.SocketStream) -> None:
    conn = _Conn(stream)
    try:
        while True:
            got = await conn.read_request()
            if got is None:
                break
            request, body = got
            headers = {
                name.decode("latin-1").lower(): value.decode("latin-1")
                for name, value in request.headers
            }
            decision = state.handle(
                request.method.decode("latin-1"), request.target.decode("latin-1"), headers, body
            )
            reply = decision.reply
            if isinstance(reply, StreamReply):
                if not await _send_stream(conn, reply):
                    break
            else:
                await _send_json(conn, reply)
            if conn.h11.our_state is not h11.DONE or conn.h11.their_state is not h11.DONE:
                break
            conn.h11.start_next_cycle()
    except (trio.BrokenResourceError, trio.ClosedResourceError, h11.ProtocolError):
        pass  # the client went away or spoke garbage: nothing to answer
    finally:
        await trio.aclose_forcefully(stream)


def _open_record(path: Path | None) -> IO[str] | None:
    if path is None:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return open(path, "a", encoding="utf-8")  # closed when serve ends
    except OSError as exc:
        raise MockAPIError(f"cannot open record file {path}: {exc.strerror or exc}") from exc


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


async def serve(
    script: Script,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    record_path: Path | None = None,
    port_file: Path | None = None,
    announce: Callable[[str], None] | None = None,
    log: IO[str] | None = None,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``script`` until cancelled; ``task_status.started`` gets the bound port.

    After binding: writes ``port_file`` atomically, then calls ``announce`` with
    ``"listening on http://HOST:PORT"``. ``record_path`` gets one JSON line per request,
    flushed before the reply. ``log`` (if given) gets one line per request.
    """
    try:
        listeners = await trio.open_tcp_listeners(port, host=host)
    except OSError as exc:
        raise MockListenError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    # Several addresses (IPv4 and IPv6 of "localhost") with port 0 would get different
    # ports: serve the first only, so the one printed port is the one that answers.
    listener, extra = listeners[0], listeners[1:]
    for other in extra:
        await other.aclose()
    bound = listener.socket.getsockname()[1]
    try:
        record = _open_record(record_path)
    except BaseException:
        await listener.aclose()
        raise
    try:
        if port_file is not None:
            write_port_file(port_file, bound)
        if announce is not None:
            announce(f"listening on {_url(host, bound)}")
        state = _State(script, record, log)
        task_status.started(bound)
        await trio.serve_listeners(partial(_serve_connection, state), [listener])
    finally:
        if record is not None:
            record.close()


async def _main(script: Script, listen: Listen, verbose: bool) -> int | None:
    # The receiver is open before the port file exists: a SIGTERM sent as soon as the
    # server looks ready still stops it cleanly.
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:

            def announce(line: str) -> None:
                print(line, flush=True)

            await nursery.start(
                partial(
                    serve,
                    script,
                    host=listen.host,
                    port=listen.port,
                    record_path=listen.record,
                    port_file=listen.port_file,
                    announce=announce,
                    log=sys.stderr if verbose else None,
                )
            )
            async for signum in signals:
                nursery.cancel_scope.cancel()
                return signum
    return None


def run_server(script: Script, listen: Listen = Listen(), *, verbose: bool = False) -> None:
    """Run the server in this process until SIGINT or SIGTERM (the CLI's entry point)."""
    # A start-up failure (port in use, bad record path) leaves trio.run wrapped in the
    # nursery's group; forgeflare.cli.main prints the one ForgeflareError inside as one line.
    signum = trio.run(_main, script, listen, verbose)
    if signum is not None:
        print(f"mock-api: stopped by {signal.Signals(signum).name}", file=sys.stderr, flush=True)
