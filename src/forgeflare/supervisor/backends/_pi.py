"""pi (``pi -p --mode json``) as a loop backend: its class and stream reader.

Events (pi-coding-agent 0.73.1, recorded in ``tests/fixtures/pi``), one JSON object a line:
``session`` (``id``), ``agent_start``/``agent_end``, ``turn_start``/``turn_end``,
``message_start``/``message_update``/``message_end`` with a ``message`` (``role``; an assistant's
``content`` blocks, ``model``, ``usage`` {input, output, cacheRead, cacheWrite, cost {total}},
``stopReason`` ``stop``/``toolUse``/``length``/``error``/``aborted`` and ``errorMessage`` such as
``401 {"type":"error",…}``), ``tool_execution_start``/``_end`` (``toolName``, ``args``,
``isError``), and pi's own retries: ``auto_retry_start`` (``attempt``, ``maxAttempts``,
``delayMs``, ``errorMessage``) and ``auto_retry_end`` (``success``, ``finalError``).

pi exits 0 even when every request failed: the outcome comes from the stream alone (the last
assistant message's ``stopReason`` and ``errorMessage``, a failed ``auto_retry_end``). Each
assistant ``message_end`` is one model request: its usage and cost are added up. A retry pi
would wait longer than :data:`~forgeflare.supervisor.backends._clistream.RETRY_WAIT_LIMIT`
ends it, as for OpenCode.

pi reads no base-URL variable: a local endpoint goes in ``providers.<name>.baseUrl`` of
``$PI_CODING_AGENT_DIR/models.json`` (default ``~/.pi/agent``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

from forgeflare.supervisor.backends._backends import (
    AgentAccount,
    InitTemplate,
    LineReader,
    register_backend,
)
from forgeflare.supervisor.backends._clistream import CliBackend, CliStreamReader
from forgeflare.supervisor.backends._stream import (
    NULL,
    NUMBER,
    Shape,
    as_int,
    as_str,
    clean_text,
    tool_line,
)
from forgeflare.trust import TrustItem, agent_config_items

__all__ = ["SHAPES", "PiBackend", "PiStreamReader", "pi_problem"]

_MESSAGE: Shape = {"message": dict}
SHAPES: dict[str, Shape] = {
    "session": {"id": (str, NULL)},
    "message_end": _MESSAGE,
    "turn_end": _MESSAGE,
    "tool_execution_start": {"toolName": (str, NULL)},
    "tool_execution_end": {"toolName": (str, NULL), "isError": (bool, NULL)},
    "auto_retry_start": {
        "attempt": (int, NULL),
        "delayMs": (*NUMBER, NULL),
        "errorMessage": (str, NULL),
    },
    "auto_retry_end": {"success": (bool, NULL), "finalError": (str, NULL)},
}
"""The types of the fields pi's events carry that the reader uses."""

_STATUS = re.compile(r"^\s*(\d{3})\b")
_QUIET = frozenset(
    {"agent_start", "agent_end", "turn_start", "message_start", "message_update", "turn_end"}
)


def _status(message: str) -> int | None:
    """The HTTP status pi's error message starts with (``401 {"type":"error",…}``)."""
    found = _STATUS.match(message)
    return int(found[1]) if found else None


def _text(content: object) -> str:
    blocks = content if isinstance(content, list) else []
    return "\n".join(
        b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)
    ).strip()


@dataclass
class PiStreamReader(CliStreamReader, shapes=SHAPES):
    """Reads one pi iteration's JSON event stream, line by line (pure)."""

    cli: str = "pi"

    def event(self, event: dict[str, Any]) -> list[str]:
        kind = event.get("type")
        if kind == "session":
            self.session_id = as_str(event.get("id")) or self.session_id
            return []
        if kind == "message_end":
            return self._message(event["message"])
        if kind == "tool_execution_start":
            return [tool_line(str(event.get("toolName") or "?"), event.get("args"))]
        if kind == "tool_execution_end":
            return ["  error: the tool failed"] if event.get("isError") is True else []
        if kind == "auto_retry_start":
            message = clean_text(str(event.get("errorMessage") or "retry"))
            delay = event.get("delayMs")
            wait = delay / 1000 if isinstance(delay, int | float) and delay > 0 else 0.0
            at = (self.now or datetime.now(UTC)) + timedelta(seconds=wait)
            return [self.retry(as_int(event.get("attempt")), wait, message, at)]
        if kind == "auto_retry_end":
            if event.get("success") is False:
                self.failure = clean_text(str(event.get("finalError") or self.failure or "?"))
                self.status = _status(self.failure)
                return [f"failed: {self.failure}"]
            return []
        if kind in _QUIET:
            return []
        return super().event(event)

    def _message(self, message: dict[str, Any]) -> list[str]:
        if message.get("role") != "assistant":
            return []
        self.model = as_str(message.get("model")) or self.model
        self.stop = as_str(message.get("stopReason")) or self.stop
        raw = message.get("usage")
        usage = raw if isinstance(raw, dict) else {}
        more = {
            "input": as_int(usage.get("input")),
            "output": as_int(usage.get("output")),
            "cache_read": as_int(usage.get("cacheRead")),
            "cache_write": as_int(usage.get("cacheWrite")),
        }
        cost = usage.get("cost")
        shown: list[str] = []
        text = _text(message.get("content"))
        if text:
            self.messages.append(clean_text(text))
            shown.append(self.messages[-1])
        if self.stop in ("error", "aborted"):
            self.failure = clean_text(str(message.get("errorMessage") or self.stop))
            self.status = _status(self.failure)
            shown.append(f"failed: {self.failure}")
        else:
            self.failure = self.status = None
        shown.append(self.add_request(more, cost.get("total") if isinstance(cost, dict) else None))
        return shown


def pi_agent_dir(env: Mapping[str, str]) -> Path:
    """``$PI_CODING_AGENT_DIR``, else ``~/.pi/agent`` (pi's own default)."""
    if env.get("PI_CODING_AGENT_DIR"):
        return Path(env["PI_CODING_AGENT_DIR"]).expanduser()
    return Path(env.get("HOME") or Path.home()) / ".pi" / "agent"


def _configured_urls(agent_dir: Path) -> dict[str, str]:
    try:
        data = json.loads((agent_dir / "models.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return {}
    providers = data.get("providers") if isinstance(data, dict) else None
    if not isinstance(providers, dict):
        return {}
    return {
        name: str(p["baseUrl"])
        for name, p in providers.items()
        if isinstance(p, dict) and isinstance(p.get("baseUrl"), str)
    }


def pi_problem(env: Mapping[str, str]) -> str | None:
    """An offline fact that would make every pi iteration fail, with its fix: a base-URL
    variable pi never reads while its ``models.json`` names no Anthropic endpoint."""
    url = (env.get("ANTHROPIC_BASE_URL") or env.get("ANTHROPIC_API_URL") or "").strip()
    if not url:
        return None
    agent_dir = pi_agent_dir(env)
    if "anthropic" in _configured_urls(agent_dir):
        return None
    return (
        f"pi reads no base-URL variable (ANTHROPIC_BASE_URL/ANTHROPIC_API_URL={url}): it would "
        f'call the real API; put {{"providers": {{"anthropic": {{"baseUrl": "{url}"}}}}}} in '
        f"{agent_dir / 'models.json'}"
    )


_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN", "OPENAI_API_KEY")
"""The keys it reads: kept from every other process, and its account's identity."""


@register_backend
@dataclass
class PiBackend(CliBackend):
    """pi headless: ``pi -p --mode json``, the prompt on stdin."""

    name: str = "pi"
    secret_names: ClassVar[tuple[str, ...]] = _KEYS
    account: ClassVar[AgentAccount | None] = AgentAccount(
        (),
        "https://api.anthropic.com",
        _KEYS,
        "PI_CODING_AGENT_DIR",
    )
    overshoot: ClassVar[str] = (
        "one pi request: it streams each request's cost when the request ends, and the loop "
        "ends it once they pass the cap"
    )
    init: ClassVar[InitTemplate | None] = InitTemplate("pi (pi -p --mode json)")
    program: ClassVar[str] = "pi"
    args: ClassVar[tuple[str, ...]] = ("-p", "--mode", "json")
    install_hint: ClassVar[str] = "npm install -g @mariozechner/pi-coding-agent"

    def trust_items(self, project: Path, extra_args: str) -> list[TrustItem]:
        """pi loads ``.pi/`` (its settings, extensions, prompts) from the project by itself,
        and runs them outside forgeflare's box."""
        return agent_config_items(project, files=(), folders=(".pi",))

    def demo_env(self, url: str, scratch: Path) -> dict[str, str]:
        """pi reads no base-URL variable: an agent folder of the demo's own whose
        ``models.json`` names the mock, a dummy key, and no start-up network calls."""
        agent_dir = scratch / "pi-agent"
        agent_dir.mkdir(parents=True, exist_ok=True)
        models = {"providers": {"anthropic": {"baseUrl": url}}}
        (agent_dir / "models.json").write_text(json.dumps(models), encoding="utf-8")
        return {
            "PI_CODING_AGENT_DIR": str(agent_dir),
            "PI_OFFLINE": "1",
            "ANTHROPIC_API_KEY": "demo-key-offline",
        }

    def configured_url(self, env: Mapping[str, str]) -> str:
        # pi reads no base-URL variable: its models.json names the endpoint.
        return _configured_urls(pi_agent_dir(env)).get("anthropic", "")

    def problem(self, env: Mapping[str, str]) -> str | None:
        return pi_problem(env)

    def reader(self) -> LineReader:
        return PiStreamReader()
