"""How the loop hands its agent the API key: not through the agent's environment, where it can.

The agent's children (Bash commands, hooks) can read the agent's initial environment from
``/proc/<pid>/environ``. So the key goes (:func:`plan_agent_key`, pure), as the backend says:

- through a descriptor (``FORGEFLARE_KEY_FD``, see ``_keychannel``) to an agent that reads it
  (``keys_through_fd``: the own agent);
- through a one-shot key file to an agent that takes one (``helper_keys``: Claude Code's
  ``apiKeyHelper`` given with ``--settings``): a 0600 file in the run folder that the helper
  prints and deletes on its first call, before any tool runs;
- to every other agent, and the keys no file can give, in the environment: the docs ("Agents
  and accounts") say so.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from forgeflare.security import child_environment
from forgeflare.supervisor.backends import Backend

__all__ = ["KeyPlan", "key_file", "plan_agent_key"]


@dataclass(frozen=True)
class KeyPlan:
    """The agent's environment and how its key reaches it."""

    env: dict[str, str]
    """No secret but those passed by name and those listed in ``exposed``."""
    through_fd: dict[str, str]
    """Handed over through ``FORGEFLARE_KEY_FD``."""
    helper_key: str | None
    """Given to the agent through the one-shot key file (the backend's ``helper_argv``)."""
    exposed: tuple[str, ...]
    """Secret names left in the agent's environment: no other way reaches this agent."""


def plan_agent_key(backend: Backend, env: Mapping[str, str], pass_env: Sequence[str]) -> KeyPlan:
    """Where each of ``backend``'s keys (its ``secret_names``) in ``env`` goes (the module
    docstring says why)."""
    base = child_environment(env, pass_env)
    keys = {k: env[k] for k in backend.secret_names if k in env and k not in base}
    if backend.keys_through_fd:
        return KeyPlan(env=base, through_fd=keys, helper_key=None, exposed=())
    given = [keys.pop(name) for name in backend.helper_keys if name in keys]
    helper_key = next((key for key in given if key), None)  # an empty value is no key
    if helper_key is not None:
        base.update(backend.helper_env)
    base.update(keys)
    return KeyPlan(env=base, through_fd={}, helper_key=helper_key, exposed=tuple(keys))


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
