"""The Bash deny-list: a pure check of a command before it runs.

Matching works on the command lower-cased with every run of whitespace collapsed to one
space, so neither extra spaces, tabs, newlines nor capitals get a pattern past the guard.
It is a seat belt against the well-known disasters, not a sandbox: a determined command
can always be written another way, and hooks (``.forgeflare/hooks.toml``) add project rules.

Denied:

- ``rm`` with a recursive flag on ``/``, ``/*``, ``~``, ``~/``, ``$HOME`` (and
  ``--no-preserve-root`` anywhere);
- fork bombs (``:(){ :|:& };:`` and the same shape under any function name);
- ``dd`` writing to a device (``of=/dev/...`` other than null/zero/stdout/stderr), and
  shell redirection onto a disk device (``> /dev/sda``);
- ``mkfs`` in any form (``mkfs``, ``mkfs.ext4``, ``mke2fs``);
- ``chmod`` giving everyone full rights (``777``, ``a+rwx``) on ``/`` or ``/*``;
- ``git push`` with ``--force``, ``-f`` (alone or in a cluster such as ``-fu``), any
  ``--force-with-lease`` / ``--force-if-includes``, or a ``+refspec``. The lease variant is
  denied too: without an explicit expected value it compares with the remote-tracking ref,
  which every ``git fetch`` refreshes, so in an unattended loop it overwrites remote history
  just like ``--force``.
"""

from __future__ import annotations

import re

__all__ = ["denied_reason", "normalize_command"]

# Characters that end one simple command (or start a new one) in the normalised text.
_SEP = r"[;&|()`\n]"
_START = rf"(?:^|{_SEP}|\s|\$\()"
_END = rf"(?=$|\s|{_SEP})"
_ARG = r"[^\s;&|()`]+"
_Q = r"[\"']?"

_RM = re.compile(
    rf"{_START}(?:\S*/)?rm\s+((?:{_ARG}\s+)*?)"
    rf"{_Q}(/\*?|/\.|~/?\*?|\$home/?\*?|\$\{{home\}}/?\*?){_Q}{_END}"
)
_RM_NO_PRESERVE = re.compile(rf"{_START}(?:\S*/)?rm\s(?:{_ARG}\s+)*?--no-preserve-root{_END}")
_FORK_BOMB = re.compile(r"([a-z_:][a-z0-9_:]*)\(\)\{\1\|\1&\};\1")
_DD_DEVICE = re.compile(
    rf"{_START}(?:\S*/)?dd\s(?:{_ARG}\s+)*?of={_Q}/dev/(?!(?:null|zero|stdout|stderr|fd/))"
)
_REDIRECT_DISK = re.compile(r">\s*[\"']?/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)")
_MKFS = re.compile(rf"{_START}(?:\S*/)?(?:mkfs(?:\.[a-z0-9]+)?|mke2fs){_END}")
_CHMOD = re.compile(
    rf"{_START}(?:\S*/)?chmod\s+(?:-{_ARG}\s+)*(?:0?777|[augo]*\+rwx)\s+(?:-{_ARG}\s+)*"
    rf"{_Q}/\*?{_Q}{_END}"
)
_GIT_PUSH = re.compile(rf"{_START}(?:\S*/)?git\s+(?:{_ARG}\s+)*?push((?:\s+{_ARG})*)")
_FORCE_ARG = re.compile(r"^(?:--force(?:-with-lease|-if-includes)?(?:=.*)?|-[a-z]*f[a-z]*|\+.+)$")


def normalize_command(command: str) -> str:
    """The command lower-cased, with each run of whitespace made one space, trimmed."""
    return " ".join(command.lower().split())


def denied_reason(command: str) -> str | None:
    """Why ``command`` must not run, or ``None`` when the deny-list has no objection."""
    text = normalize_command(command)
    for match in _RM.finditer(text):
        if _is_recursive(match.group(1)):
            return f"recursive rm of {match.group(2)} would delete everything under it"
    if _RM_NO_PRESERVE.search(text):
        return "rm --no-preserve-root is never needed by a coding task"
    if _FORK_BOMB.search(re.sub(r"\s+", "", text)):
        return "fork bomb: a function that pipes into itself in the background"
    if _DD_DEVICE.search(text):
        return "dd writing to a device (of=/dev/...) can destroy a disk"
    if _REDIRECT_DISK.search(text):
        return "redirecting output onto a disk device can destroy it"
    if _MKFS.search(text):
        return "mkfs formats a file system"
    if _CHMOD.search(text):
        return "chmod 777 on / opens the whole system to everyone"
    for push in _GIT_PUSH.finditer(text):
        for arg in push.group(1).split():
            if _FORCE_ARG.match(arg.strip("\"'")):
                return (
                    f"git push with {arg} rewrites remote history "
                    "(force pushes, --force-with-lease included, are not allowed)"
                )
    return None


def _is_recursive(args: str) -> bool:
    for arg in args.split():
        if arg in ("--recursive", "-r"):
            return True
        if arg.startswith("-") and not arg.startswith("--") and "r" in arg:
            return True
    return False
