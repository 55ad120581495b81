#!/usr/bin/env python3
"""PreToolUse guard for Bash: blocks destructive commands, allows the rest.

Reads the hook JSON on stdin ({"tool": "Bash", "input": {"command": ...}, ...}) and prints
{"action": "allow"} or {"action": "block", "reason": ...}. The agent shows the reason to the
model as the tool's error, so each reason says what was refused and what to do instead.

Each simple command (split at ; && || | & newlines, $( ) and backticks) is checked on its
words, after wrappers such as sudo, env, nohup, xargs and timeout; `bash -c "..."` and
`eval` are checked recursively. It is a seat belt, not a sandbox. Standard library only
(any Python 3.7+), so it runs on a fresh machine.
"""

from __future__ import annotations

import json
import re
import shlex
import sys

WRAPPERS = frozenset(
    {"sudo", "doas", "env", "nohup", "xargs", "time", "nice", "ionice", "command", "exec"}
    | {"builtin", "timeout", "stdbuf", "setsid"}
)
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
SAFE_DEVICES = frozenset({"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/tty"})
SPLIT = re.compile(r"\|\||&&|[;&|\n`]|\$\(|[()]")
DISK_REDIRECT = re.compile(r">\s*/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-)")
FORK_BOMB = re.compile(r"(\w+|:)\s*\(\s*\)\s*\{[^}]*\1\s*\|\s*\1\s*&")
ASSIGNMENT = re.compile(r"^\w+=")
WRAPPER_ARG = re.compile(r"^(-.*|\d+(\.\d+)?[smhd]?)$")


def flags(words: list[str]) -> tuple[str, set[str]]:
    """Letters of every short option cluster (-rf -> 'rf'), and the long options."""
    letters, longs = "", set()
    for w in words:
        if w == "--":
            break
        if w.startswith("--"):
            longs.add(w.split("=", 1)[0])
        elif w.startswith("-") and len(w) > 1:
            letters += w[1:]
    return letters, longs


def git_verdict(args: list[str]) -> str | None:
    """A reason to block ``git ARGS``, or None."""
    i = 0
    # Skip git's global options to find the subcommand (git -C dir -c k=v push ...).
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-C", "-c", "--git-dir", "--work-tree") else 1
    if i >= len(args):
        return None
    sub, rest = args[i], args[i + 1 :]
    letters, longs = flags(rest)
    if sub == "reset" and "--hard" in longs:
        return (
            "git reset --hard throws away uncommitted work; commit or stash it, "
            "or git restore specific files"
        )
    if sub == "clean" and ("f" in letters or "--force" in longs):
        return "git clean -f deletes untracked files for good; delete specific files by name"
    forced = longs & {"--force", "--force-with-lease", "--force-if-includes", "--mirror"}
    if sub == "push" and ("f" in letters or forced or any(a.startswith("+") for a in rest)):
        return (
            "a force push rewrites remote history; push normally (pull and rebase first "
            "if it is rejected)"
        )
    if sub == "checkout" and "--" in rest and "." in rest[rest.index("--") :]:
        return "git checkout -- . throws away uncommitted work; restore specific files"
    return None


def verdict(words: list[str], depth: int) -> str | None:
    """A reason to block one simple command (its words), or None."""
    while words and (words[0] in WRAPPERS or ASSIGNMENT.match(words[0])):
        words = words[1:]
        # The wrapper's own options and numbers (sudo -n, timeout 10, nice -n 5).
        while words and WRAPPER_ARG.match(words[0]):
            words = words[1:]
    if not words:
        return None
    name, args = words[0].rsplit("/", 1)[-1], words[1:]
    letters, longs = flags(args)
    if name == "rm" and ("r" in letters or "R" in letters or "--recursive" in longs):
        target = " ".join(a for a in args if not a.startswith("-")) or "?"
        return (
            f"recursive rm deletes a whole tree for good (rm -r {target}); leave it, "
            "move it aside with mv, or remove specific files by name"
        )
    if name in ("mkfs", "mke2fs", "mkswap", "wipefs") or name.startswith("mkfs."):
        return f"{name} formats a device; never in an unattended loop"
    if name == "dd":
        for a in args:
            if a.startswith("of=/dev/") and a[3:] not in SAFE_DEVICES:
                return f"dd onto a device ({a}) destroys its data"
    if name == "shred":
        return "shred destroys files beyond recovery; delete specific files by name"
    roots = ("/", "/*", "~", "~/", "$HOME")
    recursive = "R" in letters or "--recursive" in longs
    if name in ("chmod", "chown") and recursive and any(a in roots for a in args):
        return f"{name} -R on / or ~ breaks the system; change specific paths"
    if name == "git":
        return git_verdict(args)
    if name in SHELLS and "-c" in args[:-1]:
        return check(args[args.index("-c") + 1], depth + 1)
    if name == "eval" and args:
        return check(" ".join(args), depth + 1)
    return None


def check(command: str, depth: int = 0) -> str | None:
    """A reason to block ``command``, or None."""
    if depth > 3:
        return "command nested too deeply to check"
    if FORK_BOMB.search(command):
        return "a fork bomb exhausts the machine"
    if DISK_REDIRECT.search(command):
        return "redirecting output onto a disk device destroys its data"
    for part in SPLIT.split(command):
        try:
            words = shlex.split(part, comments=True)
        except ValueError:  # unbalanced quotes: fall back to plain words
            words = part.split()
        reason = verdict(words, depth)
        if reason:
            return reason
    return None


def main() -> None:
    try:
        event = json.load(sys.stdin)
        command = str((event.get("input") or {}).get("command") or "")
    except (ValueError, AttributeError):
        print(json.dumps({"action": "block", "reason": "bash-guard: unreadable hook input"}))
        return
    reason = check(command)
    if reason:
        print(json.dumps({"action": "block", "reason": f"destructive command: {reason}"}))
    else:
        print(json.dumps({"action": "allow"}))


if __name__ == "__main__":
    main()
