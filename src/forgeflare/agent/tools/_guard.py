"""The Bash deny-list: one pure check of a command before it runs, in linear time.

This module is the one core of two guards: the agent's built-in check (:func:`denied_reason`,
the well-known disasters only) and the template hook ``.forgeflare/hooks/bash-guard.py``
(``strict=True``: also any recursive ``rm``, ``git reset --hard``, ``git clean -f``,
``git checkout -- .``, ``shred``), which embeds the code between the ``guard core`` markers
below verbatim (``forgeflare.templates._guard_script`` writes it; a test keeps them equal).
So the core is standard library only and runs on any Python 3.7+.

The command is lower-cased (capitals get nothing past it) and read the way a shell reads
it, in one pass: quotes and backslashes are removed from words (``"rm"``, ``r''m``, ``\\rm``
are ``rm``; ``${IFS}`` is a blank; ``{rm,-rf,/}`` is ``rm -rf /``), commands are split at
``;`` ``&&`` ``||`` ``|`` ``&`` newlines, ``( )``, ``$( )`` and backticks (also inside double
quotes), and the command name is taken after wrappers (``sudo``, ``env``, ``nohup``,
``timeout``, ``xargs``, ``nice``, ``time``...) and variable assignments. ``bash -c``/``sh -c``
strings, ``eval``, ``su -c`` and ``env -S`` are checked again as commands (at most four levels
deep, so the work stays linear). Newlines are also read as spaces in a second pass, so
splitting a command over lines does not hide it.

Denied in both modes:

- recursive ``rm`` (``-r``, ``-R``, ``--recursive``, in any cluster or order) of ``/`` or
  ``~`` in any spelling (``//``, ``/./``, ``/*``, ``/..``, ``$HOME``, ``${HOME}``), and
  ``--no-preserve-root`` anywhere; ``find`` from ``/`` or ``~`` with ``-delete`` or
  ``-exec rm``;
- fork bombs (``:(){ :|:& };:`` under any function name, spaces anywhere);
- ``dd of=/dev/...`` other than null/zero/stdout/stderr/tty/fd, redirection, ``tee`` or
  ``cp`` onto a disk device (``> /dev/sda``); ``mkfs`` in any form (``mkfs``, ``mkfs.ext4``,
  ``mke2fs``);
- ``chmod`` 777/``a+rwx`` on ``/`` or ``~``, and ``chmod``/``chown``/``chgrp -R`` on them;
- force pushes: ``git push`` with ``--force``, ``-f`` (alone or in a cluster such as
  ``-fu``), ``--force-with-lease`` / ``--force-if-includes`` in any form, ``--mirror``, or a
  ``+refspec`` (the first plain argument names the remote, so ``git push +x`` is not one).
  The lease variant is denied too: without an explicit expected value it compares with the
  remote-tracking ref, which every ``git fetch`` refreshes, so in an unattended loop it
  overwrites remote history just like ``--force``.

It is a seat belt against the well-known disasters, not a sandbox: a determined command can
always be written another way (``--sandbox`` confines Bash; hooks add project rules).
"""

from __future__ import annotations

import re

__all__ = ["check_command", "denied_reason", "normalize_command"]

# --- guard core begin ---
_MAX_DEPTH = 4
# One shell token. A plain run keeps its blanks, separators and redirections: it is cut
# with ``_PIECE`` and split into words in C, not token by token.
_TOKEN = re.compile(
    r"""(?P<plain>[^'"\\`$()]+)
    |(?P<sq>'[^']*'?)
    |(?P<ansi>\$'(?:[^'\\]|\\.)*'?)
    |(?P<dq>")
    |(?P<esc>\\(?:.|\n)?)
    |(?P<sub>\$\()
    |(?P<dollar>\$)
    |(?P<tick>`)
    |(?P<op>[()])
    """,
    re.VERBOSE,
)
_PIECE = re.compile(r"<<<|<<-?|>>|>&|&>>?|<&|>\||<>|&&|\|\||;;|[;&|\n<>]")
_DQ_TOKEN = re.compile(
    r"""(?P<text>[^"\\$`]+)|(?P<esc>\\.?)|(?P<sub>\$\()|(?P<tick>`)|(?P<dollar>\$)|(?P<close>")""",
    re.S,
)
_COMMENT = re.compile(r"(?:^|(?<=\s))#")
_ASSIGNMENT = re.compile(r"[a-z_][a-z0-9_]*\+?=")
_FUNC_DEF = re.compile(r"(?<![^\s;&|(){}<>`'\"])([^\s;&|(){}<>`'\"]+) ?\( ?\) ?\{")
_DISK = re.compile(r"/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-)")
_MODE_ALL = re.compile(r"0?777|[augo]*[+=]rwx")
_SAFE_DEVICES = ("null", "zero", "stdout", "stderr", "tty", "fd/")
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "yash"})
_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}"})
# Commands that run the rest of their words as a command: options that take a value.
_WRAPPERS = {
    # Lower-cased, so only options whose capital twin also takes a value (not -h, -p).
    "sudo": {"-u", "-g", "-c", "-d", "-r", "-t", "--user", "--group"},
    "doas": {"-u", "-c"},
    "env": {"-u", "-c", "--unset", "--chdir"},
    "nohup": set(),
    "setsid": set(),
    "time": {"-f", "-o", "--format", "--output"},
    "nice": {"-n", "--adjustment"},
    "ionice": {"-c", "-n", "-p"},
    "stdbuf": {"-i", "-o", "-e"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "xargs": {"-i", "-n", "-p", "-l", "-s", "-d", "-e", "-a", "--max-args", "--max-procs"}
    | {"--delimiter", "--arg-file", "--max-lines", "--max-chars"},
    "command": set(),
    "builtin": set(),
    "exec": {"-a"},
    "coproc": set(),
    "watch": {"-n", "-d", "--interval"},
    "chronic": set(),
    "unbuffer": set(),
}
# Every command name a rule looks at; any other simple command is passed over at once.
_NAMED = _SHELLS | _KEYWORDS | set(_WRAPPERS) | {"eval", "su", "rm", "find", "dd", "git"}
_NAMED |= {"chmod", "chown", "chgrp", "mke2fs", "mkswap", "wipefs", "shred", "tee", "cp"}
# A command can only be denied if one of these words survives removing quotes and
# backslashes (which is how ``r''m`` or ``\\rm`` spell ``rm``): a cheap first look.
_UNQUOTE = str.maketrans("", "", "'\"\\")
_SUSPECT = re.compile(
    r"(?<![a-z0-9_.+-])(?:rm|find|dd|git|chmod|chown|chgrp|mkfs|mke2fs|mkswap|wipefs|shred)"
    r"(?![a-z0-9_+-])|/dev/"
)
_GIT_GLOBAL_VALUE = frozenset({"-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"})
_FORCE_LONG = frozenset({"--force", "--force-with-lease", "--force-if-includes", "--mirror"})


def normalize_command(command: str) -> str:
    """The command lower-cased, with each run of whitespace made one space, trimmed."""
    return " ".join(command.lower().split())


def check_command(command: str, *, strict: bool = False) -> str | None:
    """Why ``command`` must not run, or ``None``; ``strict`` adds the template's rules."""
    text = command.lower()
    if "$" in text:  # ``rm${IFS}-rf${IFS}/``: the field separator is a blank
        text = text.replace("${ifs}", " ").replace("$ifs", " ")
    return _check(text, strict, 0)


def _check(text: str, strict: bool, depth: int) -> str | None:
    if depth > _MAX_DEPTH:
        return "command nested too deeply to check"
    reason = _fork_bomb(text)
    if reason is None and _SUSPECT.search(text.translate(_UNQUOTE)) is None:
        return None
    if reason is None:
        reason = _scan(text, strict, depth)
    if reason is None and "\n" in text:
        # A shell ends a command at a newline; a model may still mean the lines as one.
        reason = _scan(text.replace("\n", " "), strict, depth)
    return reason


def _fork_bomb(text: str) -> str | None:
    """Find ``NAME(){ ... NAME|NAME& ...}``, blanks anywhere."""
    if "{" not in text:
        return None
    flat = " ".join(text.split())
    defs = list(_FUNC_DEF.finditer(flat))
    close = -1
    for index, match in enumerate(defs):
        start = match.end()
        if close < start:
            close = flat.find("}", start)
            if close < 0:
                close = len(flat)
        stop = defs[index + 1].start() if index + 1 < len(defs) else len(flat)
        name = match.group(1)
        # Bodies are cut at the next definition, so each character is searched once.
        if name + "|" + name + "&" in "".join(flat[start : min(close, stop)].split()):
            return "fork bomb: a function that pipes into itself in the background"
    return None


def _scan(text: str, strict: bool, depth: int) -> str | None:
    """Split ``text`` into simple commands (one pass) and judge each."""
    words: list[str] = []
    redirects: list[tuple[str, str]] = []
    parts: list[str] = []
    in_word = False
    redirect = ""
    # Each open ``$(``, ``(`` or backtick, with whether it was opened inside double quotes.
    stack: list[tuple[str, bool]] = []
    quoted = False
    pos, size = 0, len(text)

    def finish_word() -> None:
        nonlocal in_word, redirect
        if in_word:
            word = "".join(parts)
            if redirect:
                redirects.append((redirect, word))
                redirect = ""
            else:
                words.append(word)
            parts.clear()
            in_word = False

    def add_words(piece: str) -> bool:
        """Add the words of a plain piece; true when a comment starts in it."""
        nonlocal in_word
        comment = _COMMENT.search(piece) if "#" in piece else None
        if comment and (comment.start() or not in_word):
            piece = piece[: comment.start()]
        else:
            comment = None
        pieces = piece.split()
        if not pieces or piece[0].isspace():
            finish_word()
        if pieces:
            parts.append(pieces[0])
            in_word = True
            if len(pieces) > 1:
                finish_word()
                words.extend(pieces[1:-1])
                parts.append(pieces[-1])
                in_word = True
            if piece[-1].isspace():
                finish_word()
        return comment is not None

    # Simple commands that pass, as seen: a long script repeats the same few commands, and a
    # verdict depends on the command alone.
    passed: set[tuple[tuple[str, ...], tuple[tuple[str, str], ...]]] = set()

    def finish_command() -> str | None:
        nonlocal redirect
        finish_word()
        redirect = ""  # ``<(cmd)``: the command inside is no redirection target
        reason = None
        if words or redirects:
            key = (tuple(words), tuple(redirects))
            if key not in passed:
                reason = _verdict(words, redirects, strict, depth)
                if reason is None:
                    passed.add(key)
        words.clear()
        redirects.clear()
        return reason

    while pos < size:
        if quoted:
            match = _DQ_TOKEN.match(text, pos)
            if match is None:  # pragma: no cover - the pattern matches any character
                break
            pos = match.end()
            kind = match.lastgroup
            if kind == "text" or kind == "dollar":
                parts.append(match.group())
            elif kind == "esc":
                parts.append(match.group()[1:] if len(match.group()) > 1 else "\\")
            elif kind == "close":
                quoted = False
            else:  # ``$(`` or a backtick inside double quotes runs a command
                reason = finish_command()
                if reason:
                    return reason
                stack.append(("$(" if kind == "sub" else "`", True))
                quoted = False
            continue
        match = _TOKEN.match(text, pos)
        if match is None:  # pragma: no cover - the pattern matches any character
            break
        pos = match.end()
        kind = match.lastgroup
        value = match.group()
        if kind == "plain":
            last = 0
            for sep in _PIECE.finditer(value):
                if add_words(value[last : sep.start()]):
                    break
                last = sep.end()
                op = sep.group()
                if op[0] in "<>" or op[:2] == "&>":
                    finish_word()
                    redirect = op
                else:
                    reason = finish_command()
                    if reason:
                        return reason
            else:
                if not add_words(value[last:]):
                    continue
            # A comment: skip to the end of its line, where the next command starts.
            end = text.find("\n", match.start() + last)
            pos = size if end < 0 else end
        elif kind == "sq":
            parts.append(value[1:-1] if value.endswith("'") and len(value) > 1 else value[1:])
            in_word = True
        elif kind == "ansi":
            parts.append(value[2:-1] if value.endswith("'") and len(value) > 2 else value[2:])
            in_word = True
        elif kind == "dq":
            quoted = True
            in_word = True
        elif kind == "esc":
            if value != "\\\n":  # a backslash-newline joins lines
                parts.append(value[1:] or "\\")
                in_word = True
        elif kind == "dollar":
            parts.append("$")
            in_word = True
        else:  # ``(``, ``)``, ``$(`` or a backtick
            reason = finish_command()
            if reason:
                return reason
            if kind == "sub" or value == "(":
                stack.append((value, False))
            elif value == ")" and stack:
                if stack.pop() == ("$(", True):
                    quoted, in_word = True, True
            elif kind == "tick":
                if stack and stack[-1][0] == "`":
                    if stack.pop()[1]:
                        quoted, in_word = True, True
                else:
                    stack.append(("`", False))
    return finish_command()


def _flags(args: list[str]) -> tuple[str, set[str], list[str]]:
    """Letters of the short option clusters, the long options, and the other arguments."""
    letters, longs, plain = "", set(), []
    for index, arg in enumerate(args):
        if arg == "--":
            plain.extend(args[index + 1 :])
            break
        if arg.startswith("--"):
            longs.add(arg.split("=", 1)[0])
        elif arg.startswith("-") and len(arg) > 1:
            letters += arg[1:]
        else:
            plain.append(arg)
    return letters, longs, plain


def _recursive(args: list[str]) -> bool:
    letters, longs, _ = _flags(args)
    return "r" in letters or "--recursive" in longs


def _whole_tree(path: str) -> bool:
    """Whether ``path`` names ``/`` or a home directory (or everything directly in it)."""
    home = next((h for h in ("${home}", "$home") if path.split("/", 1)[0] == h), None)
    if home or path.startswith("~"):  # ``~user`` is a home too
        rest = path.split("/", 1)[1] if "/" in path else ""
    elif path.startswith("/"):
        rest = path
    else:
        return False
    parts: list[str] = []
    for part in rest.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return not parts or (len(parts) == 1 and any(c in parts[0] for c in "*?["))


def _unwrap(words: list[str], strict: bool, depth: int) -> tuple[list[str], str | None]:
    """The words after wrappers and assignments; or a reason found in ``env -S``."""
    index, size = 0, len(words)
    while index < size:
        word = words[index]
        name = word.rsplit("/", 1)[-1]
        if word in _KEYWORDS or _ASSIGNMENT.match(word):
            index += 1
            continue
        options = _WRAPPERS.get(name)
        if options is None:
            break
        index += 1
        duration = name == "timeout"
        while index < size:
            arg = words[index]
            if arg == "--":
                index += 1
                break
            if arg.startswith("-") and len(arg) > 1:
                if name == "env" and arg in ("-s", "--split-string"):
                    rest = " ".join(words[index + 1 :])
                    return [], _check(rest, strict, depth + 1)
                index += 2 if arg in options else 1
            elif duration:
                duration = False
                index += 1
            else:
                break
        if name == "watch":
            return [], _check(" ".join(words[index:]), strict, depth + 1)
    return words[index:], None


def _braces(words: list[str]) -> list[str]:
    """Brace expansion of the command word: ``{rm,-rf,/}`` is the command ``rm -rf /``."""
    first = words[0] if words else ""
    if first[:1] == "{" and first[-1:] == "}" and "," in first:
        return first[1:-1].split(",") + words[1:]
    return words


def _verdict(
    words: list[str], redirects: list[tuple[str, str]], strict: bool, depth: int
) -> str | None:
    """A reason to block one simple command, or ``None``."""
    words = _braces(words)
    first = words[0] if words else ""
    name = first.rsplit("/", 1)[-1] if "/" in first else first
    boring = name not in _NAMED and "=" not in first and not name.startswith("mkfs")
    if boring and not redirects:
        return None
    for op, target in redirects:
        if op != "<<<" and _DISK.match(target):
            return "redirecting output onto a disk device destroys its data"
    if first in _KEYWORDS or name in _WRAPPERS or "=" in first:
        words, reason = _unwrap(words, strict, depth)
        if reason or not words:
            return reason
        words = _braces(words)
        name = words[0].rsplit("/", 1)[-1]
    if not words:
        return None
    args = words[1:]
    if name in _SHELLS:
        for op, target in redirects:
            if op == "<<<":
                reason = _check(target, strict, depth + 1)
                if reason:
                    return reason
        return _shell(args, strict, depth)
    if name == "eval":
        return _check(" ".join(args), strict, depth + 1)
    if name == "su":
        for index, arg in enumerate(args):
            if arg in ("-c", "--command") and index + 1 < len(args):
                return _check(args[index + 1], strict, depth + 1)
            if arg.startswith("--command="):
                return _check(arg.split("=", 1)[1], strict, depth + 1)
        return None
    if name == "rm":
        _, longs, plain = _flags(args)
        return _rm(_recursive(args), longs, plain, strict)
    if name == "find":
        return _find(args)
    if name in ("mkfs", "mke2fs") or name.startswith("mkfs."):
        return f"{name} formats a file system; never in an unattended loop"
    if name == "dd":
        for arg in args:
            if arg.startswith("of=/dev/") and not arg[8:].startswith(_SAFE_DEVICES):
                return f"dd writing to a device ({arg}) destroys its data"
        return None
    if name in ("tee", "cp") and any(_DISK.match(arg) for arg in args):
        return f"{name} onto a disk device destroys its data"
    if name in ("chmod", "chown", "chgrp"):
        roots = [a for a in args if _whole_tree(a)]
        if roots and name == "chmod" and any(_MODE_ALL.fullmatch(a) for a in args):
            return "chmod 777 on / or ~ opens the whole system to everyone"
        if roots and _recursive(args):
            return f"{name} -R on {roots[0]} breaks the system; change specific paths"
        return None
    if name == "git":
        return _git(args, strict)
    if strict:
        if name in ("mkswap", "wipefs"):
            return f"{name} formats a device; never in an unattended loop"
        if name == "shred":
            return "shred destroys files beyond recovery; delete specific files by name"
    return None


def _shell(args: list[str], strict: bool, depth: int) -> str | None:
    """Check the command string of ``bash -c STRING`` (options may come first: ``-lc``)."""
    command, index = False, 0
    while index < len(args):
        arg = args[index]
        if arg in ("-o", "+o", "--rcfile", "--init-file"):
            index += 2
            continue
        if arg == "--":
            index += 1
            break
        if arg[:1] in ("-", "+") and len(arg) > 1:
            command = command or (arg[0] == "-" and not arg.startswith("--") and "c" in arg)
            command = command or arg == "--command"
            index += 1
            continue
        break
    if command and index < len(args):
        return _check(args[index], strict, depth + 1)
    return None


def _rm(recursive: bool, longs: set[str], targets: list[str], strict: bool) -> str | None:
    if "--no-preserve-root" in longs:
        return "rm --no-preserve-root is never needed by a coding task"
    if not recursive:
        return None
    for target in targets:
        if target[:1] in "/~$" and _whole_tree(target):
            return f"recursive rm of {target} would delete everything under it"
    if strict:
        shown = " ".join(targets) or "?"
        return (
            f"recursive rm deletes a whole tree for good (rm -r {shown}); leave it, "
            "move it aside with mv, or remove specific files by name"
        )
    return None


def _find(args: list[str]) -> str | None:
    starts: list[str] = []
    for arg in args:
        if arg in ("-h", "-l", "-p") and not starts:
            continue
        if arg.startswith(("-", "(", "!")):
            break
        starts.append(arg)
    if not any(_whole_tree(start) for start in starts):
        return None
    for index, arg in enumerate(args):
        if arg == "-delete":
            return "find / -delete would delete everything under it"
        runs = arg in ("-exec", "-execdir", "-ok", "-okdir") and index + 1 < len(args)
        if runs and args[index + 1].rsplit("/", 1)[-1] in ("rm", "shred", "unlink"):
            return "find / -exec rm would delete everything under it"
    return None


def _git(args: list[str], strict: bool) -> str | None:
    index = 0
    # Skip git's global options to find the subcommand (git -C dir -c k=v push ...).
    while index < len(args) and args[index].startswith("-"):
        index += 2 if args[index] in _GIT_GLOBAL_VALUE else 1
    if index >= len(args):
        return None
    sub, rest = args[index], args[index + 1 :]
    if sub == "push":
        return _push(rest)
    if not strict:
        return None
    letters, longs, _ = _flags(rest)
    if sub == "reset" and "--hard" in longs:
        return (
            "git reset --hard throws away uncommitted work; commit or stash it, "
            "or git restore specific files"
        )
    if sub == "clean" and ("f" in letters or "--force" in longs):
        return "git clean -f deletes untracked files for good; delete specific files by name"
    if sub == "checkout" and "--" in rest and "." in rest[rest.index("--") :]:
        return "git checkout -- . throws away uncommitted work; restore specific files"
    return None


def _push(args: list[str]) -> str | None:
    """A reason to block ``git push ARGS``: any force, or a ``+refspec`` after the remote."""
    remote_named, skip, plain_only = False, False, False
    for arg in args:
        if skip:
            skip = False
            continue
        forced = None
        if not plain_only and arg.startswith("--") and len(arg) > 2:
            option = arg.split("=", 1)[0]
            if option in _FORCE_LONG:
                forced = arg
            elif option == "--repo":
                remote_named = True
                skip = "=" not in arg
            elif option in ("--push-option", "--receive-pack", "--exec"):
                skip = "=" not in arg
        elif arg == "--":
            plain_only = True
        elif not plain_only and arg.startswith("-") and len(arg) > 1:
            if "f" in arg[1:]:
                forced = arg
            skip = arg.endswith("o")
        elif not remote_named:
            remote_named = True
        elif arg.startswith("+"):
            forced = arg
        if forced:
            return (
                f"git push with {forced} rewrites remote history (force pushes, "
                "--force-with-lease included, are not allowed); push normally, pull and "
                "rebase first if it is rejected"
            )
    return None


# --- guard core end ---


def denied_reason(command: str) -> str | None:
    """Why ``command`` must not run, or ``None`` when the deny-list has no objection."""
    return check_command(command)
