"""How the loop hands its agent the API key: not through the agent's environment, where it can.

The agent's children (Bash commands, hooks) can read the agent's initial environment from
``/proc/<pid>/environ``. So the key goes (:func:`plan_agent_key`, pure):

- to the own agent through a descriptor (``FORGEFLARE_KEY_FD``, see ``_keychannel``);
- to Claude Code through an ``apiKeyHelper`` given with ``--settings``: a 0600 file in the run
  folder that the helper prints and deletes on its first call, before any tool runs (Claude
  Code keeps the key in memory: the helper's refresh interval is set beyond a night);
- to Codex and ``command`` agents, and Claude Code's ``CLAUDE_CODE_OAUTH_TOKEN`` (a
  subscription token no helper can give), in the environment: the docs ("Agents and
  accounts") say so.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from forgeflare._secrets import AGENT_KEYS, child_environment

__all__ = ["HELPER_TTL_ENV", "KeyPlan", "helper_settings", "key_file", "plan_agent_key"]

HELPER_TTL_ENV = "CLAUDE_CODE_API_KEY_HELPER_TTL_MS"
_HELPER_TTL_MS = str(7 * 24 * 3600 * 1000)  # a week: the one-shot helper is never asked again


@dataclass(frozen=True)
class KeyPlan:
    """The agent's environment and how its key reaches it."""

    env: dict[str, str]
    """No secret but those passed by name and those listed in ``exposed``."""
    through_fd: dict[str, str]
    """Handed over through ``FORGEFLARE_KEY_FD``."""
    helper_key: str | None
    """Given to Claude Code by the one-shot ``apiKeyHelper``."""
    exposed: tuple[str, ...]
    """Secret names left in the agent's environment: no other way reaches this agent."""


def plan_agent_key(
    backend: str,
    env: Mapping[str, str],
    pass_env: Sequence[str],
    names: Sequence[str] | None = None,
) -> KeyPlan:
    """Where each of ``backend``'s keys (``names``, default :data:`AGENT_KEYS`) in ``env``
    goes (the module docstring says why)."""
    base = child_environment(env, pass_env)
    wanted = AGENT_KEYS.get(backend, ()) if names is None else names
    keys = {k: env[k] for k in wanted if k in env and k not in base}
    if backend == "forgeflare":
        return KeyPlan(env=base, through_fd=keys, helper_key=None, exposed=())
    helper_key = None
    if backend == "claude":
        api_key = keys.pop("ANTHROPIC_API_KEY", None)
        auth_token = keys.pop("ANTHROPIC_AUTH_TOKEN", None)
        helper_key = api_key or auth_token
        if helper_key is not None:
            base[HELPER_TTL_ENV] = _HELPER_TTL_MS
    base.update(keys)
    return KeyPlan(env=base, through_fd={}, helper_key=helper_key, exposed=tuple(keys))


def helper_settings(path: Path) -> str:
    """``--settings`` JSON whose ``apiKeyHelper`` prints the key file once and deletes it."""
    quoted = shlex.quote(str(path))
    return json.dumps({"apiKeyHelper": f"cat -- {quoted} && rm -f -- {quoted}"})


@contextlib.contextmanager
def key_file(path: Path, key: str) -> Iterator[Path]:
    """``key`` in a new 0600 file at ``path`` for the duration (removed after in any case)."""
    # A file left by a killed loop, or anything planted under the name, goes first: O_EXCL then
    # creates a new file and never follows a link.
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(key)
        yield path
    finally:
        path.unlink(missing_ok=True)
