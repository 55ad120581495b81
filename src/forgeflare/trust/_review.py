"""What ``forgeflare trust`` shows, pure: each item with one line of what it means for the user,
new and changed items marked, every file listed once.

The review is read by a person deciding y/N, so it says consequences ("turns the sandbox
off"), not digests; the digests stay in the store.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from forgeflare.trust._policy import TrustCheck, TrustItem

__all__ = ["GATE_KEYS", "GATE_NOTE", "item_meaning", "review_lines"]

GATE_KEYS = frozenset({"[limits] gate", "stop-hook gate"})
"""Trust items that are gates: commands that run the project's own code."""
GATE_NOTE = (
    "runs the project's tests: code the agent can change (in forgeflare's sandbox when "
    "bubblewrap works, without secrets)"
)
"""What ``forgeflare trust`` says under a gate, so trusting it is trusting what it imports."""

_HOOK_EVENTS = {
    "PreToolUse": "runs before each of the agent's matching tool calls and can block it",
    "PostToolUse": "runs after each of the agent's matching tool calls and sees its output",
    "Stop": "runs when the agent stops",
}
_LIFECYCLE = {
    "started": "runs once when the loop starts",
    "next_iteration": "runs before every iteration and can skip or end the loop",
    "finished": "runs when the loop finishes",
}
_SECURITY: dict[str, Callable[[str], str]] = {
    "sandbox": lambda v: (
        "turns the sandbox off: the agent's Bash commands run unconfined, with your user's rights"
        if v.strip('"').lower() in {"off", "false", "no", "none", "0"}
        else f"changes the sandbox to {v}"
    ),
    "pass_env": lambda v: f"passes {_names(v)} to hooks and tools (secrets they can read)",
    "sandbox_network": lambda v: "lets sandboxed commands use the network",
    "writable": lambda v: f"lets sandboxed commands write to {_names(v)} outside the project",
    "readable": lambda v: f"lets sandboxed commands read {_names(v)}",
    "allow_paths": lambda v: f"lets the agent's tools reach {_names(v)} outside the project",
    "sockets": lambda v: f"lets sandboxed commands connect to the sockets {_names(v)}",
}
_CLAUDE = {
    "hooks": "Claude Code runs these hook commands in your session",
    "env": "sets variables in Claude Code's environment",
    "apiKeyHelper": "Claude Code runs this to get its API key",
    "statusLine": "Claude Code runs this command for its status line",
    "permissions": "loosens what Claude Code may do without asking",
}


def _names(value: str) -> str:
    try:
        data = json.loads(value)
    except ValueError:
        return value
    if isinstance(data, list):
        return ", ".join(str(v) for v in data) or "nothing"
    return str(data)


def _definition(item: TrustItem) -> dict[str, object] | None:
    try:
        data = json.loads(item.definition)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def item_meaning(item: TrustItem, hooks_dir: str = ".fresher/hooks") -> str:
    """One line of what ``item`` means for the user, from its key and definition."""
    key = item.key
    if item.definition == "unreadable or malformed":
        return "cannot be read as it should: reviewed by its bytes, any edit is seen"
    if key.startswith("[security] "):
        name = key.removeprefix("[security] ")
        say = _SECURITY.get(name)
        return say(item.definition) if say else f"loosens the [security] {name} limit"
    fixed = {
        "[agent] command": "the loop starts this command as the agent, every iteration",
        "[agent] extra_args": "extra arguments the loop passes to the agent",
        "[notify] command": "runs when the loop notifies you (finish, question, errors)",
        "[limits] gate": "runs as the gate: a completion counts only when it passes",
        ".mcp.json": "MCP servers Claude Code starts (programs with your user's rights)",
        "[security]": "a [security] table that cannot be read: treated as loosening",
    }
    if key in fixed:
        return fixed[key]
    if key.startswith("[agent.profiles."):
        return "an agent profile: the command, arguments and variables a loop may switch to"
    if key.startswith("[paths] "):
        return "points outside the project: what is there is not covered by this review"
    if key.startswith("hooks module "):
        return "a Python hooks module the agent imports: runs inside it, beside its API key"
    if key.endswith("[fleet] gate"):
        return "runs as the fleet's gate before a loop's branch lands"
    if key.endswith("agent_command"):
        return "a fleet loop starts this command as its agent"
    if key.startswith((".claude/", "--settings ")):
        setting = key.rsplit(" ", 1)[-1]
        return _CLAUDE.get(setting, "a Claude Code setting that runs or redirects something")
    if "[" in key and ".toml[" in key:
        event = key.rsplit(" ", 1)[-1]
        return _HOOK_EVENTS.get(event, f"an agent hook: runs on the agent's {event} events")
    rel = Path(key)
    if rel.parent.as_posix() == hooks_dir.rstrip("/") and rel.name in _LIFECYCLE:
        return f"a lifecycle hook: {_LIFECYCLE[rel.name]}"
    definition = _definition(item)
    if definition is not None and definition.get("executable"):
        return "a file beside the lifecycle hooks that they may run"
    return "a file beside the lifecycle hooks that they may read"


def _what(item: TrustItem) -> str:
    """The item's definition as a user reads it: a command, a value, or nothing."""
    definition = _definition(item)
    if definition is not None:
        command = definition.get("command")
        if isinstance(command, str) and command:
            return f": {command}"
        if set(definition) == {"executable"}:
            return ""
    if item.key.startswith("[security]") or item.key.startswith("[paths]"):
        return f" = {item.definition}"
    if item.definition in ("mcp servers", "unreadable or malformed"):
        return ""
    text = item.definition
    return ": " + (text if len(text) <= 100 else text[:97] + "...")


def _mark(key: str, check: TrustCheck) -> str:
    if key in check.new:
        return "new"
    if key in check.changed:
        return "changed"
    return ""


def review_lines(
    items: Sequence[TrustItem],
    check: TrustCheck,
    heads: Callable[[str], Iterable[str]] = lambda rel: (),
    *,
    hooks_dir: str = ".fresher/hooks",
) -> list[str]:
    """The review: each item (marked ``new`` / ``changed``) with what it means and any blind
    spot, then every file they cover once, with its hash and its first lines (``heads``)."""
    out: list[str] = []
    files: dict[str, tuple[str, str]] = {}
    for item in items:
        mark = _mark(item.key, check)
        what = _what(item)
        out.append(f"{mark:>7}  {item.key}{what}")
        out.append(f"         {item_meaning(item, hooks_dir)}")
        if item.key in GATE_KEYS:
            out.append(f"         note: {GATE_NOTE}")
        out.extend(f"         warning: {note}" for note in item.blind)
        for rel, digest in item.files.items():
            old_mark = files.get(rel, ("", ""))[1]
            files[rel] = (digest, old_mark or mark)
    if files:
        out.append("files they run or read (each once):")
        for rel, (digest, mark) in sorted(files.items()):
            hashed = len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)
            shown = f"sha256 {digest[:16]}" if hashed else digest  # else what it is, in words
            out.append(f"{mark:>7}  {rel}  {shown}")
            out.extend(f"           | {line}" for line in heads(rel) if line)
    return out
