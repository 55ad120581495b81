"""``forgeflare init``: scaffold a project for a Ralph loop from the shipped templates.

The decision is pure: :func:`template_files` lists what a project gets (the files under
``templates/files/`` plus the generated ``config.toml`` and prompts), :func:`plan_init`
compares them with what exists and says, per file, create / keep / overwrite / merge, and
:func:`merge_gitignore` adds the loop's output paths to a ``.gitignore`` without duplicates.
:func:`init_project` is the shell: it reads the existing files, asks :func:`plan_init`, and
writes (unless ``dry_run``).

Dot-directories are stored as ``dot-<name>`` in the package (``dot-fresher/`` is written as
``.fresher/``) so that no packaging step drops them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from forgeflare._clock import utc_timestamp
from forgeflare._errors import ConfigError, ForgeflareError
from forgeflare.disk import RUNTIME_PATTERNS, atomic_write_text
from forgeflare.stophook import hook_command, install_hook
from forgeflare.supervisor import default_config_toml, default_prompt, load_config, loop_trust_items
from forgeflare.supervisor.backends import BACKENDS, InitTemplate
from forgeflare.templates._guard_script import GUARD_SCRIPT_NAME, render_guard_script
from forgeflare.trust import TrustItem, TrustStore, default_trust_file

__all__ = [
    "GITIGNORE_LINES",
    "Action",
    "InitAction",
    "InitReport",
    "TemplateError",
    "TemplateFile",
    "TemplateUsageError",
    "backend_config_toml",
    "init_backends",
    "init_project",
    "merge_gitignore",
    "plan_init",
    "template_files",
]

GITIGNORE_LINES: tuple[str, ...] = RUNTIME_PATTERNS
"""What the loop writes and nobody should commit."""

_GITIGNORE_HEADER = "# forgeflare: what the loop writes"


class TemplateError(ForgeflareError):
    """``init`` or ``demo`` cannot do its work: the directory is unusable or a write failed."""


class TemplateUsageError(TemplateError, ConfigError):
    """``init`` or ``demo`` was given what it cannot use (a file as DIR, two agents): exit 2."""


@dataclass(frozen=True, slots=True)
class TemplateFile:
    """One file ``init`` writes: its path relative to the project, text and mode."""

    relpath: str
    content: str
    executable: bool = False


class Action(StrEnum):
    """What :func:`plan_init` decided for one file."""

    CREATE = "create"
    KEEP = "keep"
    OVERWRITE = "overwrite"
    MERGE = "merge"
    UNCHANGED = "unchanged"


@dataclass(frozen=True, slots=True)
class InitAction:
    """One file's decision and, when it is written, its new content."""

    relpath: str
    action: Action
    content: str | None = None
    executable: bool = False
    note: str = ""

    @property
    def writes(self) -> bool:
        """Whether carrying out this action writes the file."""
        return self.action in (Action.CREATE, Action.OVERWRITE, Action.MERGE)

    def label(self, *, dry_run: bool) -> str:
        """How the action reads in ``init``'s listing."""
        done = {
            Action.CREATE: "created",
            Action.OVERWRITE: "overwritten",
            Action.MERGE: "merged",
            Action.KEEP: "exists, kept",
            Action.UNCHANGED: "unchanged",
        }
        would = {
            Action.CREATE: "would create",
            Action.OVERWRITE: "would overwrite",
            Action.MERGE: "would merge",
        }
        return would.get(self.action, done[self.action]) if dry_run else done[self.action]


@dataclass
class InitReport:
    """What :func:`init_project` did (or would do, with ``dry_run``)."""

    project_dir: Path
    actions: list[InitAction]
    dry_run: bool
    stop_hook: bool = False
    """The agent's Stop hook is (or would be) installed too."""
    settings_path: Path | None = None
    settings_changed: bool = False
    trusted: int = 0
    """How many of the written hooks and commands ``init`` trusted (``forgeflare trust``)."""

    def title(self) -> str:
        """What ``init`` did, in one line: how many files it wrote and kept."""
        wrote = sum(
            a.action in (Action.CREATE, Action.OVERWRITE, Action.MERGE) for a in self.actions
        )
        kept = sum(a.action in (Action.KEEP, Action.UNCHANGED) for a in self.actions)
        where = self.project_dir
        if self.dry_run:
            return f"would write {wrote} file(s) in {where}, keep {kept}"
        if not wrote:
            return f"nothing written in {where}: all {kept} file(s) exist and were kept"
        return f"wrote {wrote} file(s) in {where}" + (f", kept {kept}" if kept else "")

    def lines(self) -> list[str]:
        """The listing ``init`` prints, one line per file."""
        out = []
        for act in self.actions:
            note = f" ({act.note})" if act.note else ""
            out.append(f"  {act.label(dry_run=self.dry_run):<16}{act.relpath}{note}")
        if self.stop_hook and self.dry_run:
            out.append(f"  {'would merge':<16}.claude/settings.json (Stop hook)")
        if self.settings_path is not None:
            what = "Stop hook added" if self.settings_changed else "Stop hook already there"
            rel = _rel(self.settings_path, self.project_dir)
            out.append(f"  {'merged' if self.settings_changed else 'unchanged':<16}{rel} ({what})")
        if self.trusted:
            out.append(f"  {'trusted':<16}{self.trusted} hook(s) and command(s) written here")
        return out


def _rel(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return str(path)


# -- the templates ----------------------------------------------------------------------------

_EXECUTABLE_DIRS = ("hooks",)


def _target(parts: Sequence[str]) -> str:
    return "/".join("." + p[4:] if p.startswith("dot-") else p for p in parts)


def _walk(node: Traversable, parts: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], str]]:
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.name == "__pycache__":
            continue
        if child.is_dir():
            yield from _walk(child, (*parts, child.name))
        else:
            text = child.read_text(encoding="utf-8")
            if child.name == GUARD_SCRIPT_NAME:
                text = render_guard_script(text)  # the one deny-list core, copied in
            yield (*parts, child.name), text


def _is_executable(parts: Sequence[str]) -> bool:
    # Scripts live in hooks directories; hooks.toml beside them is data.
    return any(p in _EXECUTABLE_DIRS for p in parts[:-1]) and not parts[-1].endswith(".toml")


def init_backends() -> dict[str, InitTemplate]:
    """Each registered backend with an ``init --NAME`` option, by name."""
    return {name: cls.init for name, cls in sorted(BACKENDS.items()) if cls.init is not None}


def backend_config_toml(backend: str) -> str:
    """The default ``config.toml`` with ``[agent] backend`` set (a backend of
    :func:`init_backends`).

    The backend's flags stay settings with their comments (``permission_mode``,
    ``extra_args``, ``[fresher] model``), not one opaque command string; another backend's
    own ``[agent]`` settings are left out (this agent never reads them).
    """
    text = default_config_toml()
    head, sep, tail = text.partition("\n[agent]\n")
    old = 'backend = ""'
    if not sep or old not in tail:
        raise TemplateError("the default config.toml has no [agent] backend to set")
    tail = tail.replace(old, f'backend = "{backend}"', 1)
    templates = init_backends()
    own = templates[backend].own_settings
    for other in templates.values():
        for key in set(other.own_settings) - set(own):
            tail = re.sub(rf"(?:#[^\n]*\n)*{re.escape(key)} = [^\n]*\n", "", tail, count=1)
    return head + sep + tail


AGENTS_MD = ".fresher/AGENTS.md"

_HOOK_PROMISES = {
    "A test run that passes while IMPLEMENTATION_PLAN.md has no open task (`- [ ]`) ends the loop\n"
    "(the convergence check in `.forgeflare/hooks.toml`).": "The loop ends when "
    "IMPLEMENTATION_PLAN.md has no open task (`- [ ]`) left, or when\n"
    "your final message ends with `<loop-done>COMPLETE</loop-done>` once everything is done\n"
    "and tested.",
    "- Destructive commands (`rm -r`, `git reset --hard`, `git clean -f`, force pushes, ...) are\n"
    "  blocked by `.forgeflare/hooks/bash-guard.py`; find another way rather than working around "
    "it.": "- Do not run destructive commands (`rm -r`, `git reset --hard`, `git clean -f`, force\n"
    "  pushes, ...): nothing here blocks them, so find another way.",
}


def agents_md_without_hooks(text: str) -> str:
    """AGENTS.md for an agent that runs none of forgeflare's agent hooks (Claude Code, Codex):
    it must not promise a guard or a convergence check that never runs (pure)."""
    for promise, truth in _HOOK_PROMISES.items():
        if promise not in text:
            raise TemplateError(f"{AGENTS_MD}: the template no longer says {promise[:40]!r}...")
        text = text.replace(promise, truth)
    return text


def template_files(*, agent: str = "") -> list[TemplateFile]:
    """Every file ``init`` writes except ``.gitignore`` (merged, see :func:`merge_gitignore`);
    ``agent``: the backend ``init --NAME`` chose (``""``: our own agent)."""
    root = resources.files("forgeflare.templates") / "files"
    files = [
        TemplateFile(_target(parts), text, _is_executable(parts)) for parts, text in _walk(root, ())
    ]
    config = backend_config_toml(agent) if agent else default_config_toml()
    files.append(TemplateFile(".fresher/config.toml", config))
    if agent and not init_backends()[agent].agent_hooks:
        files = [
            TemplateFile(f.relpath, agents_md_without_hooks(f.content), f.executable)
            if f.relpath == AGENTS_MD
            else f
            for f in files
        ]
    for mode in ("planning", "building"):
        files.append(TemplateFile(f".fresher/PROMPT.{mode}.md", default_prompt(mode)))
    return sorted(files, key=lambda f: f.relpath)


# -- the pure decision ------------------------------------------------------------------------


def merge_gitignore(existing: str | None, lines: Sequence[str] = GITIGNORE_LINES) -> str | None:
    """``existing`` with the ``lines`` it lacks appended, or ``None`` when none is missing."""
    have = {line.strip() for line in (existing or "").splitlines()}
    missing = [line for line in lines if line.strip() not in have]
    if not missing:
        return None
    text = existing or ""
    if text and not text.endswith("\n"):
        text += "\n"
    if text.strip():
        text += "\n"
    block = [] if _GITIGNORE_HEADER in have else [_GITIGNORE_HEADER]
    return text + "\n".join([*block, *missing]) + "\n"


def plan_init(
    files: Sequence[TemplateFile],
    existing: Mapping[str, str | None],
    *,
    force: bool = False,
) -> list[InitAction]:
    """Decide each file's fate. ``existing`` maps a relpath to its text (``None``: missing).

    A file that exists is kept unless ``force``; with ``force`` it is overwritten when it
    differs. ``.gitignore`` is always merged, never overwritten.
    """
    actions: list[InitAction] = []
    for f in files:
        old = existing.get(f.relpath)
        if old is None:
            actions.append(InitAction(f.relpath, Action.CREATE, f.content, f.executable))
        elif not force:
            actions.append(InitAction(f.relpath, Action.KEEP, executable=f.executable))
        elif old == f.content:
            actions.append(InitAction(f.relpath, Action.UNCHANGED, f.content, f.executable))
        else:
            actions.append(InitAction(f.relpath, Action.OVERWRITE, f.content, f.executable))
    old_ignore = existing.get(".gitignore")
    merged = merge_gitignore(old_ignore)
    if merged is None:
        actions.append(InitAction(".gitignore", Action.UNCHANGED))
    elif old_ignore is None:
        actions.append(InitAction(".gitignore", Action.CREATE, merged))
    else:
        have = {line.strip() for line in old_ignore.splitlines()}
        added = sum(line not in have for line in GITIGNORE_LINES)
        note = f"+{added} line{'' if added == 1 else 's'}"
        actions.append(InitAction(".gitignore", Action.MERGE, merged, note=note))
    return actions


# -- the shell --------------------------------------------------------------------------------


def _read_existing(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except IsADirectoryError as exc:
        raise TemplateError(f"{path}: is a directory, expected a file") from exc
    except OSError as exc:
        raise TemplateError(f"{path}: cannot read: {exc.strerror}") from exc


def init_project(
    project_dir: Path,
    *,
    force: bool = False,
    dry_run: bool = False,
    agents: Sequence[str] = (),
) -> InitReport:
    """Scaffold ``project_dir`` (created if missing); nothing is written with ``dry_run``.

    ``agents``: the backends ``init --NAME`` named (one at most, of :func:`init_backends`): it
    becomes ``[agent] backend``, and its Stop hook is installed when its template says so.
    Raises :class:`TemplateUsageError` for an unknown or a second agent, :class:`TemplateError`
    (or a ``SettingsFileError`` for a broken settings file) naming the path on failure.
    """
    if project_dir.exists() and not project_dir.is_dir():
        raise TemplateUsageError(f"{project_dir}: not a directory")
    agent = _one_agent(agents)
    files = template_files(agent=agent)
    relpaths = [f.relpath for f in files] + [".gitignore"]
    existing = {rel: _read_existing(project_dir / rel) for rel in relpaths}
    actions = plan_init(files, existing, force=force)
    if agent:
        actions = [
            InitAction(a.relpath, a.action, a.content, a.executable, "set [agent] backend yourself")
            if a.relpath == ".fresher/config.toml" and a.action is Action.KEEP
            else a
            for a in actions
        ]
    stop_hook = bool(agent) and init_backends()[agent].stop_hook
    report = InitReport(project_dir, actions, dry_run, stop_hook=stop_hook)
    if dry_run:
        return report
    for act in actions:
        if not act.writes or act.content is None:
            continue
        path = project_dir / act.relpath
        try:
            atomic_write_text(path, act.content)
            os.chmod(path, 0o755 if act.executable else 0o644)
        except OSError as exc:
            raise TemplateError(f"{path}: cannot write: {exc.strerror or exc}") from exc
    if stop_hook:
        # By absolute path: Claude Code's PATH rarely holds the venv forgeflare lives in.
        report.settings_path, report.settings_changed = install_hook(
            project_dir, command=hook_command()
        )
    report.trusted = trust_written(project_dir, {a.relpath for a in actions if a.writes})
    return report


def _one_agent(agents: Sequence[str]) -> str:
    """The one backend of ``agents`` (``""`` for none); a usage error names the others."""
    known = init_backends()
    for name in agents:
        if name not in known:
            choices = ", ".join(f"--{n}" for n in known)
            raise TemplateUsageError(f"--{name}: no such agent for init (choose {choices})")
    if len(set(agents)) > 1:
        raise TemplateUsageError(f"{' and '.join(f'--{a}' for a in agents)}: choose one agent")
    return agents[0] if agents else ""


def _written_by_init(item: TrustItem, written: set[str]) -> bool:
    if item.key.startswith(".claude/settings.json"):
        return "stop-hook" in item.definition and set(item.files) <= written
    if item.key.startswith("hooks.toml"):
        return ".forgeflare/hooks.toml" in written and set(item.files) <= written
    if item.key == "[agent] command":
        return ".fresher/config.toml" in written and set(item.files) <= written
    return item.key in written and set(item.files) <= written


def trust_written(project_dir: Path, written: set[str]) -> int:
    """Trust what ``init`` itself wrote (and nothing it kept); returns how many items.

    Kept files (a cloned project's own hooks) stay untrusted until ``forgeflare trust``.
    """
    try:
        config = load_config(project_dir, env=os.environ).config
        store = TrustStore(default_trust_file())
        items = [i for i in loop_trust_items(project_dir, config) if _written_by_init(i, written)]
        if items:
            store.trust(str(project_dir.resolve()), items, utc_timestamp())
    except (ConfigError, OSError):
        return 0
    return len(items)
