"""OpenCode (``opencode run --format json``) as a loop backend: its class and stream reader.

Events (opencode-ai 1.18.33, recorded in ``tests/fixtures/opencode``), one JSON object a line,
each with ``type``, ``timestamp`` (epoch ms) and ``sessionID``: ``step_start``; ``text`` (a
finished text part, ``part.text``); ``tool_use`` (a finished call: ``part.tool``,
``part.state.status`` ``completed``/``error``, ``part.state.input``); ``step_finish`` (one model
request: ``part.reason`` ``stop``/``tool-calls``, ``part.tokens`` {input, output, reasoning,
cache {read, write}}, ``part.cost`` in USD); ``error`` (the session's failure: ``error.name``
such as ``APIError`` with ``error.data`` {message, statusCode, isRetryable, responseBody}).
OpenCode exits 1 after an error.

OpenCode obeys a provider's ``retry-after`` silently, for an hour if told, ignores SIGTERM while
it waits, and its JSON stream says nothing of it. forgeflare gives it a small plugin
(``opencode/forgeflare-retry.js``, through ``OPENCODE_CONFIG_CONTENT``) that prints each retry
it schedules as a ``forgeflare.retry`` line (``attempt``, ``message``, ``next`` epoch ms). A
wait over :data:`RETRY_WAIT_LIMIT` makes the reader ask for the agent's end
(:attr:`OpenCodeStreamReader.end_reason`): the loop ends it (TERM, then KILL) and records a
usage window from the reset the message carries (Claude's ``limit reached|<epoch>``), else from
the retry's time. The loop waits, not the CLI.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from forgeflare.supervisor.backends._backends import (
    AgentAccount,
    InitTemplate,
    LineReader,
    register_backend,
)
from forgeflare.supervisor.backends._clistream import (
    RETRY_WAIT_LIMIT,
    CliBackend,
    CliStreamReader,
)
from forgeflare.supervisor.backends._stream import (
    NULL,
    NUMBER,
    Shape,
    as_int,
    as_str,
    clean_text,
    epoch_time,
    tool_line,
)
from forgeflare.trust import TrustItem, agent_config_items

__all__ = ["RETRY_WAIT_LIMIT", "SHAPES", "OpenCodeBackend", "OpenCodeStreamReader"]

_PART: Shape = {"part": dict, "sessionID": str, "timestamp": NUMBER}
SHAPES: dict[str, Shape] = {
    "step_start": _PART,
    "text": _PART,
    "tool_use": _PART,
    "step_finish": _PART,
    "error": {"error": (dict, str, NULL), "sessionID": str},
    "forgeflare.retry": {
        "attempt": (int, NULL),
        "message": (str, NULL),
        "next": (*NUMBER, NULL),
        "timestamp": NUMBER,
    },
}
"""The types of the fields OpenCode's events carry that the reader uses."""


def _failure_text(error: object) -> tuple[int | None, str]:
    """``(HTTP status, text)`` of an ``error`` event's ``error``: its message, name and body."""
    if isinstance(error, str):
        return None, clean_text(error)
    if not isinstance(error, dict):
        return None, "error"
    data = error.get("data")
    data = data if isinstance(data, dict) else {}
    status = data.get("statusCode")
    words = [
        str(w)
        for w in (data.get("message"), error.get("name"), data.get("responseBody"))
        if isinstance(w, str) and w
    ]
    code = status if isinstance(status, int) and not isinstance(status, bool) else None
    return code, clean_text(" | ".join(words) or "error")


@dataclass
class OpenCodeStreamReader(CliStreamReader, shapes=SHAPES):
    """Reads one OpenCode iteration's JSON event stream, line by line (pure)."""

    cli: str = "OpenCode"

    def event(self, event: dict[str, Any]) -> list[str]:
        kind = event.get("type")
        self.session_id = as_str(event.get("sessionID")) or self.session_id
        part = event.get("part")
        if kind == "text" and isinstance(part, dict):
            text = as_str(part.get("text"))
            if text is None:
                return []
            self.messages.append(text)
            return [text]
        if kind == "tool_use" and isinstance(part, dict):
            return self._tool(part)
        if kind == "step_finish" and isinstance(part, dict):
            return [self._step(part)]
        if kind == "step_start":
            return []
        if kind == "error":
            self.status, self.failure = _failure_text(event.get("error"))
            return [f"failed: {self.failure}"]
        if kind == "forgeflare.retry":
            message = clean_text(str(event.get("message") or "retry"))
            at, now = epoch_time(event.get("next")), epoch_time(event.get("timestamp"))
            wait = (at - now).total_seconds() if at is not None and now is not None else 0.0
            return [self.retry(as_int(event.get("attempt")), wait, message, at)]
        return super().event(event)

    def _tool(self, part: dict[str, Any]) -> list[str]:
        state = part.get("state")
        state = state if isinstance(state, dict) else {}
        line = tool_line(str(part.get("tool") or "?"), state.get("input"))
        if state.get("status") == "error":
            return [line, f"  error: {clean_text(str(state.get('error') or '?'))[:200]}"]
        return [line]

    def _step(self, part: dict[str, Any]) -> str:
        self.stop = as_str(part.get("reason")) or self.stop
        raw = part.get("tokens")
        tokens = raw if isinstance(raw, dict) else {}
        cache = tokens.get("cache")
        cache = cache if isinstance(cache, dict) else {}
        more = {
            "input": as_int(tokens.get("input")),
            "output": as_int(tokens.get("output")) + as_int(tokens.get("reasoning")),
            "cache_read": as_int(cache.get("read")),
            "cache_write": as_int(cache.get("write")),
        }
        return self.add_request(more, part.get("cost"))


def retry_plugin() -> Path:
    """The plugin file that makes OpenCode's retries visible (package data)."""
    found = resources.files("forgeflare.supervisor.backends") / "opencode" / "forgeflare-retry.js"
    return Path(str(found))


def with_retry_plugin(config: str | None) -> str:
    """``OPENCODE_CONFIG_CONTENT`` with forgeflare's retry plugin added to the user's own."""
    try:
        loaded = json.loads(config) if config else {}
    except ValueError:
        loaded = {}
    data: dict[str, Any] = loaded if isinstance(loaded, dict) else {}
    plugins = data.get("plugin")
    listed = [p for p in plugins if isinstance(p, str)] if isinstance(plugins, list) else []
    data["plugin"] = [*listed, retry_plugin().as_uri()]
    return json.dumps(data)


_TITLE = "forgeflare loop"
"""The session title each iteration's OpenCode is given (its own would cost a request)."""
_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY")
"""The keys it reads: kept from every other process, and its account's identity."""


@register_backend
@dataclass
class OpenCodeBackend(CliBackend):
    """OpenCode headless: ``opencode run --format json``, the prompt on stdin."""

    name: str = "opencode"
    secret_names: ClassVar[tuple[str, ...]] = _KEYS
    account: ClassVar[AgentAccount | None] = AgentAccount(
        ("ANTHROPIC_BASE_URL",),
        "https://api.anthropic.com/v1",
        _KEYS,
        "XDG_DATA_HOME",
    )
    overshoot: ClassVar[str] = (
        "one OpenCode step: it streams each step's cost when the step ends, and the loop "
        "ends it once they pass the cap"
    )
    init: ClassVar[InitTemplate | None] = InitTemplate("OpenCode (opencode run --format json)")
    program: ClassVar[str] = "opencode"
    args: ClassVar[tuple[str, ...]] = ("run", "--format", "json")
    install_hint: ClassVar[str] = "npm install -g opencode-ai"
    model: str = ""

    def argv(self, *, python: str, model: str, command: str, extra: list[str]) -> list[str]:
        """``opencode run --format json --title ...``: a session with a title of its own, so
        OpenCode does not ask its small model for one (a paid request each iteration); a
        ``--title`` in ``[agent] command`` or the extra arguments is left to win alone."""
        self.model = model
        said = [*shlex.split(command), *extra]
        titled = any(arg == "--title" or arg.startswith("--title=") for arg in said)
        title = [] if titled else ["--title", _TITLE]
        return super().argv(python=python, model=model, command=command, extra=[*title, *extra])

    def trust_items(self, project: Path, extra_args: str) -> list[TrustItem]:
        """OpenCode loads ``opencode.json(c)`` (servers, plugins) and ``.opencode/`` (its
        plugins, tools, commands) from the project by itself, and runs them outside
        forgeflare's box."""
        return agent_config_items(
            project, files=("opencode.json", "opencode.jsonc"), folders=(".opencode",)
        )

    def agent_env(self, env: Mapping[str, str], project: Path) -> dict[str, str]:
        """OpenCode's extra variables: its config with forgeflare's retry plugin, and ``PWD``
        (OpenCode works in ``$PWD``, not in the directory it was started in)."""
        return {
            "OPENCODE_CONFIG_CONTENT": with_retry_plugin(env.get("OPENCODE_CONFIG_CONTENT")),
            "PWD": str(project),
        }

    def problem(self, env: Mapping[str, str]) -> str | None:
        return opencode_problem(env)

    def demo_env(self, url: str, scratch: Path) -> dict[str, str]:
        """OpenCode's Anthropic provider at the mock (``ANTHROPIC_BASE_URL`` with ``/v1``), a
        dummy key and no models.dev fetch (OpenCode keeps the demo's sessions in its own data
        folder, as for any run)."""
        return {
            "ANTHROPIC_BASE_URL": f"{url.rstrip('/')}/v1",
            "ANTHROPIC_API_KEY": "demo-key-offline",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
        }

    def reader(self) -> LineReader:
        return OpenCodeStreamReader(model=self.model.rpartition("/")[2] or None)


def opencode_problem(env: Mapping[str, str]) -> str | None:
    """An offline fact that would make every OpenCode iteration fail, with its fix (pure)."""
    api_url = env.get("ANTHROPIC_API_URL", "").strip()
    base_url = env.get("ANTHROPIC_BASE_URL", "").strip()
    if api_url and not base_url:
        return (
            f"OpenCode reads ANTHROPIC_BASE_URL, not ANTHROPIC_API_URL (={api_url}): it would "
            f"call the real API; export ANTHROPIC_BASE_URL={api_url.rstrip('/')}/v1"
        )
    if base_url and not base_url.rstrip("/").endswith("/v1"):
        return (
            f"OpenCode calls ANTHROPIC_BASE_URL + /messages (={base_url}): every request would "
            f"miss; export ANTHROPIC_BASE_URL={base_url.rstrip('/')}/v1"
        )
    return None
