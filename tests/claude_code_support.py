"""The pinned Claude Code CLI for integration tests (``make claude-code`` installs it).

Tests that drive the real Claude Code take the ``claude_code`` fixture: the path of the CLI in
``.cache/claude-code-VERSION`` (the Makefile's folder for the pin). When it is missing the
test is skipped with the reason, except with ``FORGEFLARE_REQUIRE_CC=1`` (set by ``.ci/run``),
where a missing CLI fails the test.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from mockapi_support import MockServer
from platform_support import require_pinned_cli

REPO = Path(__file__).resolve().parent.parent
VERSION = "2.1.332"
CLAUDE = REPO / ".cache" / f"claude-code-{VERSION}" / "node_modules" / ".bin" / "claude"

__all__ = [
    "CLAUDE",
    "VERSION",
    "claude_env",
    "claude_print",
    "continuation_sent",
    "conversation_turns",
    "last_user_text",
    "require_claude_code",
    "session_of",
]


def require_claude_code() -> Path:
    """The CLI's path, or skip (fail with FORGEFLARE_REQUIRE_CC=1) when it is not installed."""
    return require_pinned_cli(
        CLAUDE, f"Claude Code {VERSION}", "claude-code", "FORGEFLARE_REQUIRE_CC"
    )


def claude_env(home: Path, url: str, **extra: str) -> dict[str, str]:
    """An environment for ``claude -p`` against the mock: no user settings, root allowed."""
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
    env.update(
        HOME=str(home),
        ANTHROPIC_BASE_URL=url,
        ANTHROPIC_API_KEY="test-key",
        IS_SANDBOX="1",  # the tests run as root; --dangerously-skip-permissions needs this
        DISABLE_AUTOUPDATER="1",
        NO_COLOR="1",
    )
    env.update(extra)
    return env


def claude_print(
    claude_code: Path, project: Path, home: Path, server: MockServer, *args: str
) -> subprocess.CompletedProcess[str]:
    """One ``claude -p`` session (``args``: options, then the prompt) in ``project`` against
    the mock, its output as stream JSON, with the stop-hook's lag wait ample (3 s) so that a
    loaded machine never turns "not written yet" into "continue"."""
    flags = ["-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"]
    return subprocess.run(
        [str(claude_code), *flags, *args],
        cwd=project,
        env=claude_env(
            home,
            server.url,
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            FORGEFLARE_STOPHOOK_WAIT_MS="3000",
        ),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def conversation_turns(server: MockServer) -> list[dict[str, Any]]:
    """The conversation requests the mock got (not Claude Code's side requests), in order."""
    return [
        r["body"]
        for r in server.requests()
        if r["path"] == "/v1/messages" and isinstance(r["body"], dict) and r["body"].get("tools")
    ]


def last_user_text(body: dict[str, Any]) -> str:
    """The text of a request's last message (Claude Code's continuation after a block)."""
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))


def continuation_sent(body: dict[str, Any]) -> str:
    """What Claude Code sent the model after its last reply (a Stop hook's continuation), every
    message of it, checked to read as the task: no "error", no hook command's path. Claude Code
    2.1.332 adds a system message ``Stop hook blocking error from command: "<path>"`` after a
    ``decision: block``, and puts the path before an exit 2's stderr."""
    messages = body["messages"]
    last = max(i for i, m in enumerate(messages) if m.get("role") == "assistant")
    texts = []
    for message in messages[last + 1 :]:
        content = message["content"]
        blocks = [content] if isinstance(content, str) else content
        texts += [b if isinstance(b, str) else str(b.get("text", "")) for b in blocks]
    sent = "\n".join(texts)
    assert "error" not in sent.lower(), sent
    for path_part in ("stop-hook", str(REPO), "/bin/"):
        assert path_part not in sent, sent
    return sent


def session_of(out: subprocess.CompletedProcess[str]) -> str:
    """The session id in a ``claude -p --output-format stream-json`` result line."""
    for line in out.stdout.splitlines():
        if line.startswith("{") and '"type":"result"' in line:
            session: str = json.loads(line)["session_id"]
            return session
    raise AssertionError(f"no result line\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
