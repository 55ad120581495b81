"""The Bash deny-list: one pure check of a command before it runs, in linear time.

This module is the one core of two guards: the agent's built-in check (:func:`denied_reason`,
the well-known disasters only) and the template hook ``.forgeflare/hooks/bash-guard.py``
(``strict=True``: also any recursive ``rm``, ``git reset --hard``, ``git clean -f``,
``git checkout -- .``, ``shred``), which embeds the code between the ``guard core`` markers
below verbatim (``forgeflare.templates._guard_script`` writes it; a test keeps them equal).
So the core is standard library only and runs on any Python 3.7+.

The command is read the way a shell reads it, in one pass: quotes and backslashes are removed
from words (``"rm"``, ``r''m``, ``\\rm`` are ``rm``; ``$'\\x2f'`` is ``/``; ``${IFS}`` is a
blank; ``$"/"`` is ``/``; ``{rm,-rf,/}`` is ``rm -rf /``; capitals get nothing past it;
``/proc/self/root/`` and ``/proc/PID/root/`` are ``/``), commands are split at
``;`` ``&&`` ``||`` ``|`` ``&`` newlines, ``( )``, ``$( )``, ``<( )`` and backticks, and the
command name is taken after wrappers (``sudo``, ``env``, ``nohup``, ``timeout``, ``busybox``,
``unshare``, ``chroot /``, ``strace``, ``flock F``, ``runuser -u U --``, ``fakeroot``,
``setpriv``, ``toybox``...), keywords (``function f { BODY; }``: BODY is read) and variable
assignments. Here-document bodies are data, not commands (what they feed is read).

**It follows the shell.** The working directory starts at ``cwd`` (the project) and moves with
``cd``, ``pushd``, ``popd``, ``cd -``, ``env -C``; a subshell, substitution or ``bash -c`` does
not move the caller's. A ``cd`` to a place it cannot know (``cd "$X"``) makes the directory
unknown. Targets are expanded as the shell would there: ``*``, ``.``, ``..`` chains, ``~``,
``$HOME``, ``${HOME:?}``, ``$PWD``, ``$(pwd)``, variables the command set, brace expansion
(``/{,}``). What is fed to a command is read too: text piped or given by a here-string or
here-document to ``xargs``/``parallel`` (as their arguments), to a shell, ``source <(...)`` or
an interpreter (as a script), through ``base64 -d``, ``xxd -r -p`` and ``rev``, and the paths
``ls -d``, ``realpath`` and ``readlink -f`` print; ``bash -c`` (with ``$1``... from the words
after it), ``eval``, ``su -c``, ``trap``, ``env -S`` strings and ``alias`` values are checked as
commands (at most four levels deep, so the work stays linear).

Denied in both modes:

- a recursive ``rm`` (``-r``, ``-R``, ``--recursive``, in any cluster or order) of ``/``, a
  top-level directory, ``~`` or a directory above it, the project or a directory above it, or
  everything in one of them (``*``; in ``/`` and ``~`` any pattern); of ``*``, ``.`` or ``..``
  in a directory the check cannot know; ``--no-preserve-root`` anywhere; ``find`` from such a
  root with ``-delete``, ``-exec rm`` or piped into ``xargs rm`` (from the project only when no
  test such as ``-name`` narrows it; a narrowed one in ``/tmp`` is scratch work), and any
  ``-exec CMD {}`` of an unnarrowed ``find`` judged as CMD on its root (``find / -exec chmod
  777 {} +``); ``git clean -f`` in ``/`` or ``~``;
- interpreter one-liners and scripts fed to them (``python -c``, ``perl -e``, ``node -e``,
  ``ruby -e``, ``php -r``, an ``awk`` program) that name a disaster: a tree deletion of such a
  path (``shutil.rmtree('/')``), a string, perl ``q{}``/``qq{}``, concatenation or argument
  list that is a denied command (``os.system("rm -rf /")``), base64 of one;
- fork bombs (a function that starts itself twice, once in the background: ``:(){ :|:& };:``,
  ``b(){ b&b; }; b``, ``function b { b|b& }``, ``f() ( f|f& )``, ``$FUNCNAME``; perl's
  ``fork while fork``);
- ``dd of=/dev/...`` other than null/zero/stdout/stderr/tty/fd, redirection, ``tee`` or
  ``cp`` onto a disk device (``> /dev/sda``); ``mkfs`` in any form, ``mke2fs``, ``mkswap``,
  ``wipefs``, ``blkdiscard``;
- ``chmod`` 777/``a+rwx`` on ``/``, ``~`` or a top-level directory, and ``chmod``/``chown``/
  ``chgrp -R`` on them;
- force pushes: ``git push`` with ``--force``, ``-f`` (alone or in a cluster such as
  ``-fu``), ``--force-with-lease`` / ``--force-if-includes`` in any form, ``--mirror`` (or a
  prefix git takes for one of these: ``--force-w``, ``--mirr``), or a
  ``+refspec`` (the first plain argument names the remote, so ``git push +x`` is not one);
  ``git send-pack --force``; a git alias that does one (``git -c alias.p='push -f' p``,
  ``git config alias.p 'push -f'``), ``remote.*.push`` with ``+``, ``remote.*.mirror``.
  The lease variant is denied too: without an explicit expected value it compares with the
  remote-tracking ref, which every ``git fetch`` refreshes, so in an unattended loop it
  overwrites remote history just like ``--force``.

It is a seat belt against the well-known disasters, not a sandbox: a deny-list reads words and
cannot see through code (a script file, a loop, a computed path); ``--sandbox`` (bubblewrap)
confines Bash, and hooks add project rules.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import os
import re

__all__ = ["check_command", "denied_reason", "normalize_command"]

# --- guard core begin ---
_MAX_DEPTH = 4
_MAX_OPEN = 200  # subshells and substitutions open at once (no real command nests so deep)
_CAP = 4096  # the longest value a shell variable keeps (longer ones are unknown)
_UNKNOWN = "\x03"  # a value the check cannot know: ``$X``, ``$(cmd)``
_PROJECT = "\x02"  # the project directory, when its path was not given
_NOWHERE = "\x04"  # a directory the check cannot know (after ``cd "$X"``)
_SUB = "\x01"  # ``\x01N\x01``: the value of the Nth command substitution
_FILE = "\x05"  # ``\x05N\x05``: a process substitution ``<(cmd)``, a file holding its output
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
    re.VERBOSE | re.S,
)
_PIECE = re.compile(r"<<<|<<-?|>>|>&|&>>?|<&|>\||<>|&&|\|\||\|&|;;|[;&|\n<>]")
_DQ_TOKEN = re.compile(
    r"""(?P<text>[^"\\$`]+)|(?P<esc>\\.?)|(?P<sub>\$\()|(?P<tick>`)|(?P<dollar>\$)|(?P<close>")""",
    re.S,
)
_COMMENT = re.compile(r"(?:^|(?<=\s))#")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_FUNC_DEF = re.compile(
    r"(?<![^\s;&|(){}<>`'\"])(?:function ([^\s;&|(){}<>`'\"]+) ?(?:\( ?\) ?)?[{(]"
    r"|([^\s;&|(){}<>`'\"]+) ?\( ?\) ?[{(])"
)
# perl's ``fork while fork``, ``fork while 1``, ``1 while fork``; a loop of os.fork().
_FORK_LOOP = re.compile(
    r"\bfork\s+(?:while|until)\b|\bwhile\s+fork\b|\bwhile\s*\(?\s*(?:true|1)\s*\)?\s*:?\s*os\.fork\(\)"
)
_DISK = re.compile(r"/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-)")
_MODE_ALL = re.compile(r"0?777|[augo]*[+=]rwx")
_IFS = re.compile(r"\$\{ifs\}|\$ifs", re.I)
_ANSI = re.compile(
    r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)", re.S
)
_ANSI_CHARS = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "f": "\f"}
_VAR = re.compile(
    r"\$(?:\{(#?)([a-z_][a-z0-9_]*|[0-9@*#?$!-])([^}]*)\}|([a-z_][a-z0-9_]*)|([0-9@*#?$!-]))"
)
_BRACE = re.compile(r"\{([^{}]*,[^{}]*)\}")
_PLAIN = re.compile(r"[a-z0-9_][^$~{}*?\[\]\x01-\x05]*\Z")
_GLOB = re.compile(r"[*?\[]")
_BROAD = re.compile(r"(?:[*?.]|\[[^\]]*\])*")
_PLACEHOLDER = re.compile("\x01([0-9]+)\x01")
_PRINTF = re.compile(r"%(?:%|[-+ #0]*[0-9]*(?:\.[0-9]*)?[a-zA-Z])")
_SAFE_DEVICES = ("null", "zero", "stdout", "stderr", "tty", "fd/")
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "yash"})
_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}"})
# Commands that run the rest of their words as a command: the options that take a value
# (case matters: ``unshare -r`` is a flag, ``-R DIR`` takes one), and how many plain
# arguments come before the command (``timeout 10``, ``chroot /``, ``flock FILE``).
_WRAPPERS = {
    "sudo": ({"-u", "-g", "-C", "-D", "-p", "-r", "-t", "-T", "-U", "--user", "--group"}, 0),
    "doas": ({"-u", "-C"}, 0),
    "env": ({"-u", "-C", "--unset", "--chdir"}, 0),
    "nohup": (set(), 0),
    "setsid": (set(), 0),
    "time": ({"-f", "-o", "--format", "--output"}, 0),
    "nice": ({"-n", "--adjustment"}, 0),
    "ionice": ({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}, 0),
    "stdbuf": ({"-i", "-o", "-e"}, 0),
    "timeout": ({"-s", "-k", "--signal", "--kill-after"}, 1),
    "command": (set(), 0),
    "builtin": (set(), 0),
    "exec": ({"-a"}, 0),
    "coproc": (set(), 0),
    "watch": ({"-n", "--interval"}, 0),
    "chronic": (set(), 0),
    "unbuffer": (set(), 0),
    "busybox": (set(), 0),
    "toybox": (set(), 0),
    "setpriv": (
        {"--reuid", "--regid", "--groups", "--inh-caps", "--ambient-caps", "--bounding-set"}
        | {"--securebits", "--pdeathsig", "--selinux-label", "--apparmor-profile"},
        0,
    ),
    "unshare": ({"-R", "-w", "-S", "-G", "--root", "--wd", "--setuid", "--setgid"}, 0),
    "nsenter": ({"-t", "-S", "-G", "--target", "--setuid", "--setgid"}, 0),
    "chroot": ({"--userspec", "--groups"}, 1),
    "strace": ({"-o", "-e", "-p", "-s", "-u", "-a", "-b", "-E", "-I", "-O", "-P", "-S", "-X"}, 0),
    "ltrace": ({"-o", "-e", "-p", "-s", "-u", "-a", "-n", "-A", "-D", "-F", "-l"}, 0),
    "flock": ({"-w", "-E", "--timeout", "--conflict-exit-code"}, 1),
    "fakeroot": ({"-l", "-s", "-i", "--lib", "--faked"}, 0),
    "pkexec": ({"--user"}, 0),
    "taskset": (set(), 1),
    "chrt": (set(), 1),
    "faketime": ({"-f"}, 1),
    "systemd-run": ({"-p", "-u", "-E", "-M", "-H", "--property", "--unit", "--setenv"}, 0),
    "firejail": (set(), 0),
    "prlimit": (set(), 0),
    "catchsegv": (set(), 0),
    "valgrind": (set(), 0),
    "torsocks": (set(), 0),
    "proxychains": (set(), 0),
    "proxychains4": (set(), 0),
    "xvfb-run": ({"-n", "-s", "-f", "-e", "-p", "-w"}, 0),
    "nocorrect": (set(), 0),
    "noglob": (set(), 0),
}
# Flags whose other case takes a value (``sudo -P``/``-p``, ``unshare -r``/``-R``).
_CASE_FLAGS = frozenset({"-P", "-A", "-i", "-x", "-r", "-T", "-e", "-h"})
_CHDIR = frozenset({"-C", "--chdir", "-D"})  # env -C DIR, sudo -D DIR: the command runs there
_SHELL_STRING = frozenset({"-c", "--command"})  # flock F -c CMD, runuser -c CMD, su -c CMD
_RUNUSER_VALUE = frozenset({"-u", "-g", "-G", "-s", "-w", "--user", "--group", "--shell"})
# Options of xargs and parallel that take a value.
_XARGS_VALUE = frozenset(
    {"-n", "-L", "-P", "-s", "-d", "-E", "-j", "-N", "-S", "-C", "--max-args", "--max-procs"}
    | {"--max-lines", "--max-chars", "--delimiter", "--jobs", "--colsep", "--delay", "--timeout"}
    | {"--joblog", "--results", "--tmpdir", "--workdir", "--wd", "--sshlogin", "--basefile"}
    | {"--env", "--tagstring", "--halt", "--retries", "--memfree", "--load", "--nice"}
)
_PRODUCERS = frozenset({"echo", "printf", "cat", "base64", "base32", "xxd", "rev", "pwd"})
_PRODUCERS |= {"ls", "realpath", "readlink"}  # ``ls -d /`` prints ``/``
_AWK = frozenset({"awk", "gawk", "mawk", "nawk"})
_AWK_VALUE = frozenset({"-F", "-v", "-f", "--field-separator", "--assign", "--file"})
_SETTERS = frozenset({"export", "declare", "local", "readonly", "typeset"})
_INTERPRETER = re.compile(r"(?:python|pypy|perl|ruby|php|lua)[0-9.]*|node(?:js)?|deno|bun")
_CODE_LETTERS = {"python": "c", "pypy": "c", "perl": "eE", "ruby": "e", "php": "r", "lua": "e"}
# Every command name a rule looks at; any other simple command is passed over at once.
_NAMED = _SHELLS | _KEYWORDS | set(_WRAPPERS) | _SETTERS | {"eval", "su", "rm", "find", "dd"}
_NAMED |= {"chmod", "chown", "chgrp", "mke2fs", "mkswap", "wipefs", "shred", "tee", "cp", "git"}
_NAMED |= {"cd", "pushd", "popd", "xargs", "parallel", "source", ".", "trap", "sg", "script"}
_NAMED |= {"blkdiscard", "runuser", "for", "select", "alias", "function"} | _AWK
# A command can only be denied if one of these words survives removing quotes and
# backslashes (which is how ``r''m`` or ``\\rm`` spell ``rm``): a cheap first look, made of
# C-speed passes (a translation to words, a set intersection).
_WORDS: dict[int, str | None] = {
    i: " " for i in range(128) if not (chr(i).isalnum() or chr(i) in "_.+-")
}
_WORDS.update({ord("'"): None, ord('"'): None, ord("\\"): None})
_SUSPECT = frozenset(
    {"rm", "find", "dd", "git", "chmod", "chown", "chgrp", "mkfs", "mke2fs", "mkswap", "wipefs"}
    | {"shred", "blkdiscard", "xargs", "parallel", "eval", "source", "trap", "busybox", "su"}
    | {"runuser", "sg", "script", "node", "nodejs", "deno", "bun", "base64", "base32", "xxd"}
    | {"rev", "ls", "realpath", "readlink", "alias", "toybox", "setpriv", "function"}
    | _AWK
    | _SHELLS
)
_SUSPECT_FAMILY = re.compile(r"(?:^| )(?:python|pypy|perl|ruby|php|lua|mkfs)")
_SOURCE_DOT = re.compile(r"(?:^|[\s;&|(])\.\s")
_GIT_GLOBAL_VALUE = frozenset({"-c", "-C", "--git-dir", "--work-tree", "--namespace"})
_FORCE_LONG = frozenset({"--force", "--force-with-lease", "--force-if-includes", "--mirror"})
_FIND_TESTS = frozenset(
    {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex"}
    | {"-newer", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-size", "-empty"}
    | {"-user", "-group", "-perm", "-links", "-inum", "-samefile", "-lname", "-ilname", "-uid"}
)
_SYSTEM = frozenset({"root", "home", "top"})  # never to be deleted, filtered or not
_DELETERS = frozenset({"rm", "shred", "unlink"})
# Deleting a tree from code: the call and a literal path (or the home directory).
_CODE_DELETE = re.compile(
    r"(?<![a-z0-9_])(?P<call>rmtree|rm_rf|rm_r|remove_tree|rmsync|rimraf(?:\.sync)?|fs\.rm"
    r"|remove_dir_all|deltree|rmdir_p)\s*\(\s*(?:(?:pathlib\.)?path\(\s*|pathname\.new\(\s*)?"
    r"""(?:r?(?P<q>['"])(?P<path>[^'"]*)(?P=q)|q[{(\[](?P<perl>[^})\]]*)[})\]]|(?P<home>(?:pathlib\.)?path\.home\(\)"""
    r"""|os\.path\.expanduser\(\s*['"]~/?['"]\s*\)|os\.environ\[\s*['"]home['"]\s*\]"""
    r"""|os\.(?:environ\.get|getenv)\(\s*['"]home['"]\s*\)|process\.env\.home|os\.homedir\(\)"""
    r"""|env\[\s*['"]home['"]\s*\]|\$env\{\s*['"]?home['"]?\s*\}|dir\.home))"""
)
_LITERAL = re.compile(
    r""""((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'|`((?:[^`\\]|\\.)*)`"""
    # perl's quote-like operators: q{...}, qq(...), qx[...], qq<...>
    r"|(?<![a-z0-9_$@%])q[qx]?\s*(?:\{([^{}]*)\}|\(([^()]*)\)|\[([^\[\]]*)\]|<([^<>]*)>)",
    re.I,
)
# Between the literals of an argument list (a comma) or of a concatenation (perl's ``.``,
# python's and node's ``+``, awk's juxtaposition).
_LITERAL_GAP = re.compile(r"\s*(?:(,)|[.+]?)\s*")
_BASE64 = re.compile(r"[A-Za-z0-9+/]{8,}={0,2}")


class _Found:
    """What ``find`` lists, fed into a pipe: why deleting all of it would be a disaster."""

    __slots__ = ("reason",)

    def __init__(self, reason: str | None) -> None:
        self.reason = reason


class _Shell:
    """Where a command is read: the home and project directories, and what the shell has
    done so far (its directory, ``OLDPWD``, the ``pushd`` stack, variables it set)."""

    __slots__ = (
        "budget", "dirs", "ends", "files", "home", "lost", "old", "project", "pwd", "strict",
        "subs", "vars", "version",
    )  # fmt: skip

    def __init__(self, strict: bool, home: list[str] | None, project: list[str] | None) -> None:
        self.strict, self.home, self.project = strict, home, project
        self.pwd = _PROJECT if project is None else "/" + "/".join(project)
        self.old: str | None = None
        self.lost = ""  # the cd that made the directory unknown, for the reason
        # Both are replaced, never changed in place, so saving the state copies nothing.
        self.dirs: tuple[str, ...] = ()
        self.vars: dict[str, str] = {}
        self.subs: list[str | None] = []
        # What the command wrote into files (``echo ... > x.sh``), for ``bash x.sh`` after it.
        self.files: dict[tuple[str, tuple[str, ...]], str] = {}
        # Characters the check may still make (here-document bodies, what commands print):
        # shared by every copy, so that nothing it makes grows faster than the command.
        self.budget = [0]
        # The text whose here-document ends were found: delimiter -> where its lines start.
        self.ends: tuple[str, dict[str, list[int]]] = ("", {})
        self.version = 0  # changes with every assignment: part of a cache key

    def fork(self) -> _Shell:
        other = _Shell.__new__(_Shell)
        other.strict, other.home, other.project = self.strict, self.home, self.project
        other.pwd, other.old, other.lost = self.pwd, self.old, self.lost
        other.dirs, other.vars = self.dirs, self.vars
        other.subs, other.budget, other.ends = self.subs, self.budget, self.ends
        other.files = self.files  # the file system is one for every subshell
        other.version = self.version
        return other

    def save(self) -> tuple[str, str | None, str, tuple[str, ...], dict[str, str]]:
        return self.pwd, self.old, self.lost, self.dirs, self.vars

    def restore(self, saved: tuple[str, str | None, str, tuple[str, ...], dict[str, str]]) -> None:
        self.pwd, self.old, self.lost, self.dirs, self.vars = saved

    def state(self) -> tuple[str, str | None, tuple[str, ...], int, int]:
        """What a verdict depends on besides the command (a cache key)."""
        return self.pwd, self.old, self.dirs, self.version, id(self.vars)


def normalize_command(command: str) -> str:
    """The command lower-cased, with each run of whitespace made one space, trimmed."""
    return " ".join(command.lower().split())


def check_command(
    command: str, *, strict: bool = False, cwd: str | None = None, home: str | None = None
) -> str | None:
    """Why ``command`` must not run, or ``None``; ``strict`` adds the template's rules.

    ``cwd`` is the directory the command starts in (the project), ``home`` the user's home:
    relative paths, ``..`` chains, ``cd`` and ``$PWD`` are judged against them; without
    them, they are judged as "the project" and "~".
    """
    text = _IFS.sub(" ", command) if "$" in command else command
    sh = _Shell(strict, _parts(home), _parts(cwd))
    sh.budget[0] = 4 * len(text) + 65536
    return _check(text, sh, 0, shared=True)


def _parts(path: str | None) -> list[str] | None:
    if not path or not path.startswith("/"):
        return None
    return [p for p in path.lower().split("/") if p not in ("", ".")]


def _check(text: str, sh: _Shell, depth: int, *, shared: bool = False) -> str | None:
    """Read ``text`` as commands; ``shared``: in ``sh`` itself (``eval``), not a copy of it."""
    if depth > _MAX_DEPTH:
        return "command nested too deeply to check"
    low = text.lower()
    reason = _fork_bomb(low)
    if reason is None and not _suspect(low):
        return None
    start = sh.fork()
    bodies: list[tuple[int, int]] = []
    if reason is None:
        reason = _scan(text, sh if shared else start.fork(), depth, bodies)
    if reason is None and "\n" in text:
        # A shell ends a command at a newline; a model may still mean the lines as one. A
        # here-document's body is data (what it feeds a shell was judged above).
        for begin, end in reversed(bodies):
            text = text[:begin] + text[end:]
        reason = _scan(text.replace("\n", " "), start, depth)
    return reason


def _suspect(low: str) -> bool:
    """Whether a rule could apply to the (lower-cased) text at all."""
    if "/dev/" in low or "$'" in low or (". " in low and _SOURCE_DOT.search(low)):
        return True
    for text in (low[:2048], low) if len(low) > 4096 else (low,):  # most say so early
        words = set(text.translate(_WORDS).split())
        if not words.isdisjoint(_SUSPECT) or _SUSPECT_FAMILY.search(" ".join(words)):
            return True
    return False


def _fork_bomb(text: str) -> str | None:
    """Find ``NAME(){ ... }`` (``NAME() ( ... )``, ``function NAME { ... }``) whose body
    starts itself twice, once in the background; perl's ``fork while fork``."""
    if "fork" in text and _FORK_LOOP.search(text):
        return "fork bomb: a loop that forks without end"
    if "{" not in text and "(" not in text:
        return None
    flat = " ".join(text.split())
    defs = list(_FUNC_DEF.finditer(flat))
    close, closer = -1, ""
    for index, match in enumerate(defs):
        start = match.end()
        end = "}" if flat[start - 1] == "{" else ")"
        if close < start or end != closer:
            close, closer = flat.find(end, start), end
            if close < 0:
                close = len(flat)
        stop = defs[index + 1].start() if index + 1 < len(defs) else len(flat)
        name = match.group(1) or match.group(2)
        # Bodies are cut at the next definition, so each character is searched once.
        body = flat[start : min(close, stop)]
        if "funcname" in body:  # bash names the running function $FUNCNAME
            body = body.replace("${funcname}", name).replace("$funcname", name)
        tight = "".join(body.split())
        calls = re.split(r"[\s;&|(){}<>]+", body).count(name)
        if name + "|" + name + "&" in tight or (calls > 1 and "&" in tight.replace("&&", "")):
            return "fork bomb: a function that starts itself again and again in the background"
    return None


def _ansi(text: str) -> str:
    """Backslash escapes as ``$'...'``, ``echo -e`` and ``printf`` read them."""
    if "\\" not in text:
        return text

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] in "xuU":
            value = int(code[1:], 16)
            return chr(value) if value < 0x110000 else ""
        if code[0] in "01234567":
            return chr(int(code, 8) & 0xFF)
        if code[0] == "c" and len(code) > 1:
            return chr(ord(code[1]) & 0x1F)
        return _ANSI_CHARS.get(code, code)

    return _ANSI.sub(one, text)


def _scan(
    text: str, sh: _Shell, depth: int, bodies: list[tuple[int, int]] | None = None
) -> str | None:
    """Split ``text`` into simple commands (one pass), follow the shell's state, judge each.
    Here-document bodies are skipped as commands (they are the command's input); their spans
    go into ``bodies``."""
    words: list[str] = []
    redirects: list[tuple[str, str, int]] = []
    parts: list[str] = []
    in_word = False
    redirect = ""
    heredoc_at = 0
    pending: list[str] = []  # here-document delimiters whose bodies start at the next newline
    skip_to = -1
    feed: str | _Found | None = None  # what flows into the next command through a pipe
    last_out: str | _Found | None = None  # what the last command printed, when known
    procsub = False
    # Each open ``(``, ``$(``, ``<(`` or backtick: whether it opened inside double quotes,
    # the shell's state to restore at its end, and the command it sits in (substitutions).
    stack: list[tuple[str, bool, tuple, tuple | None]] = []  # type: ignore[type-arg]
    quoted = False
    pos, size = 0, len(text)

    def finish_word() -> None:
        nonlocal in_word, redirect
        if in_word:
            word = "".join(parts)
            if redirect:
                redirects.append((redirect, word, heredoc_at))
                if redirect in ("<<", "<<-") and len(pending) < 16:
                    pending.append(word)
                redirect = ""
            else:
                words.append(word)
            parts.clear()
            in_word = False

    def add_words(piece: str) -> bool:
        """Add the words of a plain piece; true when a comment starts in it."""
        nonlocal in_word
        if not in_word and not redirect and "#" not in piece:  # the common case, in C
            pieces = piece.split()
            if pieces:
                if piece[-1].isspace():
                    words.extend(pieces)
                else:
                    words.extend(pieces[:-1])
                    parts.append(pieces[-1])
                    in_word = True
            return False
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

    # Verdicts as seen: a long script repeats the same few commands, and a verdict (and what
    # the command prints) depends on the command, what is fed to it and the shell's state.
    # A command that moved the shell (``cd``) moves it the same way again from the same state.
    seen: dict[tuple[object, ...], tuple[str | None, str | _Found | None, tuple | None]] = {}  # type: ignore[type-arg]

    def finish_command(op: str) -> str | None:
        nonlocal redirect, feed, last_out
        if in_word:
            finish_word()
        redirect = ""  # ``<(cmd)``: the command inside is no redirection target
        if not words and not redirects:
            feed = last_out = None
            return None
        piped = op in ("|", "|&") or bool(stack)
        fed = feed.reason if isinstance(feed, _Found) else feed
        before = (sh.pwd, sh.old, sh.dirs, sh.version, id(sh.vars))  # sh.state(), inline
        key = (tuple(words), tuple(redirects) if redirects else (), fed, piped, before)
        known = seen.get(key)
        if known is not None:
            reason, out, after = known
            if after is not None:
                sh.pwd, sh.old, sh.lost, sh.dirs, sh.vars, sh.version = after
        else:
            reason, out = _verdict(sh, words, redirects, feed, depth, text, piped)
            if reason is None and len(seen) < 4096:
                after = None
                if sh.state() != before:
                    after = (sh.pwd, sh.old, sh.lost, sh.dirs, sh.vars, sh.version)
                seen[key] = (reason, out, after)
        words.clear()
        redirects.clear()
        feed = out if op in ("|", "|&") else None
        last_out = out
        return reason

    def open_sub(label: str, was_quoted: bool) -> None:
        """A substitution: the command around it goes on after it."""
        nonlocal words, redirects, parts, in_word, redirect, feed, heredoc_at, last_out
        outer = (words, redirects, parts, in_word, redirect, feed, heredoc_at)
        stack.append((label, was_quoted, sh.save(), outer))
        words, redirects, parts, in_word, redirect = [], [], [], False, ""
        feed = last_out = None

    def close(value: str) -> str | None:
        nonlocal words, redirects, parts, in_word, redirect, feed, heredoc_at, quoted
        reason = finish_command(")")
        if reason or not stack:
            return reason
        label, was_quoted, saved, outer = stack.pop()
        sh.restore(saved)
        if outer is not None:
            out = last_out if isinstance(last_out, str) and len(last_out) <= _CAP else None
            words, redirects, parts, in_word, redirect, feed, heredoc_at = outer
            sh.subs.append(out)
            mark = _FILE if label == "<(" else _SUB
            parts.append(mark + str(len(sh.subs) - 1) + mark)
            in_word, quoted = True, was_quoted
        return None

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
                if len(stack) >= _MAX_OPEN:
                    return "command nested too deeply to check"
                quoted = False
                open_sub("$(" if kind == "sub" else "`", True)
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
                if op in ("<", ">") and last == len(value) and text.startswith("(", pos):
                    finish_word()
                    procsub = True  # ``<(cmd)``: a file holding the output of cmd
                elif op[0] in "<>" or op[:2] == "&>":
                    finish_word()
                    redirect = op
                    heredoc_at = match.start() + last
                else:
                    reason = finish_command(op)
                    if reason:
                        return reason
                    if op == "\n" and pending:
                        skip_to = _after_bodies(text, match.start() + last, pending)
                        if bodies is not None:
                            bodies.append((match.start() + last, skip_to))
                        pending.clear()
                        break
            else:
                if not add_words(value[last:]):
                    continue
            if skip_to >= 0:
                pos, skip_to = skip_to, -1
                continue
            # A comment: skip to the end of its line, where the next command starts.
            end = text.find("\n", match.start() + last)
            pos = size if end < 0 else end
        elif kind == "sq":
            parts.append(value[1:-1] if value.endswith("'") and len(value) > 1 else value[1:])
            in_word = True
        elif kind == "ansi":
            inner = value[2:-1] if value.endswith("'") and len(value) > 2 else value[2:]
            parts.append(_ansi(inner))
            in_word = True
        elif kind == "dq":
            quoted = True
            in_word = True
        elif kind == "esc":
            if value != "\\\n":  # a backslash-newline joins lines
                parts.append(value[1:] or "\\")
                in_word = True
        elif kind == "dollar":
            if not text.startswith('"', pos):  # ``$"..."`` is a (translated) "..."
                parts.append("$")
            in_word = True
        elif kind == "sub" or (kind == "tick" and not (stack and stack[-1][0] == "`")):
            if len(stack) >= _MAX_OPEN:
                return "command nested too deeply to check"
            open_sub("$(" if kind == "sub" else "`", False)
        elif value == "(":
            if len(stack) >= _MAX_OPEN:
                return "command nested too deeply to check"
            if procsub:
                procsub = False
                open_sub("<(", False)
            else:
                reason = finish_command("(")
                if reason:
                    return reason
                stack.append(("(", False, sh.save(), None))
        else:  # ``)`` or the closing backtick
            reason = close(value)
            if reason:
                return reason
    return finish_command("")


def _after_bodies(text: str, start: int, delimiters: list[str]) -> int:
    """Where the command text goes on after here-document bodies that begin at ``start``."""
    for delimiter in delimiters:
        end = re.compile(r"^\t*" + re.escape(delimiter) + r"[ \t]*$", re.M).search(text, start)
        if end is None:
            return len(text)
        start = end.end()
    return start


def _subst(sh: _Shell, word: str) -> str:
    """``word`` with the values of its command substitutions put in."""

    def value(match: re.Match[str]) -> str:
        out = sh.subs[int(match.group(1))]
        return _UNKNOWN if out is None else out.strip()

    return _PLACEHOLDER.sub(value, word)


def _file(sh: _Shell, word: str, stdin: str | None) -> str | None:
    """What reading the file ``word`` gives, when the command line says: ``<(cmd)``, stdin,
    a file an earlier command of it wrote."""
    if word in ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"):
        return stdin
    if len(word) > 2 and word[0] == _FILE == word[-1] and word[1:-1].isdigit():
        return sh.subs[int(word[1:-1])]
    if sh.files and word:
        root, parts = _resolve(sh, _expand(sh, word.lower())[0])
        return sh.files.get((root, tuple(parts)))
    return None


def _spend(sh: _Shell, made: str | None) -> str | None:
    """``made``, when the budget allows it (else unknown: the check stays linear)."""
    if made is None:
        return None
    sh.budget[0] -= len(made)
    return made if sh.budget[0] >= 0 else None


def _heredoc(sh: _Shell, text: str, at: int, delimiter: str) -> str | None:
    """The body of the here-document whose ``<<`` ends at ``at``."""
    start = text.find("\n", at)
    if start < 0:
        return None
    if sh.ends[0] is not text:
        sh.ends = (text, {})
    found = sh.ends[1]
    ends = found.get(delimiter)
    if ends is None:
        if len(found) >= 16:  # each new delimiter is one pass over the text
            return None
        pattern = re.compile(r"^\t*" + re.escape(delimiter) + r"[ \t]*$", re.M)
        ends = found[delimiter] = [m.start() for m in pattern.finditer(text)]
    index = bisect.bisect_right(ends, start)
    end = ends[index] if index < len(ends) else len(text)
    if end - start > sh.budget[0]:
        return None
    return _spend(sh, text[start + 1 : end])


def _verdict(
    sh: _Shell,
    words: list[str],
    redirects: list[tuple[str, str, int]],
    feed: str | _Found | None,
    depth: int,
    text: str,
    want_out: bool,
) -> tuple[str | None, str | _Found | None]:
    """A reason to block one simple command (or None), and what it prints when known."""
    if sh.subs:
        words = [_subst(sh, w) if _SUB in w else w for w in words]
    words = _braces(words)
    first = words[0].lower() if words else ""
    name = first.rsplit("/", 1)[-1] if "/" in first else first
    boring = name not in _NAMED and "=" not in first and "$" not in first
    boring = boring and not redirects and not (want_out and name in _PRODUCERS)
    if boring and not name.startswith("mkfs") and not _INTERPRETER.fullmatch(name):
        return None, None
    stdin = feed if isinstance(feed, str) else None
    found = feed if isinstance(feed, _Found) else None
    written = None
    for op, target, at in redirects:
        if _SUB in target:
            target = _subst(sh, target)
        if op == "<<<":
            stdin = target + "\n"
        elif op in ("<<", "<<-"):
            stdin = _heredoc(sh, text, at, target)
        elif op == "<":
            stdin = _file(sh, target, None)
        elif _DISK.match(target.lower()):
            return "redirecting output onto a disk device destroys its data", None
        elif op in (">", ">|", ">>", "&>") and target:
            written = target
    reason, out = _command(sh, words, stdin, found, depth, want_out or written is not None)
    if written is not None and isinstance(out, str) and len(sh.files) < 64:
        root, parts = _resolve(sh, _expand(sh, written.lower())[0])
        sh.files[(root, tuple(parts))] = out
        sh.version += 1  # a later ``bash x.sh`` must not reuse an earlier verdict
        out = None
    return reason, out


def _command(
    sh: _Shell,
    words: list[str],
    stdin: str | None,
    found: _Found | None,
    depth: int,
    want_out: bool,
) -> tuple[str | None, str | _Found | None]:
    """Judge one simple command after its redirections: wrappers first, then its name."""
    index, chdir, reason = _unwrap(sh, words, depth)
    if reason or index >= len(words):
        return reason, None
    if index:
        words = _braces(words[index:])
    if chdir is not None:
        saved = sh.save()
        _cd(sh, "cd", [chdir.lower()])
        try:
            return _command(sh, words, stdin, found, depth, want_out)
        finally:
            sh.restore(saved)
    low = [w.lower() for w in words]
    if not words[0].islower() and words[0] != low[0]:
        words = low  # ``SU -C 'RM -RF /'``: a command in capitals has its options in capitals
    if "$" in low[0]:
        low[0] = _expand(sh, low[0])[0]
    name = low[0].rsplit("/", 1)[-1]
    args, largs = words[1:], low[1:]
    if name in ("cd", "pushd", "popd"):
        _cd(sh, name, largs)
        return None, None
    if name in _SETTERS:
        _assign(sh, [a for a in args if _ASSIGNMENT.match(a)])
        return None, None
    if name in ("for", "select") and len(args) > 1 and args[1] == "in":
        _assign(sh, [args[0] + "=" + " ".join(args[2:])])  # each word in turn, all judged
        return None, None
    if name in _SHELLS:
        return _shell(sh, args, stdin, depth), None
    if name in ("source", "."):
        content = _file(sh, args[0], stdin) if args else None
        return (_check(content, sh, depth + 1, shared=True) if content else None), None
    if name == "eval":
        return _check(" ".join(args), sh, depth + 1, shared=True), None
    if name == "trap":
        return (_check(args[0], sh, depth + 1) if args and args[0][:1] != "-" else None), None
    if name == "alias":  # judged where it is defined: its use may come in any later command
        return _alias(sh, args, depth), None
    if name in _AWK:
        return _awk(sh, name, args, depth), None
    if name in ("su", "runuser", "sg", "script"):
        return _su(sh, name, words, stdin, found, depth), None
    if name in ("xargs", "parallel"):
        return _xargs(sh, name, args, stdin, found, depth), None
    if _INTERPRETER.fullmatch(name):
        return _interpreter(sh, name, args, stdin, depth), None
    if name == "rm":
        return _rm(sh, largs), None
    if name == "find":
        return _find(sh, largs, want_out, depth)
    if name in ("mkfs", "mke2fs") or name.startswith("mkfs."):
        return f"{name} formats a file system; never in an unattended loop", None
    if name in ("mkswap", "wipefs", "blkdiscard"):
        return f"{name} destroys what a device holds; never in an unattended loop", None
    if name == "dd":
        return _dd(largs), None
    if name in ("tee", "cp") and any(_DISK.match(arg) for arg in largs):
        return f"{name} onto a disk device destroys its data", None
    if name in ("chmod", "chown", "chgrp"):
        return _chmod(sh, name, largs), None
    if name == "git":
        return _git(sh, args, depth), None
    if sh.strict and name == "shred":
        return "shred destroys files beyond recovery; delete specific files by name", None
    if want_out and name in _PRODUCERS:
        return None, _spend(sh, _output(sh, name, args, stdin))
    return None, None


def _alias(sh: _Shell, args: list[str], depth: int) -> str | None:
    """Why an ``alias`` definition is refused: a value that runs a refused command."""
    for arg in args:
        alias, eq, value = arg.partition("=")
        reason = _check(value, sh, depth + 1) if eq else None
        if reason:
            return f"the alias {alias} runs a refused command: {reason}"
    return None


def _dd(largs: list[str]) -> str | None:
    """Why a ``dd`` is refused: it writes to a device that is not a harmless one."""
    for arg in largs:
        if arg.startswith("of=/dev/") and not arg[8:].startswith(_SAFE_DEVICES):
            return f"dd writing to a device ({arg}) destroys its data"
    return None


def _unwrap(sh: _Shell, words: list[str], depth: int) -> tuple[int, str | None, str | None]:
    """Where the real command starts after keywords, assignments and wrappers; the
    directory a wrapper runs it in (``env -C``); a reason found in a wrapper's string."""
    index, size, chdir, assigned, only = 0, len(words), None, [], True
    while index < size:
        word = words[index]
        name = word.lower().rsplit("/", 1)[-1]
        if name in _KEYWORDS and "/" not in word:
            index += 1
            continue
        if name == "function" and index + 1 < size:  # ``function f { BODY; }``: BODY is read
            index += 2
            continue
        if _ASSIGNMENT.match(word):
            assigned.append(word)
            index += 1
            continue
        spec = _WRAPPERS.get(name)
        if spec is None:
            break
        only = False
        options, positional = spec
        index += 1
        while index < size:
            arg = words[index]
            if arg not in options and arg.swapcase() in options and arg not in _CASE_FLAGS:
                arg = arg.swapcase()  # ``timeout -S KILL``: a capital changes nothing there
            if arg == "--":
                index += 1
                break
            if arg.startswith("-") and len(arg) > 1:
                # ``env -s`` is no option, but a case slip must not hide ``-S`` from the check
                low = arg.lower()
                cluster = low[1] != "-" and "s" in low
                if name == "env" and (cluster or low.startswith("--split-string")):
                    # -S STRING, -SSTRING, -iS STRING: the rest of the cluster is the string
                    at = low.find("s") + 1 if cluster else len(arg)
                    rest = arg.split("=", 1)[1] if not cluster and "=" in arg else arg[at:]
                    rest = " ".join([rest, *words[index + 1 :]])
                    return size, None, _check(rest, sh, depth + 1)
                if arg in _SHELL_STRING and name == "flock" and index + 1 < size:
                    reason = _check(words[index + 1], sh, depth + 1)
                    if reason:
                        return size, None, reason
                    index += 2
                    continue
                if arg in options and index + 1 < size:
                    if arg in _CHDIR and name in ("env", "sudo"):
                        chdir = words[index + 1]
                    index += 2
                else:
                    if arg.startswith("--chdir="):
                        chdir = arg.split("=", 1)[1]
                    index += 1
            elif positional:
                positional -= 1
                index += 1
            else:
                break
        if name == "watch":
            return size, None, _check(" ".join(words[index:]), sh, depth + 1)
    if only and assigned and index >= size:
        _assign(sh, assigned)
    return index, chdir, None


def _assign(sh: _Shell, assignments: list[str]) -> None:
    for item in assignments:
        name, _, value = item.partition("=")
        name = name.rstrip("+").lower()
        if len(sh.vars) < 64 or name in sh.vars:
            value = _expand(sh, value.lower())[0] if "$" in value else value.lower()
            sh.vars = {**sh.vars, name: value if len(value) <= _CAP else _UNKNOWN}
            sh.version += 1


def _braces(words: list[str]) -> list[str]:
    """Brace expansion of the command word: ``{rm,-rf,/}`` is the command ``rm -rf /``."""
    first = words[0] if words else ""
    if first[:1] == "{" and first[-1:] == "}" and "," in first:
        return first[1:-1].split(",") + words[1:]
    return words


def _expand(sh: _Shell, word: str) -> list[str]:
    """What a (lower-cased) word means: variables put in, then braces expanded."""
    if "$" in word:

        def value(match: re.Match[str]) -> str:
            length, braced, op, plain, special = match.groups()
            name = braced or plain or special
            if length:
                return _UNKNOWN
            if name == "home":
                return "~" if sh.home is None else "/" + "/".join(sh.home)
            if name == "pwd":
                return sh.pwd
            if name == "oldpwd":
                return sh.old or _UNKNOWN
            known = sh.vars.get(name)
            if known is not None:
                return known
            for default in (":-", ":=", "-", "="):
                if op and op.startswith(default):
                    return op[len(default) :]
            return _UNKNOWN

        word = _VAR.sub(value, word)
        if len(word) > _CAP:
            word = _UNKNOWN
    if "{" not in word or "," not in word or len(word) > _CAP:
        return [word]
    done: list[str] = []
    todo = [word]
    while todo and len(done) + len(todo) < 64:
        item = todo.pop()
        match = _BRACE.search(item)
        if match is None:
            done.append(item)
            continue
        for alt in match.group(1).split(","):
            todo.append(item[: match.start()] + alt + item[match.end() :])
    return done + todo


def _resolve(sh: _Shell, path: str) -> tuple[str, list[str]]:
    """A path as (root, components): root ``/`` (absolute), ``~`` (home, not given), ``p``
    (the project, not given), ``?`` (an unknown directory) or ``$`` (an unknown value)."""
    if path[:1] not in ("/", "~", _PROJECT, _NOWHERE, _UNKNOWN):
        path = sh.pwd + "/" + path
    head, rest = path[0], path[1:]
    base: list[str] | None
    if head == "~":
        user, _, rest = rest.partition("/")
        if user in ("+", "-"):
            where = sh.pwd if user == "+" else sh.old or _NOWHERE
            return _resolve(sh, where + "/" + rest)
        root, base = "~", sh.home
    elif head == "/":
        root, base = "/", []
    elif head == _PROJECT:
        root, base = "p", sh.project
    else:
        root, base = ("?" if head == _NOWHERE else "$"), None
    if base is not None:
        root = "/"
    parts = list(base or ())
    if "/." not in "/" + rest:  # no ``.`` or ``..`` to fold: the common case, in C
        parts.extend(filter(None, rest.split("/")))
        return root, _proc_root(parts) if parts[:1] == ["proc"] else parts
    for part in rest.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif root != "/":
                parts.append("..")
        else:
            parts.append(part)
    return root, _proc_root(parts) if parts[:1] == ["proc"] else parts


def _proc_root(parts: list[str]) -> list[str]:
    """``/proc/self/root/x``, ``/proc/1/root/x``, ``/proc/1/task/2/root/x`` are ``/x``."""
    while len(parts) > 2 and parts[0] == "proc":
        pid = parts[1]
        if not (pid in ("self", "thread-self") or pid.isdigit() or pid[:1] in ("$", _UNKNOWN)):
            break
        rest = parts[2:]
        if rest[:1] == ["task"] and len(rest) > 2:
            rest = rest[2:]
        if rest[:1] != ["root"]:
            break
        parts = rest[1:]
    return parts


def _level(sh: _Shell, root: str, parts: list[str]) -> tuple[str, str] | None:
    """Whether deleting this path is a disaster: (kind, what it is), or None."""
    if root == "/":
        size = len(parts)
        if not size:
            return "root", "/"
        if sh.home is not None and sh.home[:size] == parts:
            return "home", "~" if size == len(sh.home) else "/" + "/".join(parts) + " (above ~)"
        if size == 1:
            return "top", "/" + parts[0]
        if sh.project is not None and sh.project[:size] == parts:
            where = "/" + "/".join(parts)
            return "project", where + (" (the project)" if size == len(sh.project) else "")
        return None
    if any(part != ".." for part in parts):
        return None
    if root == "~":
        return "home", "~" if not parts else "a directory above ~"
    if root == "p":
        return "project", "the project" if not parts else "a directory above the project"
    if root == "?" or parts:
        lost = f" (after cd {sh.lost})" if sh.lost else ""
        return "unknown", "a directory the check cannot know" + lost
    return None


def _danger(sh: _Shell, word: str) -> tuple[str, str] | None:
    """What deleting ``word`` (recursively) would take, when that is a disaster: the kind
    (``root``, ``home``, ``top``, ``project``, ``unknown``) and a description."""
    for path in _split(_expand(sh, word)):
        root, parts = _resolve(sh, path)
        if parts and _GLOB.search(parts[-1]):
            level = _level(sh, root, parts[:-1])
            if level and (level[0] in ("root", "home") or _BROAD.fullmatch(parts[-1])):
                return level[0], "everything in " + level[1]
        level = _level(sh, root, parts)
        if level:
            return level
    return None


def _split(words: list[str]) -> list[str]:
    """Word splitting of expanded words (``for f in a b`` gives ``$f`` each of them)."""
    if not any(" " in w or "\t" in w or "\n" in w for w in words):
        return words
    return [piece for w in words for piece in w.split()] or [""]


def _show(word: str) -> str:
    return word.replace(_UNKNOWN, "?").replace(_PROJECT, ".").replace(_NOWHERE, "?")


def _cd(sh: _Shell, name: str, args: list[str]) -> None:
    """Follow ``cd``, ``pushd`` and ``popd`` (lower-cased arguments)."""
    plain = [a for a in args if a not in ("-l", "-p", "-e", "-@", "-n", "--", "-lp", "-pe")]
    if name == "popd":
        if sh.dirs and not plain:
            sh.old, sh.pwd, sh.dirs = sh.pwd, sh.dirs[-1], sh.dirs[:-1]
        elif plain:
            sh.pwd, sh.lost = _NOWHERE, "popd " + plain[0]
        return
    if name == "pushd":
        if not plain:
            if sh.dirs:
                sh.dirs, sh.pwd = (*sh.dirs[:-1], sh.pwd), sh.dirs[-1]
            return
        if len(sh.dirs) < 64:
            sh.dirs = (*sh.dirs, sh.pwd)
        if plain[0][:1] in "+-" and plain[0][1:].isdigit():
            sh.pwd, sh.lost = _NOWHERE, "pushd " + plain[0]
            return
    target = plain[0] if plain else "~"
    if target == "-":
        target = sh.old or _NOWHERE
    path = _expand(sh, target)[0]
    root, parts = _resolve(sh, path)
    new = _NOWHERE
    joined = "/".join(parts)
    if root != "$" and len(parts) < 64 and _UNKNOWN not in joined and not _GLOB.search(joined):
        new = {"/": "", "~": "~", "p": _PROJECT, "?": _NOWHERE}[root] + "/" + joined
    if new.startswith(_NOWHERE) and not sh.pwd.startswith(_NOWHERE):
        sh.lost = _show(target)
    sh.old, sh.pwd = sh.pwd, new


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


def _rm(sh: _Shell, args: list[str]) -> str | None:
    letters, longs, targets = _flags(args)
    if "--no-preserve-root" in longs:
        return "rm --no-preserve-root is never needed by a coding task"
    if "r" not in letters and "--recursive" not in longs:
        return None
    plain = _plain_safe(sh)
    for target in targets:
        if plain and _PLAIN.match(target) and "/." not in target:
            continue  # a name below a directory that is no disaster to delete from
        what = _danger(sh, target) if target else None
        if what:
            return f"recursive rm of {_show(target)} would delete {what[1]}"
    if sh.strict:
        shown = " ".join(_show(t) for t in targets) or "?"
        return (
            f"recursive rm deletes a whole tree for good (rm -r {shown}); leave it, "
            "move it aside with mv, or remove specific files by name"
        )
    return None


def _plain_safe(sh: _Shell) -> bool:
    """Whether deleting any plain name below the working directory is no disaster: it is not
    ``/`` nor a directory above ``~`` or the project (a plain name adds a directory level)."""
    root, parts = _resolve(sh, sh.pwd)
    if root != "/":
        return True
    size = len(parts)
    above_home = sh.home is not None and size < len(sh.home) and sh.home[:size] == parts
    above = sh.project is not None and size < len(sh.project) and sh.project[:size] == parts
    return size > 0 and not above_home and not above


def _chmod(sh: _Shell, name: str, args: list[str]) -> str | None:
    letters, longs, plain = _flags(args)
    roots = []
    for arg in plain:
        what = _danger(sh, arg)
        if what and what[0] in _SYSTEM:
            roots.append(_show(arg) if _show(arg) == what[1] else f"{_show(arg)} ({what[1]})")
    if roots and name == "chmod" and any(_MODE_ALL.fullmatch(a) for a in args):
        return f"chmod 777 on {roots[0]} opens the whole system to everyone"
    if roots and ("r" in letters.lower() or "--recursive" in longs):
        return f"{name} -R on {roots[0]} breaks the system; change specific paths"
    return None


def _find(
    sh: _Shell, args: list[str], want_out: bool, depth: int
) -> tuple[str | None, _Found | None]:
    """``find ROOT ... -delete`` (or ``-exec rm``) judged by its root; ``| xargs rm`` too.
    Unfiltered, what ``-exec CMD {}`` runs is judged with the root for ``{}`` (it is listed,
    and all below it): ``find / -exec chmod 777 {} +``, ``-exec sh -c '...' _ {}``."""
    roots: list[str] = []
    index = 0
    while index < len(args) and args[index] in ("-h", "-l", "-p"):
        index += 1
    for arg in args[index:]:
        if arg.startswith(("-", "(", "!")):
            break
        roots.append(arg)
    filtered = any(arg in _FIND_TESTS or arg.startswith("-newer") for arg in args)
    danger = None
    for root in roots or ["."]:
        what = _danger(sh, root)
        where = what[1].replace("everything in ", "") if what else ""
        # A filtered find in /tmp is scratch work (find /tmp -name 'x*' -delete), even with
        # the home directory somewhere below it.
        scratch = filtered and _resolve(sh, _expand(sh, root)[0]) == ("/", ["tmp"])
        if what and (not filtered or (what[0] in _SYSTEM and not scratch)):
            danger = f"find {_show(root)} lists all of {where}"
            break
    for index, arg in enumerate(args):
        if filtered or arg not in ("-exec", "-execdir", "-ok", "-okdir"):
            continue
        command = args[index + 1 :]
        ends = [i for i, word in enumerate(command) if word in (";", "+")]
        command = command[: ends[0]] if ends else command
        for root in (roots or ["."]) if command else ():
            run = [word.replace("{}", root) for word in command]
            reason = _command(sh, run, None, None, depth + 1, False)[0]
            if reason:
                return f"find {_show(root)} -exec runs it on {_show(root)}: {reason}", None
    if danger:
        for index, arg in enumerate(args):
            runs = arg in ("-exec", "-execdir", "-ok", "-okdir") and index + 1 < len(args)
            if arg == "-delete" or (runs and args[index + 1].rsplit("/", 1)[-1] in _DELETERS):
                return danger + f"; {arg} there would delete it all", None
    return None, _Found(danger) if want_out else None


def _items(text: str) -> list[str]:
    """The arguments ``xargs`` makes of its input (blanks, newlines and NULs separate)."""
    return text.replace("\0", " ").replace('"', "").replace("'", "").split()


def _xargs(
    sh: _Shell, name: str, args: list[str], stdin: str | None, found: _Found | None, depth: int
) -> str | None:
    """``xargs CMD`` / ``parallel CMD ::: ARGS``: CMD judged with the words it will get."""
    if depth >= _MAX_DEPTH:
        return "command nested too deeply to check"
    index, replace, size = 0, None, len(args)
    items: list[str] | None = None
    while index < size:
        arg = args[index]
        if arg == "--":
            index += 1
            break
        if not arg.startswith("-") or arg == "-":
            break
        value = args[index + 1] if index + 1 < size else ""
        if arg == "-I" or (arg == "-i" and value == "{}"):
            replace, index = value, index + 2
            continue
        if arg.startswith("-I") or arg.startswith("-i"):
            replace = arg[2:] or "{}"
        elif arg == "--replace" or arg.startswith("--replace="):
            replace = arg.partition("=")[2] or "{}"
        elif arg in ("-a", "--arg-file"):
            content = _file(sh, value, stdin)
            items = _items(content) if content is not None else None
            index += 1
        elif arg in _XARGS_VALUE:
            index += 1
        index += 1
    command = args[index:]
    if name == "parallel":
        for marker in (":::", "::::", ":::+", "::::+"):
            if marker in command:
                at = command.index(marker)
                words = [w for w in command[at + 1 :] if not w.startswith(":::")]
                if marker.startswith("::::"):
                    listed = [_file(sh, w, stdin) for w in words]
                    words = _items(" ".join(t for t in listed if t))
                items, command = words, command[:at]
                break
        if replace is None:
            replace = "{}"
    if items is None:
        items = _items(stdin) if stdin is not None else []
    command = command or ["echo"]
    if found is not None and found.reason:
        head = _unwrap(sh, command, depth)[0]
        if head < len(command) and command[head].lower().rsplit("/", 1)[-1] in _DELETERS:
            return found.reason + "; deleting what it lists would delete it all"
    runs: list[list[str]] = []
    if replace and any(replace in w for w in command):
        for item in items[:64] or [""]:
            runs.append([w.replace(replace, item) for w in command])
        if len(items) > 64:
            runs.append([x for w in command for x in ([w] if replace not in w else items)])
    else:
        runs.append(command + items)
    for run in runs:
        if len(run) == 1 and " " in run[0].strip():  # parallel 'rm -rf {}' ::: /
            reason = _check(run[0], sh, depth + 1)
        else:
            reason = _command(sh, run, None, None, depth + 1, False)[0]
        if reason:
            return reason
    return None


def _shell(sh: _Shell, args: list[str], stdin: str | None, depth: int) -> str | None:
    """``bash -c STRING``, ``bash <(cmd)``, ``echo cmd | bash``: the text the shell runs."""
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
            flag = arg.lower()
            command = command or (flag[0] == "-" and not flag.startswith("--") and "c" in flag)
            command = command or flag == "--command"
            index += 1
            continue
        break
    if command and index < len(args):
        given = args[index + 1 :]
        if given:  # sh -c 'rm -rf "$1"' _ /: the words after the string are $0, $1, ...
            sh = sh.fork()
            named = {str(n): w.lower() for n, w in enumerate(given[:10])}
            rest = " ".join(given[1:]).lower()
            sh.vars = {**sh.vars, **named, "@": rest, "*": rest}
            sh.version += 1
        return _check(args[index], sh, depth + 1)
    if command:
        return None
    script = args[index] if index < len(args) else "-"
    content = _file(sh, script, stdin)
    return _check(content, sh, depth + 1) if content else None


def _su(
    sh: _Shell, name: str, words: list[str], stdin: str | None, found: _Found | None, depth: int
) -> str | None:
    """``su -c CMD``, ``runuser -u USER -- CMD``, ``sg GROUP CMD``, ``script -c CMD``."""
    args = words[1:]
    for index, arg in enumerate(args):
        flag = arg.lower()
        cluster = flag[:1] == "-" and flag[1:2] != "-" and flag.endswith("c")  # script -qc
        if (flag in _SHELL_STRING or cluster) and index + 1 < len(args):
            return _check(args[index + 1], sh, depth + 1)
        if arg.lower().startswith("--command="):
            return _check(arg.split("=", 1)[1], sh, depth + 1)
    if name == "sg" and len(args) > 1:
        return _check(" ".join(args[1:]), sh, depth + 1)
    if name == "runuser" and any(a in ("-u", "--user") for a in args):
        index = 0  # runuser -u USER [--] CMD: a wrapper
        while index < len(args) and args[index][:1] == "-" and args[index] != "--":
            index += 2 if args[index] in _RUNUSER_VALUE else 1
        index += 1 if args[index : index + 1] == ["--"] else 0
        if index < len(args):
            return _command(sh, args[index:], stdin, found, depth + 1, False)[0]
    return None


def _interpreter(
    sh: _Shell, name: str, args: list[str], stdin: str | None, depth: int
) -> str | None:
    """``python -c CODE``, ``perl -e CODE``, ``node -e CODE``, or code piped in."""
    family = re.sub(r"[0-9.]+$", "", name)
    letters = _CODE_LETTERS.get(family, "ep")  # node, deno, bun: -e/--eval, -p/--print
    code: list[str] = []
    plain, index = False, 0
    while index < len(args):
        arg = args[index]
        short = arg[:1] == "-" and arg[1:2] not in ("-", "") and family != "deno"
        if arg in ("--eval", "--print", "eval") or (short and arg[-1] in letters):
            code.append(args[index + 1] if index + 1 < len(args) else "")
            index += 2
            continue
        if short and arg[1] in letters and family != "perl":
            code.append(arg[2:])  # python -c'code'
        elif arg == "-" or arg[:1] != "-" or (family in ("python", "pypy") and arg == "-m"):
            plain = arg != "-"
            break
        elif family in ("python", "pypy") and arg in ("-W", "-X"):
            index += 1
        index += 1
    if stdin is not None and (not (code or plain) or any("stdin" in c for c in code)):
        code.append(stdin)  # the code piped in, or text the code reads to run
        reason = _check(stdin, sh, depth + 1)
        if reason:
            return f"{name} is fed a refused command: {reason}"
    for text in code:
        reason = _code(sh, text, depth)
        if reason:
            return f"{name} code that names a disaster: {reason}"
    return None


def _awk(sh: _Shell, name: str, args: list[str], depth: int) -> str | None:
    """``awk 'BEGIN { system("rm -rf /") }'``: the program is code (``-f FILE`` is not read)."""
    index = 0
    while index < len(args) and args[index][:1] == "-" and args[index] != "--":
        index += 2 if args[index] in _AWK_VALUE else 1
    index += 1 if args[index : index + 1] == ["--"] else 0
    if index >= len(args) or any(a in ("-f", "--file") for a in args[:index]):
        return None
    reason = _code(sh, args[index], depth)
    return f"{name} code that names a disaster: {reason}" if reason else None


def _code(sh: _Shell, code: str, depth: int) -> str | None:
    """A disaster named in code: a tree deletion of / or ~, a string that is a refused
    command (``os.system("rm -rf /")``, ``["rm", "-rf", "/"]``), or base64 of one."""
    if depth > _MAX_DEPTH:
        return "command nested too deeply to check"
    for match in _CODE_DELETE.finditer(code.lower()):
        path = "~" if match.group("home") else match.group("path") or match.group("perl")
        what = _danger(sh, path) if path else None
        if what:
            return f"{match.group('call')}({path}) would delete {what[1]}"
    # Each literal, and each run of literals separated by commas (an argument list), as a
    # command: os.system("rm -rf /"), subprocess.run(["rm", "-rf", "/"]).
    runs: list[list[str]] = []
    merged: set[int] = set()  # runs with a concatenation: a new string to check
    end = -1
    for match in _LITERAL.finditer(code):
        literal = next(g for g in match.groups() if g is not None)
        gap = _LITERAL_GAP.fullmatch(code, end, match.start()) if runs else None
        if gap is None:
            runs.append([literal])
        elif gap.group(1):
            runs[-1].append(literal)
        else:
            runs[-1][-1] += literal  # "rm -rf " . "/"
            merged.add(len(runs) - 1)
        end = match.end()
        reason = _check(literal, sh, depth + 1) or _decoded(sh, literal, depth)
        if reason:
            return reason
    for number, run in enumerate(runs):
        fresh = len(run) > 1 or number in merged
        reason = _check(" ".join(run), sh, depth + 1) if fresh else None
        if reason:
            return reason
    return None


def _decoded(sh: _Shell, text: str, depth: int) -> str | None:
    """A refused command hidden in a base64 literal."""
    for match in _BASE64.finditer(text):
        plain = _unbase64(match.group())
        if plain:
            reason = _check(plain, sh, depth + 1)
            if reason:
                return f"base64 of a refused command: {reason}"
    return None


def _unbase64(data: str, *, base: int = 64) -> str | None:
    data = "".join(data.split())
    try:
        if base == 32:
            raw = base64.b32decode(data + "=" * (-len(data) % 8), casefold=True)
        else:
            raw = base64.b64decode(data + "=" * (-len(data) % 4))
    except (binascii.Error, ValueError):
        return None
    return raw.decode("utf-8", "replace")


def _output(sh: _Shell, name: str, args: list[str], stdin: str | None) -> str | None:
    """What ``echo``, ``printf``, ``cat``, ``base64 -d``, ``xxd -r -p``, ``rev`` or ``pwd``
    print, when the command line says (the text a pipe carries on to a shell or xargs)."""
    if name == "echo":
        index, escapes = 0, False
        while index < len(args) and re.fullmatch(r"-[neE]+", args[index]):
            escapes = escapes or "e" in args[index]
            index += 1
        text = " ".join(args[index:]) + "\n"
        return _ansi(text) if escapes else text
    if name == "printf":
        if args[:1] == ["--"]:
            args = args[1:]
        if not args or args[0].startswith("-v"):
            return None
        form, values = _ansi(args[0]), args[1:]
        pieces, taken = [], 0
        while True:
            start = taken

            def one(match: re.Match[str]) -> str:
                nonlocal taken
                if match.group() == "%%":
                    return "%"
                taken += 1
                return values[taken - 1] if taken <= len(values) else ""

            pieces.append(_PRINTF.sub(one, form))
            sh.budget[0] -= len(pieces[-1])
            if taken >= len(values) or taken == start or sh.budget[0] < 0:
                break  # (printf reuses its format for the values left)
        return "".join(pieces)
    if name == "pwd":
        return sh.pwd + "\n"
    if name in ("ls", "realpath", "readlink"):  # the paths themselves: ls -d, readlink -f
        letters, _, paths = _flags(args)
        listed = (
            "d" in letters
            if name == "ls"
            else name == "realpath" or bool(set("efm") & set(letters))
        )
        if not listed:
            return None
        return "\n".join(paths) + "\n" if paths else None
    files = [a for a in args if not a.startswith("-") or a == "-"]
    if name in ("base64", "base32") and files:
        stdin = _file(sh, files[0], stdin)
    if stdin is None:
        return None
    if name == "cat":
        if not files:
            return stdin
        texts = [_file(sh, f, stdin) for f in files]
        return None if None in texts else "".join(t or "" for t in texts)
    if name in ("base64", "base32"):
        decode = any(a in ("-d", "-D", "--decode") or re.fullmatch(r"-[a-z]*d", a) for a in args)
        return _unbase64(stdin, base=int(name[4:])) if decode else None
    if name == "xxd" and any("r" in a for a in args if a.startswith("-")):
        try:
            return bytes.fromhex("".join(stdin.split())).decode("utf-8", "replace")
        except ValueError:
            return None
    if name == "rev":
        return "\n".join(line[::-1] for line in stdin.split("\n"))
    return None


def _git(sh: _Shell, args: list[str], depth: int) -> str | None:
    if depth > _MAX_DEPTH:
        return "command nested too deeply to check"
    index, aliases, where = 0, {}, None
    # Skip git's global options to find the subcommand (git -C dir -c k=v push ...).
    while index < len(args) and args[index].startswith("-"):
        option = args[index]
        if option == "-c" and index + 1 < len(args):
            key, _, value = args[index + 1].partition("=")
            reason = _git_setting(sh, key.lower(), value, depth)
            if reason:
                return reason
            if key.lower().startswith("alias."):
                aliases[key[6:].lower()] = value
        elif option == "-C" and index + 1 < len(args):
            where = args[index + 1].lower()
        index += 2 if option in _GIT_GLOBAL_VALUE else 1
    if index >= len(args):
        return None
    sub, rest = args[index].lower(), [a.lower() for a in args[index + 1 :]]
    if sub in aliases:
        value = aliases[sub].strip()
        if value.startswith("!"):
            return _check(" ".join([value[1:], *rest]), sh, depth + 1)
        expanded = [*value.lower().split(), *rest]
        if not expanded:
            return None
        sub, rest = expanded[0], expanded[1:]
    if sub == "push":
        return _push(rest)
    if sub == "send-pack" and any(a in ("--force", "-f", "--mirror") or a[:1] == "+" for a in rest):
        return "git send-pack --force rewrites remote history; push normally"
    if sub == "config":
        return _git_config(sh, rest, depth)
    letters, longs, _ = _flags(rest)
    if sub == "clean" and ("f" in letters or "--force" in longs):
        what = _danger(sh, where or ".")
        if what and what[0] in _SYSTEM:
            return f"git clean -f in {what[1]} deletes every untracked file under it"
    if not sh.strict:
        return None
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


def _git_config(sh: _Shell, args: list[str], depth: int) -> str | None:
    """``git config alias.p 'push -f'``: an alias or remote setting that force-pushes."""
    for index, arg in enumerate(args[:-1]):
        if arg.startswith(("alias.", "remote.")):
            return _git_setting(sh, arg, args[index + 1], depth)
    return None


def _git_setting(sh: _Shell, key: str, value: str, depth: int) -> str | None:
    if key.startswith("alias."):
        value = value.strip()
        if value.startswith("!"):
            reason = _check(value[1:], sh, depth + 1)
        else:
            reason = _git(sh, value.split(), depth + 1)
        return f"the git alias {key[6:]} runs a refused command: {reason}" if reason else None
    if key.startswith("remote.") and key.endswith(".push") and value.startswith("+"):
        return f"git config {key} {value} makes every push a force push"
    if key.startswith("remote.") and key.endswith(".mirror") and value.lower() != "false":
        return f"git config {key} makes every push a mirror push, which deletes remote branches"
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
            # git takes a unique prefix of a long option: --force-w, --mirr (--fo: ambiguous)
            if len(option) > 3 and any(f.startswith(option) for f in _FORCE_LONG):
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


def denied_reason(command: str, *, cwd: str | os.PathLike[str] | None = None) -> str | None:
    """Why ``command`` must not run, or ``None`` when the deny-list has no objection.

    ``cwd`` is the directory it runs in (the project): relative paths, ``cd ..`` chains and
    ``*`` are judged against it and the user's home (``~``).
    """
    home = os.path.expanduser("~")
    return check_command(
        command,
        cwd=None if cwd is None else os.fspath(cwd),
        home=home if home.startswith("/") else None,
    )
