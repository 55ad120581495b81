"""The sandbox for Bash commands: bubblewrap, the project writable, the rest read-only.

Path checks cannot confine a shell, so Bash commands can run under ``bwrap``: loops do so by
default where bubblewrap works (``[security] sandbox = "auto"``), ``forgeflare run`` with
``--sandbox``. Inside:

- the whole file system read-only; writable: the project, its git directory (worktrees commit
  into the repository's), a private ``/tmp``, the package caches that exist (``~/.cache``,
  ``~/.npm``, ``~/.cargo``) and the directories the user names (``[security] writable``);
- fresh ``/dev`` and ``/proc``, its own PID and IPC namespaces, a new session (no controlling
  terminal: no ``TIOCSTI`` typing into the user's shell), every capability dropped (root
  cannot remount ``/`` read-write);
- no host unix socket: ``/run`` (and ``/var/run``, ``$XDG_RUNTIME_DIR``) and the shared
  folders (``/var/tmp``, ``/srv``, ``/mnt``, ``/media``: :data:`SHARED_DIRS`) are empty, and
  every other socket the kernel lists in ``/proc/net/unix`` is covered by ``/dev/null``,
  except those the user names (``[security] sockets``); abstract sockets, which no file
  hides, are scoped away by Landlock where the kernel has it (:mod:`forgeflare.security._scopeexec`:
  in the agent process, and around the bubblewrap of the gate and the reviewer's diff);
- the network on unless ``[security] sandbox_network = false`` (``forgeflare run``: off
  unless ``--sandbox-network``).

What the sandbox binds is decided once, before any command runs (the loop passes it in the
environment): a command must not be able to widen its next sandbox by planting a ``.git``
file or a symlink. A missing or broken bubblewrap is refused in one line when the sandbox is
required (``--sandbox``, ``sandbox = "bwrap"``); with ``"auto"`` the loop says once that
commands run unconfined. Linux only.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import trio

from forgeflare._errors import ConfigError
from forgeflare.platform import run_child, run_child_blocking
from forgeflare.security._scopeexec import landlock_abi as landlock_abi
from forgeflare.security._scopeexec import scope_self

__all__ = [
    "CACHE_DIRS",
    "GIT_DIR_ENV",
    "GIT_READONLY",
    "INSTALL_HINT",
    "READABLE_ENV",
    "SANDBOX_ENV",
    "SHARED_DIRS",
    "SOCKETS_ENV",
    "TOOLCHAIN_DIRS",
    "WRITABLE_ENV",
    "AgentBox",
    "BoxSettings",
    "SandboxChoice",
    "SandboxPlan",
    "box_gitconfig",
    "box_variables",
    "bwrap_argv",
    "check_sandbox",
    "choose_sandbox",
    "git_readonly_paths",
    "gitconfig_text",
    "host_sockets",
    "landlock_abi",
    "loop_sandbox",
    "outermost",
    "probe_sandbox",
    "require_sandbox",
    "sandbox_argv",
    "sandbox_env",
    "sandbox_mode",
    "sandbox_plan",
    "scope_abstract_sockets",
]

SANDBOX_ENV = "FORGEFLARE_SANDBOX"
"""``1`` (sandbox, no network) or ``network``; set by ``--sandbox`` / ``--sandbox-network``
and by the loop."""
WRITABLE_ENV = "FORGEFLARE_SANDBOX_WRITABLE"
"""More writable directories (absolute, ``os.pathsep`` separated): ``[security] writable``."""
SOCKETS_ENV = "FORGEFLARE_SANDBOX_SOCKETS"
"""Host unix sockets let in (absolute, ``os.pathsep`` separated): ``[security] sockets``."""
READABLE_ENV = "FORGEFLARE_SANDBOX_READABLE"
"""More paths shown read-only in the hidden home (``os.pathsep`` separated):
``[security] readable``."""
GIT_DIR_ENV = "FORGEFLARE_SANDBOX_GIT_DIR"
"""The git directory to keep writable, found by the loop before anything ran (empty: none)."""

CACHE_DIRS = (
    ".cache/pip",
    ".cache/uv",
    ".cache/go-build",
    ".npm/_cacache",
    ".cargo/registry",
    ".cargo/git",
    "go/pkg/mod",
)
"""Package caches under ``$HOME`` kept writable (when they exist) so installs keep working:
downloads only, never all of ``~/.cache`` or ``~/.cargo`` (``~/.cargo/env`` and
``~/.cargo/bin`` are what a login shell sources and runs)."""

TOOLCHAIN_DIRS = (
    ".pyenv",
    ".nvm",
    ".rustup",
    ".cargo/bin",
    ".local/bin",
    ".local/lib",
    ".local/share/uv",
)
"""Toolchains under ``$HOME`` shown read-only (when they exist), with every ``PATH``
directory under ``$HOME``: commands keep finding them, none can be changed."""

GIT_READONLY = ("hooks", "config", "info")
"""Inside a git directory, what git runs or reads programs from: read-only in the sandbox
(plus ``modules/*/config``, ``modules/*/hooks`` and a worktree's ``config.worktree``); the
objects, refs, index and logs stay writable so commits work."""

SOCKET_DIRS = ("/run", "/var/run")
"""Where host daemons keep their sockets (dbus, docker, systemd): empty in the sandbox."""

SHARED_DIRS = ("/var/tmp", "/srv", "/mnt", "/media")
"""Where users and services share files (and sockets): empty in the sandbox, like ``/tmp``.
A socket the kernel does not list where it lies (bound with a relative path, renamed after
bind, bound in another network namespace) is hidden with its folder; the project, its git
directory, ``[security]`` paths and ``PATH`` directories inside them are shown again."""

INSTALL_HINT = "Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap"

# Replaced by the sandbox's own: what lies below them on the host is never seen.
_PRIVATE = ("/tmp", "/dev", "/proc")


def sandbox_mode(env: Mapping[str, str] | None = None) -> str | None:
    """``None`` (no sandbox), ``"1"`` or ``"network"``, from ``env`` (this process's)."""
    value = (os.environ if env is None else env).get(SANDBOX_ENV, "").strip().lower()
    return value if value in ("1", "network") else None


@dataclass(frozen=True, slots=True)
class SandboxPlan:
    """What one sandbox binds: every path absolute and resolved."""

    project: Path
    git_dir: Path | None = None
    writable: tuple[Path, ...] = ()
    """Directories writable besides the project and its git directory."""
    sockets: tuple[Path, ...] = ()
    """Host unix sockets let in (read-only binds still connect)."""
    hidden_dirs: tuple[Path, ...] = ()
    """Socket directories replaced by an empty tmpfs."""
    hidden_sockets: tuple[Path, ...] = ()
    """Other host sockets, each covered by ``/dev/null``."""
    keep_files: tuple[Path, ...] = ()
    """Files inside a hidden directory bound back read-only (``/etc/resolv.conf``'s target)."""
    home: Path | None = None
    """``$HOME``, replaced by an empty tmpfs (``None``: not hidden: unset, ``/`` or the
    project's own directory or inside it)."""
    readable: tuple[Path, ...] = ()
    """Shown read-only inside the hidden home or stores: toolchains, ``[security] readable``."""
    hidden_stores: tuple[Path, ...] = ()
    """forgeflare's trust and state stores outside ``$HOME``: an empty tmpfs each."""
    git_readonly: tuple[Path, ...] = ()
    """Parts of the git directory bound read-only over themselves (:data:`GIT_READONLY`)."""
    git_pinned: tuple[Path, ...] = ()
    """The project's ``.git`` bound over itself: a mount point cannot be renamed away and
    replaced by one the agent wrote."""
    gitconfig: Path | None = None
    """The generated minimal gitconfig (name and email), shown as ``~/.gitconfig``."""
    network: bool = True
    tmpdir: bool = False
    """Set ``TMPDIR=/tmp``: the caller's TMPDIR would be read-only inside."""


def _under(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def outermost(paths: Iterable[Path]) -> tuple[Path, ...]:
    """``paths`` without those inside another one (kept in first-seen order, no repeats).

    A writable directory inside another writable one is already writable; binding it again
    would let a command replace it with a symlink (say to ``/etc``) that the next sandbox
    follows. Every directory bound this way has a read-only parent.
    """
    unique = list(dict.fromkeys(paths))
    return tuple(p for p in unique if not any(p != q and p.is_relative_to(q) for q in unique))


def bwrap_argv(plan: SandboxPlan, command: Sequence[str]) -> list[str]:
    """``command`` wrapped in bwrap as ``plan`` says (pure)."""
    argv = ["bwrap", "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--new-session"]
    argv += ["--cap-drop", "ALL", "--ro-bind", "/", "/"]
    argv += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    # Hidden first, then what is shown again inside: bwrap applies them in this order. The
    # shared folders before the home and the stores, which can lie inside them.
    for hidden in plan.hidden_dirs:
        argv += ["--tmpfs", str(hidden)]
    if plan.home is not None:
        argv += ["--tmpfs", str(plan.home)]
    for store in plan.hidden_stores:
        argv += ["--tmpfs", str(store)]
    for kept in plan.keep_files:
        argv += ["--ro-bind", str(kept), str(kept)]
    for shown in plan.readable:
        argv += ["--ro-bind", str(shown), str(shown)]
    if plan.gitconfig is not None and plan.home is not None:
        argv += ["--ro-bind", str(plan.gitconfig), str(plan.home / ".gitconfig")]
    bound = outermost([plan.project, *([plan.git_dir] if plan.git_dir else []), *plan.writable])
    for path in bound:
        argv += ["--bind", str(path), str(path)]
    for pinned in plan.git_pinned:
        argv += ["--bind", str(pinned), str(pinned)]
    for part in plan.git_readonly:
        argv += ["--ro-bind", str(part), str(part)]
    for sock in plan.sockets:
        argv += ["--ro-bind", str(sock), str(sock)]
    for sock in plan.hidden_sockets:
        argv += ["--ro-bind", "/dev/null", str(sock)]
    if not plan.network:
        argv.append("--unshare-net")
    if plan.tmpdir:
        argv += ["--setenv", "TMPDIR", "/tmp"]
    argv += ["--chdir", str(plan.project), "--"]
    return argv + list(command)


def host_sockets(proc_net_unix: str) -> list[Path]:
    """The file-system paths of the unix sockets listed in ``/proc/net/unix`` (pure).

    Abstract sockets (``@name``) have no path: only a network namespace of its own
    (``sandbox_network = false``) hides them.
    """
    found = []
    for line in proc_net_unix.splitlines()[1:]:
        fields = line.split(maxsplit=7)
        if len(fields) == 8 and fields[7].startswith("/"):
            found.append(Path(fields[7]))
    return found


def _existing_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False


def _is_socket(path: Path) -> bool:
    try:
        return stat.S_ISSOCK(path.lstat().st_mode)
    except OSError:
        return False


def _paths(value: str | None) -> list[Path]:
    return [Path(p) for p in (value or "").split(os.pathsep) if p.strip()]


@functools.lru_cache(maxsize=16)
def _git_dir(project: Path) -> Path | None:
    """The repository's git directory when it lies outside the project (a worktree).

    Cached for the process: asked before the first command runs, so a ``.git`` file a
    command writes later cannot point the next sandbox's writable bind elsewhere.
    """
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--git-common-dir"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    if not out:
        return None
    path = (project / out).resolve()
    if path.is_relative_to(project) or project.is_relative_to(path):
        return None
    # Only something that is a git directory: never "/" or a home directory.
    return path if (path / "HEAD").is_file() and (path / "objects").is_dir() else None


def git_readonly_paths(project: Path, common: Path | None) -> tuple[list[Path], list[Path]]:
    """What of the project's git directory is bound read-only, and the ``.git`` directory
    pinned by a bind over itself (I/O: looks which of them exist).

    ``common`` is the repository's git directory when it lies outside the project (a
    worktree's); else the project's own ``.git``.
    """
    dot_git = project / ".git"
    readonly: list[Path] = []
    pinned: list[Path] = []
    try:
        mode = dot_git.lstat().st_mode
    except OSError:
        mode = 0
    own: Path | None = None
    if stat.S_ISDIR(mode):
        pinned.append(dot_git)
        common = common or dot_git
    elif stat.S_ISREG(mode):
        readonly.append(dot_git)  # "gitdir: …": where git looks for everything
        try:
            text = dot_git.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        if text.startswith("gitdir:"):
            own = (project / text.removeprefix("gitdir:").strip()).resolve()
    if common is None:
        return readonly, pinned
    parts = [common / name for name in GIT_READONLY]
    modules = common / "modules"
    if _existing_dir(modules):
        for sub in sorted(modules.iterdir()):
            parts += [sub / "config", sub / "hooks"]
    if own is not None and own != common:
        parts += [own / "config.worktree", own / "commondir", own / "gitdir"]
    readonly += [part for part in parts if os.path.lexists(part) and not part.is_symlink()]
    return readonly, pinned


@functools.lru_cache(maxsize=4)
def _git_identity(home: str) -> tuple[str, str]:
    """The user's git name and email (from their global and system config), read once."""
    found = []
    for key in ("user.name", "user.email"):
        try:
            out = subprocess.run(
                ["git", "config", "--get", key],
                cwd="/",
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
                env={"HOME": home, "PATH": os.environ.get("PATH", os.defpath)},
            ).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            out = ""
        found.append(out)
    return found[0], found[1]


def gitconfig_text(name: str, email: str) -> str:
    """The sandbox's whole global gitconfig: who commits, nothing that runs (pure)."""
    name = name or "forgeflare"
    email = email or "forgeflare@localhost"
    quoted = [" ".join(v.split()).replace("\\", "\\\\").replace('"', '\\"') for v in (name, email)]
    return f'[user]\n\tname = "{quoted[0]}"\n\temail = "{quoted[1]}"\n'


def box_gitconfig(home: str, cache: Path) -> Path | None:
    """Write the generated minimal gitconfig under ``cache`` (the user's forgeflare cache) and
    return it; ``None`` where it cannot be written (the box then has none)."""
    text = gitconfig_text(*_git_identity(home))
    path = cache / "box-gitconfig"
    try:
        if path.is_file() and not path.is_symlink() and path.read_text() == text:
            return path
        cache.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = cache / f".box-gitconfig.{os.getpid()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError:
        return None
    return path


def _home_to_hide(home: str, project: Path) -> Path | None:
    if not home.startswith("/"):
        return None
    real = Path(home).resolve()
    if real == Path("/") or not _existing_dir(real) or _under(real, [project]):
        return None
    return real


def _stores(env: Mapping[str, str], home: Path | None) -> list[Path]:
    """forgeflare's trust and state directories when they lie outside the hidden home."""
    found = []
    raw_home = env.get("HOME", "")
    for var, default in (("XDG_CONFIG_HOME", ".config"), ("XDG_STATE_HOME", ".local/state")):
        base = env.get(var, "") or (f"{raw_home}/{default}" if raw_home.startswith("/") else "")
        if not base.startswith("/"):
            continue
        store = Path(base).resolve() / "forgeflare"
        if _existing_dir(store) and not (home is not None and _under(store, [home])):
            found.append(store)
    return found


def sandbox_plan(project: Path, *, network: bool, env: Mapping[str, str]) -> SandboxPlan:
    """The plan for a command in ``project`` (I/O: reads the file system and ``env``).

    ``env`` holds what the loop decided (:data:`WRITABLE_ENV`, :data:`READABLE_ENV`,
    :data:`SOCKETS_ENV`, :data:`GIT_DIR_ENV`) and ``HOME``, ``PATH``, ``TMPDIR``,
    ``XDG_RUNTIME_DIR``, ``XDG_CONFIG_HOME``, ``XDG_STATE_HOME``.
    """
    root = project.resolve()
    if GIT_DIR_ENV in env:
        git = Path(env[GIT_DIR_ENV]) if env[GIT_DIR_ENV] else None
    else:
        git = _git_dir(root)
    raw_home = env.get("HOME", "")
    home = _home_to_hide(raw_home, root)
    hidden = [Path(d) for d in (*SOCKET_DIRS, *SHARED_DIRS) if _existing_dir(Path(d))]
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime.startswith("/"):
        real = Path(runtime).resolve()
        if _existing_dir(real) and not _under(real, [*map(Path, _PRIVATE), *hidden]):
            hidden.append(real)
    writable: list[Path] = []
    readable: list[Path] = []
    tools = [Path(d) for d in env.get("PATH", "").split(os.pathsep) if d.startswith("/")]
    if home is not None:
        writable += [p.resolve() for p in (home / name for name in CACHE_DIRS) if _existing_dir(p)]
        tools = [home / name for name in TOOLCHAIN_DIRS] + tools
    hiding = [*([home] if home else []), *hidden]
    for tool in dict.fromkeys(tools):
        real = tool.resolve()
        # Inside a hidden folder, never the folder itself (a PATH of "/var/tmp" or "~").
        shown_again = _under(real, hiding) and real not in hiding
        if shown_again and _existing_dir(real) and not _under(real, [root]):
            readable.append(real)
    writable += [p for p in _paths(env.get(WRITABLE_ENV)) if p.is_dir()]
    readable += [p for p in _paths(env.get(READABLE_ENV)) if p.exists()]
    stores = _stores(env, home)
    sockets = tuple(_paths(env.get(SOCKETS_ENV)))
    keep = []
    resolv = Path("/etc/resolv.conf").resolve()
    if _under(resolv, hidden) and resolv.is_file():
        keep.append(resolv)  # systemd-resolved keeps it in /run: DNS must keep working
    covered = [*map(Path, _PRIVATE), *hidden, *stores, *([home] if home else [])]
    strays: list[Path] = []
    try:
        listed = Path("/proc/net/unix").read_text(encoding="utf-8", errors="replace")
    except OSError:
        listed = ""
    for sock in dict.fromkeys(host_sockets(listed)):
        real = Path(os.path.realpath(sock))
        if not _under(real, covered) and real not in sockets and _is_socket(real):
            strays.append(real)
    git_ro, pinned = git_readonly_paths(root, git)
    gitconfig = None
    if home is not None:
        gitconfig = box_gitconfig(raw_home, home / ".cache" / "forgeflare")
    tmpdir = env.get("TMPDIR", "")
    bound = [root, *([git] if git else []), *writable]
    return SandboxPlan(
        project=root,
        git_dir=git,
        writable=tuple(writable),
        sockets=sockets,
        hidden_dirs=tuple(hidden),
        hidden_sockets=tuple(strays),
        keep_files=tuple(keep),
        network=network,
        tmpdir=bool(tmpdir) and not _under(Path(tmpdir), [Path("/tmp"), *bound]),
        home=home,
        readable=tuple(readable),
        hidden_stores=tuple(stores),
        git_readonly=tuple(git_ro),
        git_pinned=tuple(pinned),
        gitconfig=gitconfig,
    )


def sandbox_argv(
    project: Path,
    command: Sequence[str],
    *,
    network: bool,
    env: Mapping[str, str] | None = None,
) -> list[str]:
    """``command`` wrapped in bwrap for ``project`` (:func:`sandbox_plan` + :func:`bwrap_argv`)."""
    plan = sandbox_plan(project, network=network, env=os.environ if env is None else env)
    return bwrap_argv(plan, command)


def sandbox_env(
    *,
    network: bool,
    writable: Sequence[Path] = (),
    sockets: Sequence[Path] = (),
    git_dir: Path | None = None,
    readable: Sequence[Path] = (),
) -> dict[str, str]:
    """The variables that switch the sandbox on for an agent (the loop sets them)."""
    env = {SANDBOX_ENV: "network" if network else "1", GIT_DIR_ENV: str(git_dir or "")}
    if writable:
        env[WRITABLE_ENV] = os.pathsep.join(str(p) for p in writable)
    if readable:
        env[READABLE_ENV] = os.pathsep.join(str(p) for p in readable)
    if sockets:
        env[SOCKETS_ENV] = os.pathsep.join(str(p) for p in sockets)
    return env


def _problem_before_start(env: Mapping[str, str]) -> str | None:
    if not sys.platform.startswith("linux"):
        return "bubblewrap runs on Linux only"
    if shutil.which("bwrap", path=env.get("PATH", os.defpath)) is None:
        return f"bubblewrap (bwrap) is not installed ({INSTALL_HINT})"
    return None


def _why(result_code: int, output: bytes) -> str:
    lines = output.decode("utf-8", "replace").strip().splitlines()
    return f"bubblewrap cannot start here ({lines[-1] if lines else f'exit {result_code}'})"


async def probe_sandbox(project: Path, env: Mapping[str, str] | None = None) -> str | None:
    """Why bubblewrap cannot run a command in ``project`` (one line), or ``None`` if it can."""
    env = dict(os.environ if env is None else env)
    problem = _problem_before_start(env)
    if problem is not None:
        return problem
    argv = await trio.to_thread.run_sync(
        functools.partial(sandbox_argv, project, ["true"], network=False, env=env)
    )
    out = bytearray()
    try:
        result = await run_child(argv, env=env, stdin=None, on_output=out.extend, timeout=20)
    except OSError as exc:
        return f"bubblewrap cannot start: {exc.strerror or exc}"
    return None if result.returncode == 0 else _why(result.returncode, bytes(out))


async def require_sandbox(project: Path, env: Mapping[str, str] | None = None) -> None:
    """Raise ``ConfigError`` (one line) unless bubblewrap can run a command here."""
    problem = await probe_sandbox(project, env)
    if problem is not None:
        raise ConfigError(f"--sandbox: {problem}; refusing to run Bash commands unconfined")


def check_sandbox(project: Path, env: Mapping[str, str] | None = None) -> None:
    """Raise ``ConfigError`` (one line) unless bubblewrap can run a command here (sync)."""
    env = dict(os.environ if env is None else env)
    problem = _problem_before_start(env)
    if problem is None:
        out = bytearray()
        try:
            result = run_child_blocking(
                sandbox_argv(project, ["true"], network=False, env=env),
                env=env,
                stdin=None,
                on_output=out.extend,
                timeout=20,
            )
        except OSError as exc:
            problem = f"bubblewrap cannot start: {exc.strerror or exc}"
        else:
            if result.returncode != 0:
                problem = _why(result.returncode, bytes(out))
    if problem is not None:
        raise ConfigError(f"--sandbox: {problem}; refusing to run Bash commands unconfined")


AgentBox = Literal["bwrap", "env", "own"]
"""Where an agent's tools run (the backend says): ``bwrap`` in forgeflare's sandbox (our own
agent), ``env`` as the agent runs them, told the sandbox in :data:`SANDBOX_ENV` (a command
agent), ``own`` in the agent's own sandbox, outside forgeflare's."""


@dataclass(frozen=True, slots=True)
class SandboxChoice:
    """What a loop does about the sandbox: on or not, and the banner's words."""

    on: bool
    level: Literal["info", "warn"]
    line: str


def choose_sandbox(
    setting: str,
    *,
    backend: str,
    box: AgentBox,
    problem: str | None,
    network: bool,
    writable: Sequence[str],
) -> SandboxChoice:
    """The loop's decision (pure): ``setting`` is ``auto``/``bwrap``/``off``, ``problem`` the
    probe's answer (``None``: bubblewrap works), ``box`` where ``backend``'s tools run.

    Raises ``ConfigError`` when the sandbox is required (``bwrap``) and cannot run.
    """
    if box == "own":
        return SandboxChoice(
            False,
            "info",
            f"sandbox: the {backend} backend runs its own tools, outside forgeflare's "
            "bubblewrap sandbox (turn on its own: docs, Security); a gate runs in it when it can",
        )
    if setting == "off":
        return SandboxChoice(
            False,
            "warn",
            "sandbox: off ([security] sandbox or --no-sandbox); Bash commands run unconfined",
        )
    if problem is not None and setting == "bwrap":
        raise ConfigError(f'[security] sandbox = "bwrap": {problem}; refusing to start')
    if box == "env":
        return SandboxChoice(
            problem is None,
            "info",
            f"sandbox: a {backend} agent runs as it is (a `forgeflare run` it starts gets "
            f"{SANDBOX_ENV})",
        )
    if problem is not None:
        line = f"sandbox: none, Bash commands run unconfined: {problem}"
        return SandboxChoice(False, "warn", line)
    places = ["the project", "its git dir (not hooks or config)", "a private /tmp"]
    places += ["the package caches (~/.cache/pip, ~/.npm/_cacache, ~/.cargo/registry, …)"]
    places += list(writable)
    return SandboxChoice(
        True,
        "info",
        f"sandbox: bubblewrap; Bash writes only to {', '.join(places)}; ~ and /var/tmp "
        "hidden; network "
        f"{'on' if network else 'off'}; --no-sandbox turns it off",
    )


def _named_paths(project: Path, names: Sequence[str], key: str, home: str) -> list[Path]:
    paths = []
    for name in names:
        raw = name.strip()
        if raw == "~" or raw.startswith("~/"):
            if not home.startswith("/"):
                raise ConfigError(f"[security] {key}: {name!r} needs HOME to be set")
            raw = home + raw[1:]
        path = (project / raw).resolve()
        if not path.exists():
            raise ConfigError(f"[security] {key}: {name!r} ({path}) does not exist")
        paths.append(path)
    return paths


def _loop_paths(
    project: Path,
    writable: Sequence[str],
    sockets: Sequence[str],
    home: str,
    readable: Sequence[str] = (),
) -> tuple[Path, list[Path], list[Path], list[Path]]:
    root = project.resolve()
    extra = _named_paths(root, writable, "writable", home)
    for path in extra:
        if not path.is_dir():
            raise ConfigError(f"[security] writable: {path} is not a directory")
    shown = _named_paths(root, readable, "readable", home)
    return root, extra, _named_paths(root, sockets, "sockets", home), shown


@dataclass(frozen=True, slots=True)
class BoxSettings:
    """The ``[security]`` keys the box reads, for the agent's commands and a gate alike (the
    callers read the project's config: ``SecuritySection.box``; the defaults keep it on)."""

    sandbox: str = "auto"
    network: bool = True
    writable: tuple[str, ...] = ()
    sockets: tuple[str, ...] = ()
    readable: tuple[str, ...] = ()


async def box_variables(
    project: Path, box: BoxSettings, *, env: Mapping[str, str]
) -> tuple[str | None, dict[str, str]]:
    """Why bubblewrap cannot run here (``None``: it can; not probed when ``box.sandbox`` is
    ``off``) and the variables that put a command in the box (:func:`sandbox_env`).

    Raises ``ConfigError`` for a named path that does not exist.
    """
    root, extra, allowed, shown = await trio.to_thread.run_sync(
        _loop_paths, project, box.writable, box.sockets, env.get("HOME", ""), box.readable
    )
    problem = None if box.sandbox == "off" else await probe_sandbox(root, env)
    git = await trio.to_thread.run_sync(_git_dir, root)
    variables = sandbox_env(
        network=box.network, writable=extra, sockets=allowed, git_dir=git, readable=shown
    )
    return problem, variables


async def loop_sandbox(
    project: Path, settings: BoxSettings, *, backend: str, box: AgentBox, env: Mapping[str, str]
) -> tuple[SandboxChoice, dict[str, str]]:
    """A loop's sandbox, decided once at its start: the banner's choice and the agent's
    variables (``FORGEFLARE_SANDBOX`` empty when off).

    Raises ``ConfigError`` for a named path that does not exist or a required sandbox that
    cannot run.
    """
    own = box != "own"
    probed = settings if own else replace(settings, sandbox="off")
    problem, variables = await box_variables(project, probed, env=env)
    choice = choose_sandbox(
        settings.sandbox,
        backend=backend,
        box=box,
        problem=problem,
        network=settings.network,
        writable=settings.writable,
    )
    if not choice.on:
        # Empty, not absent: a FORGEFLARE_SANDBOX the user exported must not switch it on.
        return choice, {SANDBOX_ENV: ""}
    return choice, variables


def scope_abstract_sockets() -> bool:
    """Keep this process and everything it starts from connecting to abstract unix sockets
    made outside it (:func:`forgeflare.security._scopeexec.scope_self`); whether it took effect."""
    return scope_self()
