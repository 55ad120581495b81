"""Before anything starts: what would make every iteration fail, and one loop per project.

:func:`preflight` runs before the ``started`` hook: trust, the API key the own agent needs,
``hooks.toml``, the Python hook modules the agent is given (``--hooks-module``), the agent's
executable, the prompt file, the plan (a warning in building mode),
git (a warning), a writable ``.git`` when only the agent commits. Each failure is one line
and exit 2, with no hook or agent run.
:func:`project_lock` holds ``.fresher/loop.lock`` (``flock``) for the loop's lifetime, so a second
``forgeflare loop`` in the same project refuses and names the running one.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from forgeflare._errors import ConfigError
from forgeflare.disk import WRITTEN_FOLDERS, check_project_folders, open_regular, read_named_text
from forgeflare.security import child_environment
from forgeflare.supervisor.backends import BACKENDS, Backend
from forgeflare.supervisor.config._config import LoopConfig
from forgeflare.supervisor.config._trust import hooks_modules, loop_trust_items
from forgeflare.supervisor.evidence._git import run_git
from forgeflare.supervisor.records._records import find_resumable
from forgeflare.trust import require_trust

__all__ = ["LOCK_RELPATH", "check_agent", "lock_holder", "preflight", "project_lock"]

LOCK_RELPATH = Path(".fresher") / "loop.lock"
_DEFAULT_API = "https://api.anthropic.com"


def lock_holder(project: Path) -> int | None:
    """The pid of the loop running in ``project``, or ``None`` when none holds the lock."""
    path = project / LOCK_RELPATH
    try:
        fd = open_regular(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.read(fd, 32).decode("utf-8", errors="replace").strip()
            return int(text) if text.isdigit() else -1
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


@contextlib.contextmanager
def project_lock(project: Path) -> Iterator[None]:
    """Hold the project's loop lock (the file is kept: removing a flock file breaks it)."""
    path = project / LOCK_RELPATH
    check_project_folders(project, [LOCK_RELPATH.parent])
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = open_regular(path, os.O_RDWR | os.O_CREAT)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot create the loop lock: {exc.strerror}") from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = lock_holder(project)
            raise ConfigError(
                f"another forgeflare loop is running in {project} (pid {holder}); stop it with "
                "`forgeflare stop` or wait for it"
            ) from None
        try:
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
        except OSError as exc:  # a full disk (ENOSPC) or quota: nothing has started yet
            raise ConfigError(f"{path}: cannot write the loop lock: {exc.strerror}") from exc
        yield
    finally:
        os.close(fd)


def _is_git_repo(project: Path) -> bool | None:
    """``None`` when git is not installed."""
    if shutil.which("git") is None:
        return None
    done = run_git(project, "rev-parse", "--is-inside-work-tree")
    return done.ok and done.stdout.strip() == "true"


# Imported in a child process: the project's module code must not run inside the loop itself.
# forgeflare is imported before the project joins sys.path (run with -P), so a project's own
# forgeflare/ or trio.py cannot stand in for them.
_LOAD_MODULES = """\
import sys
from forgeflare.hooks import HookRegistrationError, load_hooks_module
sys.path.insert(0, sys.argv[1])
for name in sys.argv[2:]:
    try:
        load_hooks_module(name)
    except HookRegistrationError as exc:
        sys.exit(str(exc).splitlines()[0])
"""


def _check_hooks_modules(
    project: Path, names: Sequence[str], env: Mapping[str, str], timeout: float
) -> None:
    """Raise ``ConfigError`` unless every module imports and defines hooks (none is run)."""
    try:
        done = subprocess.run(
            [sys.executable, "-P", "-c", _LOAD_MODULES, str(project), *names],
            cwd=project,
            env=child_environment(env),
            capture_output=True,
            text=True,
            timeout=timeout or None,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ConfigError(
            f"hooks modules {', '.join(names)}: not loaded within {timeout:g}s ([hooks] timeout)"
        ) from None
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        raise ConfigError(f"{lines[-1]}: every iteration would fail")


def _config_dirs() -> list[str]:
    """Profile variables naming an account's configuration directory, which must exist: each
    backend's login folder variable."""
    return sorted({c.account.home_var for c in BACKENDS.values() if c.account is not None} - {""})


def check_agent(backend: Backend, argv: list[str], env: Mapping[str, str]) -> None:
    """Raise the first of ``backend``'s problems (:meth:`Backend.problems`) in ``env``."""
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    problems = backend.problems(env, argv, root=root)
    if problems:
        raise ConfigError(problems[0])


def _check_fallbacks(project: Path, config: LoopConfig, env: Mapping[str, str]) -> None:
    """Each fallback's executable is found and its profile's configuration is present."""
    from forgeflare.supervisor.agents._fallback import parse_agent_spec

    for text in config.agent.fallback:
        spec = parse_agent_spec(text)
        extra = config.profile_env(spec.profile)
        for name in _config_dirs():
            if name in extra and not Path(extra[name]).expanduser().is_dir():
                raise ConfigError(
                    f"[agent] fallback {text!r}: [agent.profiles.{spec.profile}] env {name} "
                    f"= {extra[name]!r} is not a directory"
                )
        backend = config.backend_for(spec.backend)
        argv = config.agent_argv(sys.executable, backend, spec.profile)
        try:
            backend.preflight(project, argv, {**env, **extra})
            check_agent(backend, argv, {**env, **extra})
        except ConfigError as exc:
            raise ConfigError(f"[agent] fallback {text!r}: {exc}") from exc


def _check_git_writable(project: Path, checkpoint: str, commits_itself: bool, name: str) -> None:
    """Only the agent would commit: its repository's git directory must be writable."""
    from forgeflare.supervisor.evidence._gitwritable import git_dir_writable, git_write_problem

    git = git_dir_writable(project)
    problem = git_write_problem(
        checkpoint=checkpoint, commits_itself=commits_itself, backend=name, git=git
    )
    if problem is not None:
        raise ConfigError(problem)


def _check_prompt(prompt: Path) -> None:
    """Raise ``ConfigError`` when the mode's prompt file is there but cannot be read."""
    if prompt.exists():
        read_named_text(prompt, f"the prompt {prompt}", error=ConfigError)


def preflight(
    project: Path,
    config: LoopConfig,
    env: Mapping[str, str],
    *,
    trust_project: bool = False,
    resume: bool = False,
    warn: Callable[[str], None] = print,
    project_command: bool = True,
) -> None:
    """Raise ``ConfigError`` (one line, exit 2) for what would make every iteration fail."""
    # Before anything is read or written there: a clone's links must not lead the loop out.
    check_project_folders(project, [LOCK_RELPATH.parent, config.paths.log_dir, *WRITTEN_FOLDERS])
    holder = lock_holder(project)
    if holder is not None and resume:
        # --resume never takes over a live run: name the run it would have picked up.
        running = find_resumable(project / config.paths.log_dir)
        if running is not None:
            raise ConfigError(f"run {running.dir.name} is still running, pid {holder}")
    if holder is not None:
        raise ConfigError(
            f"another forgeflare loop is running in {project} (pid {holder}); stop it with "
            "`forgeflare stop` or wait for it"
        )
    items = loop_trust_items(project, config, project_command=project_command)
    require_trust(project, items, env, flag=trust_project)
    backend = config.backend()
    argv = config.agent_argv(sys.executable, backend)
    modules = hooks_modules(argv)
    if modules:
        _check_hooks_modules(project, modules, env, config.hooks.timeout)
    backend.preflight(project, argv, env)
    check_agent(backend, argv, env)
    checkpoint = config.fresher.checkpoint
    if checkpoint != "commit" and not backend.commits_itself:
        raise ConfigError(
            f"[fresher] checkpoint = {checkpoint!r}: the {backend.name} agent cannot commit in "
            "its sandbox (.git is read-only there) and the loop would not either, so no work "
            'would ever be delivered; set checkpoint = "commit"'
        )
    if checkpoint != "commit":
        _check_git_writable(project, checkpoint, backend.commits_itself, backend.name)
    reviewer = config.finish.reviewer
    url = (env.get("ANTHROPIC_API_URL") or env.get("ANTHROPIC_BASE_URL") or "").strip()
    if reviewer and not env.get("ANTHROPIC_API_KEY") and not url:
        # Its request goes to the agent's API URL and key: without either, every claim waits.
        raise ConfigError(
            f"[finish] reviewer = {reviewer!r}: ANTHROPIC_API_KEY is not set, so no claim "
            "could ever be reviewed; export it, or point ANTHROPIC_API_URL at another endpoint"
        )
    _check_fallbacks(project, config, env)
    _check_prompt(project / ".fresher" / f"PROMPT.{config.fresher.mode}.md")
    from forgeflare.supervisor.records._notify import notify_preflight, notify_urls
    from forgeflare.trust import default_trust_file

    notify_problem = notify_preflight(notify_urls(env, default_trust_file(env).parent))
    if notify_problem is not None:
        warn(notify_problem)
    plan = project / config.paths.plan_file
    if config.fresher.mode == "building" and not plan.exists():
        warn(
            f"building mode and no {config.paths.plan_file}: the loop completes only on a "
            "convergence signal"
        )
    if not resume:
        git = _is_git_repo(project)
        if git is not True and config.fresher.smart_termination:
            what = "git is not installed" if git is None else "not a git repository"
            warn(
                f"{what}: commits are not counted and no_changes cannot stop an idle loop; "
                f"max_iterations ({config.fresher.max_iterations or 'unlimited'}) and "
                "max_runtime stop it"
            )
