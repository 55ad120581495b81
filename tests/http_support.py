"""Small HTTP servers on loopback for tests: a handler class served on a thread, and a
receiver that keeps the JSON bodies posted to it (what a webhook would get)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["QuietHandler", "json_receiver", "serving"]


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that keeps the test's output free of access-log lines."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[int]:
    """``handler`` served on 127.0.0.1 on a thread of its own; the port (stopped on exit)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def json_receiver() -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """A server that answers every POST 200 and keeps its JSON body: the port, the bodies."""
    got: list[dict[str, Any]] = []

    class Receiver(QuietHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            got.append(json.loads(self.rfile.read(length)))
            self.send_response(200)
            self.end_headers()

    with serving(Receiver) as port:
        yield port, got
