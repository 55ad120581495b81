"""Secrets handed over through a file descriptor, never left in a process's first environment.

Any process of the same user can read ``/proc/<pid>/environ``: the environment a process was
*started* with, whatever it deletes from ``os.environ`` later. A Bash command or a hook reads
its parent's that way. So forgeflare keeps secrets out of the initial environment of every
process of its own whose children run project code:

- A forgeflare process that starts another one (the loop its agent, the fleet its loops)
  writes the secrets as JSON into an anonymous file (``memfd``: no name on any disk), passes
  that descriptor, and names it in ``FORGEFLARE_KEY_FD``. The child reads it at start
  (:func:`adopt_key_fd`), closes it, and keeps the values in ``os.environ`` in memory: what a
  process sets there never shows in its ``/proc/<pid>/environ``.
- ``forgeflare run``, ``loop``, ``fleet``, ``demo`` and ``hooks`` started with a secret in
  their environment (a user's shell exports the key) re-execute themselves once, at start,
  with the secrets moved to such a descriptor (:func:`hide_secrets`): same pid, same
  arguments, an initial environment without them.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Mapping, MutableMapping, Sequence

from forgeflare._errors import ConfigError
from forgeflare.security._secrets import is_secret

__all__ = [
    "KEY_FD_ENV",
    "REEXEC_COMMANDS",
    "adopt_key_fd",
    "hand_over",
    "hide_secrets",
    "reexec_argv",
    "secrets_fd",
    "split_secrets",
]

KEY_FD_ENV = "FORGEFLARE_KEY_FD"
"""Names the inherited descriptor holding a JSON object of secret variables."""

REEXEC_COMMANDS = frozenset({"run", "loop", "plan", "build", "fleet", "demo", "hooks"})
"""Commands that start children running project code: they never keep a secret in their
initial environment. The others (``report``, ``runs``, ``stop-hook``...) start none."""


def split_secrets(env: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """``env`` as (the variables that are no secret, the secrets)."""
    plain: dict[str, str] = {}
    secret: dict[str, str] = {}
    for name, value in env.items():
        (secret if is_secret(name, value) and name != KEY_FD_ENV else plain)[name] = value
    return plain, secret


def reexec_argv(executable: str, orig_argv: Sequence[str]) -> list[str]:
    """The command line that starts this process again: ``-P`` keeps the working directory
    off ``sys.path`` even when the user typed ``python -m forgeflare`` in a project."""
    return [executable, "-P", *orig_argv[1:]]


def secrets_fd(values: Mapping[str, str]) -> int:
    """A readable, inheritable descriptor holding ``values`` as JSON; the caller closes it."""
    data = json.dumps(dict(values)).encode()
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("forgeflare-keys", 0)
    else:  # macOS: a 0600 file unlinked at once, only the descriptor is left
        fd, path = tempfile.mkstemp(prefix="forgeflare-keys-")
        os.unlink(path)
    try:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
        os.set_inheritable(fd, True)
    except OSError:
        os.close(fd)
        raise
    return fd


def hand_over(env: Mapping[str, str], values: Mapping[str, str]) -> tuple[dict[str, str], int]:
    """``env`` without ``values``' names plus ``FORGEFLARE_KEY_FD``, and the descriptor to pass
    (``pass_fds``) and close once the child runs."""
    fd = secrets_fd(values)
    child = {k: v for k, v in env.items() if k not in values}
    child[KEY_FD_ENV] = str(fd)
    return child, fd


def _read_fd(fd: int) -> bytes:
    chunks = []
    offset = 0
    while chunk := os.pread(fd, 65536, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def adopt_key_fd(environ: MutableMapping[str, str]) -> dict[str, str]:
    """Read the secrets ``FORGEFLARE_KEY_FD`` names into ``environ`` (in memory only), close
    the descriptor, drop the variable; returns what was read (``{}`` when it is not set)."""
    value = environ.pop(KEY_FD_ENV, None)
    if value is None:
        return {}
    try:
        fd = int(value)
    except ValueError:
        raise ConfigError(f"{KEY_FD_ENV}={value!r}: not a file descriptor number") from None
    try:
        data = json.loads(_read_fd(fd))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{KEY_FD_ENV}={fd}: cannot read the secrets: {exc}") from exc
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise ConfigError(f"{KEY_FD_ENV}={fd}: expected a JSON object of strings")
    environ.update(data)
    return data


def hide_secrets(args: Sequence[str]) -> None:
    """At the start of the console script: take secrets handed over by a parent, and when this
    command starts project code and its initial environment holds a secret, re-execute it once
    without (the secrets go along through a descriptor). Returns only when no re-execution is
    needed or it is impossible (then the secrets stay where they were)."""
    # What the environment holds before adopting is what /proc/<pid>/environ shows.
    exposed = split_secrets(os.environ)[1]
    adopt_key_fd(os.environ)
    if not exposed or not args or args[0] not in REEXEC_COMMANDS or not sys.executable:
        return
    plain, secret = split_secrets(os.environ)
    env, fd = hand_over(plain, secret)
    try:
        os.execve(sys.executable, reexec_argv(sys.executable, sys.orig_argv), env)
    except OSError:
        os.close(fd)
