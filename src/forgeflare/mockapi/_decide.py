"""The pure core of the server: what to answer to one request, given the script's position.

``decide`` looks at a request (method, path, headers, body bytes) and the number of scripted
responses used so far, and returns the reply to send plus whether it used up a response. The
server (``_server``) only reads requests, calls this, and writes the reply.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from forgeflare.mockapi._render import (
    Event,
    cache_usage,
    count_tokens,
    error_body,
    make_id,
    message_events,
    render_events,
    render_message,
)
from forgeflare.mockapi._script import (
    ERROR_STATUS,
    Script,
    ScriptResponse,
    StallSpec,
    TextSpec,
)

__all__ = [
    "COUNT_TOKENS_PATH",
    "MESSAGES_PATH",
    "JSONReply",
    "MockRequest",
    "Reply",
    "ScriptReply",
    "StreamReply",
    "choose_conversation",
    "decide",
    "first_user_text",
    "record_entry",
]

MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"


@dataclass(frozen=True)
class MockRequest:
    """One HTTP request as the server read it; ``headers`` has lower-case names."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes
    query: str = ""


@dataclass(frozen=True)
class JSONReply:
    """A complete JSON response (a message, an error, a token count)."""

    status: int
    body: dict[str, Any]
    headers: tuple[tuple[str, str], ...] = ()
    delay_ms: int = 0


@dataclass(frozen=True)
class StreamReply:
    """A ``text/event-stream`` response: the events to send and how to pace and end them."""

    events: list[Event]
    headers: tuple[tuple[str, str], ...] = ()
    delay_ms: int = 0
    event_delay_ms: int = 0
    stall: StallSpec | None = None
    truncated: bool = False
    """The stream stops early: end the body and close the connection."""
    drop: bool = False
    """Drop the connection after the events without ending the HTTP body."""


Reply = JSONReply | StreamReply


@dataclass(frozen=True)
class ScriptReply:
    """The reply; whether it used up a place in the script; which scripted response it was.

    ``response_index`` is ``None`` for requests that use no scripted response (errors of the
    request itself, ``count_tokens``) and for answers given after the script is exhausted.
    """

    reply: Reply
    consumed: bool = False
    response_index: int | None = None
    conversation: int | None = None
    """The conversation of a multi-conversation script whose response was used."""


def _error(status: int, error_type: str, message: str, request_id: str) -> JSONReply:
    return JSONReply(status, error_body(error_type, message), (("request-id", request_id),))


def _has_auth(headers: Mapping[str, str]) -> bool:
    if headers.get("x-api-key"):
        return True
    auth = headers.get("authorization", "")
    return auth.lower().startswith("bearer ") and bool(auth[7:].strip())


def _validate_messages_body(body: Mapping[str, Any], *, count_only: bool) -> str | None:
    """The first problem with a request body, worded like the real API, or ``None``."""
    if not isinstance(body.get("model"), str):
        return "model: Field required"
    if not isinstance(body.get("messages"), list):
        return "messages: Field required"
    if count_only:
        return None
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
        return "max_tokens: Field required"
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        return "stream: Input should be a valid boolean"
    return None


SIDE_REQUEST_TEXT = "Loop session"
_SIDE_WORDS = ("title", "summar", "topic", "quota", "name this", "commit message for")


def is_side_request(body: Mapping[str, Any]) -> bool:
    """Is this a client's side request rather than the scripted conversation?

    The documented rule: a request with no ``tools`` whose system prompt asks for a title, a
    summary, a topic or a quota check (Claude Code's title and summary calls), or whose
    ``max_tokens`` is 1 (a quota probe). Conversation requests of an agent carry its tools.
    """
    if body.get("tools"):
        return False
    if body.get("max_tokens") == 1:
        return True
    system = body.get("system")
    if isinstance(system, list):
        system = " ".join(b.get("text", "") for b in system if isinstance(b, dict))
    text = str(system or "").lower()
    return any(word in text for word in _SIDE_WORDS)


def first_user_text(body: Mapping[str, Any]) -> str:
    """The text of the request's first user message (text blocks joined)."""
    for message in body.get("messages") or []:
        if not isinstance(message, Mapping) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, Mapping))
        return ""
    return ""


def choose_conversation(script: Script, body: Mapping[str, Any]) -> int | None:
    """The first conversation whose ``match`` is in the first user message or is the name of
    one of the request's tools (a loop's reviewer is matched by ``verdict``), or ``None``."""
    text = first_user_text(body)
    tools = body.get("tools")
    names = (
        {t.get("name") for t in tools if isinstance(t, Mapping)}
        if isinstance(tools, list)
        else set()
    )
    return next(
        (i for i, c in enumerate(script.conversations) if c.match in text or c.match in names),
        None,
    )


def _unmatched(body: Mapping[str, Any], script: Script, rid: str) -> JSONReply:
    text = " ".join(first_user_text(body).split())
    shown = text[:80] + ("..." if len(text) > 80 else "")
    matches = ", ".join(repr(c.match) for c in script.conversations)
    message = f"mock script: no conversation matches the request {shown!r} (matches: {matches})"
    spent = _error(500, "api_error", message, rid)
    # a retry would be just as unmatched
    return JSONReply(spent.status, spent.body, (*spent.headers, ("x-should-retry", "false")))


def _exhausted_response(script: Script) -> ScriptResponse:
    return ScriptResponse(content=[TextSpec(type="text", text=script.exhausted_text)])


def decide(
    script: Script,
    request: MockRequest,
    *,
    used: int,
    request_number: int,
    cached: set[str] | None = None,
    conversation_used: Mapping[int, int] | None = None,
) -> ScriptReply:
    """Decide the reply to one request.

    ``used`` is how many scripted responses earlier requests consumed; ``request_number``
    (0-based, every request counts) seeds the ``request-id`` header. Only a well-formed
    ``POST /v1/messages`` consumes a response. In a multi-conversation script
    ``conversation_used`` counts each conversation's used responses.
    """
    rid = make_id("req", request_number)
    checked = _checked_body(script, request, rid)
    if isinstance(checked, ScriptReply):
        return checked
    parsed = checked
    if request.path == COUNT_TOKENS_PATH:
        return ScriptReply(
            JSONReply(200, {"input_tokens": count_tokens(parsed)}, (("request-id", rid),))
        )
    if is_side_request(parsed):
        return _side_reply(parsed, rid)
    index, responses, conv, what = used, script.responses, None, "mock script"
    if script.conversations:
        # Side requests were answered above: they belong to no conversation.
        conv = choose_conversation(script, parsed)
        if conv is None:
            return ScriptReply(_unmatched(parsed, script, rid))
        index = (conversation_used or {}).get(conv, 0)
        responses = script.conversations[conv].responses
        what = f"mock script conversation {script.conversations[conv].match!r}"
    exhausted = index >= len(responses)
    if exhausted and script.when_exhausted == "error":
        n = len(responses)
        spent = _error(500, "api_error", f"{what} exhausted after {n} responses", rid)
        # clients must stop at once, not retry a script that has nothing left
        final = JSONReply(spent.status, spent.body, (*spent.headers, ("x-should-retry", "false")))
        return ScriptReply(final, consumed=True, conversation=conv)
    response = _exhausted_response(script) if exhausted else responses[index]
    reply = _scripted_reply(response, parsed, index=index, rid=rid, cached=cached)
    return ScriptReply(reply, True, None if exhausted else index, conv)


def _checked_body(script: Script, request: MockRequest, rid: str) -> dict[str, Any] | ScriptReply:
    """The request's JSON body, or the error reply a real API gives a bad request."""
    method, path = request.method, request.path
    if path not in (MESSAGES_PATH, COUNT_TOKENS_PATH):
        return ScriptReply(_error(404, "not_found_error", f"Not found: {method} {path}", rid))
    if method != "POST":
        return ScriptReply(
            _error(405, "invalid_request_error", f"Method {method} not allowed on {path}", rid)
        )
    if script.require_auth and not _has_auth(request.headers):
        return ScriptReply(_error(401, "authentication_error", "x-api-key header is required", rid))
    try:
        parsed = json.loads(request.body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        parsed = None
    if not isinstance(parsed, dict):
        return ScriptReply(
            _error(400, "invalid_request_error", "The request body is not a JSON object", rid)
        )
    problem = _validate_messages_body(parsed, count_only=path == COUNT_TOKENS_PATH)
    if problem is not None:
        return ScriptReply(_error(400, "invalid_request_error", problem, rid))
    return parsed


def _side_reply(parsed: dict[str, Any], rid: str) -> ScriptReply:
    """Not part of the scripted conversation (a title, a summary): answered, not consumed."""
    side = ScriptResponse(content=[TextSpec(type="text", text=SIDE_REQUEST_TEXT)])
    model = str(parsed["model"])
    tokens = count_tokens(parsed)
    if parsed.get("stream", False):
        events = render_events(side, model=model, index=0, default_input_tokens=tokens)
        return ScriptReply(StreamReply(events, (("request-id", rid),)))
    message = render_message(side, model=model, index=0, default_input_tokens=tokens)
    return ScriptReply(JSONReply(200, message, (("request-id", rid),)))


def _scripted_reply(
    response: ScriptResponse,
    parsed: dict[str, Any],
    *,
    index: int,
    rid: str,
    cached: set[str] | None,
) -> Reply:
    """The reply one scripted response makes: an error, a stream or a message."""
    headers_out: tuple[tuple[str, str], ...] = (("request-id", rid),)
    if response.error is not None:
        err = response.error
        return JSONReply(
            err.error_status,
            error_body(err.error_type, err.error_message),
            headers_out + tuple((k.lower(), v) for k, v in err.headers.items()),
            response.delay_ms,
        )
    model = str(parsed["model"])
    input_tokens, read, write = cache_usage(parsed, cached if cached is not None else set())
    message = render_message(
        response,
        model=model,
        index=index,
        default_input_tokens=input_tokens,
        default_cache=(read, write),
    )
    if parsed.get("stream", False):
        events = message_events(response, message)
        truncated = response.truncate_after_events is not None
        return StreamReply(
            events,
            headers_out,
            response.delay_ms,
            response.event_delay_ms,
            response.stall,
            truncated=truncated,
            drop=truncated and response.truncate_mode == "drop",
        )
    if response.stream_error is not None:
        # Without a stream the same failure can only be an HTTP error.
        err_s = response.stream_error
        return JSONReply(
            ERROR_STATUS.get(err_s.type, 500),
            error_body(err_s.type, err_s.error_message),
            headers_out,
            response.delay_ms,
        )
    return JSONReply(200, message, headers_out, response.delay_ms)


def _credential(headers: Mapping[str, str]) -> str:
    lower = {k.lower(): v for k, v in headers.items()}
    bearer = lower.get("authorization", "")
    return lower.get("x-api-key") or bearer.removeprefix("Bearer ").strip()


_SECRET_HEADERS = frozenset({"x-api-key", "authorization", "proxy-authorization", "cookie"})


def record_entry(request: MockRequest, *, response_index: int | None) -> dict[str, Any]:
    """One line of the ``--record`` file: the request, its body parsed as JSON when it is."""
    headers, body = request.headers, request.body
    entry: dict[str, Any] = {
        "method": request.method,
        "path": request.path,
        "query": request.query,
        "headers": {
            k: ("[redacted]" if k.lower() in _SECRET_HEADERS else v) for k, v in headers.items()
        },
    }
    key = _credential(headers)
    if key:
        # Which key came, without writing it: tests check a key arrived by another channel.
        entry["key_sha256"] = hashlib.sha256(key.encode()).hexdigest()[:16]
    try:
        entry["body"] = json.loads(body) if body else None
    except (UnicodeDecodeError, json.JSONDecodeError):
        entry["body"] = None
        entry["body_text"] = body.decode("utf-8", errors="replace")
    entry["response_index"] = response_index
    return entry
