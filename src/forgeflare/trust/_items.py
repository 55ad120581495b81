"""Gathering trust items: what a project would run, and what its fingerprint must cover.

Trust covers what really runs, not only the file a command names: a referenced file's whole
directory (a sourced ``lib.sh``, a ``json.py`` beside a Python hook), a symlink's target (even
outside the project), ``cd dir && ./h.sh``, ``python3 -m mod``, a Python module by every file
of it (package modules, ``.pyc``, extension modules, ``__pycache__``) plus every top-level
entry of the directory it is imported from that would shadow a real module. What a digest
cannot follow (a ``make`` recipe) is named in :attr:`TrustItem.blind`.

File hashes are cached by ``(device, inode, size, mtime, ctime)``: the check before every hook
call costs a few ``stat`` calls when nothing changed.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import shlex
import sys
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from importlib.machinery import PathFinder
from pathlib import Path
from typing import Any

from forgeflare.disk import CONFIG_LIMIT, not_regular, read_limited, read_limited_text
from forgeflare.trust._policy import TrustItem

__all__ = [
    "agent_trust_items",
    "blind_spots",
    "claude_items",
    "claude_settings_items",
    "command_item",
    "config_items",
    "directory_items",
    "fleet_files",
    "fleet_items",
    "hooks_file_items",
    "loosens",
    "python_module_items",
    "referenced_files",
]

_PROJECT_VARS = ("FORGEFLARE_PROJECT_DIR", "FRESHER_PROJECT_DIR", "CLAUDE_PROJECT_DIR")
_MAX_FILE_BYTES = 16 * 1024 * 1024
_MAX_DIR_FILES = 2000
# Written by forgeflare or git while a run goes on: never part of what a hook is.
_STATE_NAMES = frozenset(
    {
        ".git",
        "runs",
        ".entire",
        ".forgeflare-fleet",
        "node_modules",
        "convergence.json",
        "loop.lock",
        "stop-request",
        "answer.md",
        "audit.log",
        "sessions.log",
    }
)
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")", ";;", "|&"})
_PYTHONS = ("python", "python3", "pypy", "pypy3")
_BUILD_TOOLS: Mapping[str, tuple[str, ...]] = {
    "make": ("Makefile", "makefile", "GNUmakefile"),
    "just": ("justfile", "Justfile", ".justfile"),
    "npm": ("package.json",),
    "yarn": ("package.json",),
    "pnpm": ("package.json",),
    "npx": ("package.json",),
    "cargo": ("Cargo.toml",),
    "go": ("go.mod",),
    "rake": ("Rakefile",),
    "tox": ("tox.ini",),
    "nox": ("noxfile.py",),
    "pytest": ("conftest.py", "pytest.ini", "pyproject.toml"),
    "uv": ("pyproject.toml",),
    "gradle": ("build.gradle",),
    "mvn": ("pom.xml",),
}

# --- hashing (stat-cached) ---------------------------------------------------------------------

_HASHES: dict[str, tuple[tuple[int, ...], str]] = {}


def _sha256_file(path: Path) -> str:
    """sha256 of a file's content; cached while its stat says it is the same file."""
    st = path.stat()
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    cached = _HASHES.get(str(path))
    if cached is not None and cached[0] == key:
        return cached[1]
    kind = not_regular(st.st_mode)
    if kind is not None:  # a FIFO or /dev/zero: never opened (it would block or never end)
        digest = f"not a regular file ({kind})"
    elif st.st_size > _MAX_FILE_BYTES:
        digest = f"size {st.st_size} mtime {st.st_mtime_ns}"
    else:
        h = hashlib.sha256()
        with path.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 16), b""):
                h.update(chunk)
        digest = h.hexdigest()
    _HASHES[str(path)] = (key, digest)
    return digest


def _lexically_inside(path: Path, project: Path) -> str | None:
    """``path`` (absolute) relative to ``project`` without following links, else ``None``."""
    try:
        return Path(os.path.normpath(path)).relative_to(project).as_posix()
    except ValueError:
        return None


def _rebase(path: Path, project: Path) -> tuple[Path, Path]:
    """``path`` and ``project`` as absolute paths under the project's real path."""
    real = project.resolve()
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(project))
    return Path(os.path.normpath(real / rel)), real


def _cover_file(path: Path, project: Path, found: dict[str, str]) -> None:
    """Add ``path`` (inside the project) to ``found``: its content, or its link and target."""
    rel = _lexically_inside(path, project)
    if rel is None or rel in found or rel == ".":
        return
    try:
        if path.is_symlink():
            target = path.resolve()
            what = _sha256_file(target) if target.is_file() else "not a file"
            found[rel] = f"-> {target} {what}"
        elif path.is_file():
            found[rel] = _sha256_file(path)
    except (OSError, RuntimeError):
        found[rel] = "unreadable"


def _walk(directory: Path, recursive: bool) -> Iterator[Path]:
    """Files of ``directory`` (and below), without state folders, in a stable order."""
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name in _STATE_NAMES:
            continue
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            if recursive:
                yield from _walk(path, True)
        else:
            yield path


def _cover_directory(directory: Path, project: Path, found: dict[str, str]) -> None:
    """Every file of ``directory``; below it too unless it is the project itself."""
    if _lexically_inside(directory, project) is None:
        return
    recursive = os.path.normpath(directory) != os.path.normpath(project)
    for count, path in enumerate(_walk(directory, recursive)):
        if count >= _MAX_DIR_FILES:
            found[f"{_lexically_inside(directory, project)}/…"] = "too many files"
            break
        _cover_file(path, project, found)


# --- what a command refers to ------------------------------------------------------------------


def _split(command: str) -> list[str]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:
        return command.split()


def _simple_commands(command: str) -> Iterator[list[str]]:
    words: list[str] = []
    for token in _split(command):
        if token in _SEPARATORS:
            if words:
                yield words
            words = []
        else:
            words.append(token)
    if words:
        yield words


def _expand(word: str, project: Path) -> str:
    for var in _PROJECT_VARS:
        word = word.replace("${" + var + "}", str(project)).replace("$" + var, str(project))
    return word


def _module_files(name: str, base: Path, project: Path, found: dict[str, str]) -> None:
    """A module imported from ``base``: every file of it, what it imports from ``base``, and
    every entry of ``base`` that would shadow a real module."""
    todo = [name.split(".")[0]]
    seen: set[str] = set()
    while todo:
        top = todo.pop()
        if top in seen or not top.isidentifier():
            continue
        seen.add(top)
        before = set(found)
        if (base / top).is_dir():
            _cover_directory(base / top, project, found)
        for path in _walk(base, False):
            if path.name.split(".")[0] == top:
                _cover_file(path, project, found)
        for path in _walk(base / "__pycache__", False):
            if path.name.split(".")[0] == top:
                _cover_file(path, project, found)
        for rel in set(found) - before:
            if rel.endswith(".py"):
                todo.extend(_imports(project / rel))
    _cover_shadows(base, project, found)


def _imports(path: Path) -> list[str]:
    """Top-level names a Python file imports (absolute imports only)."""
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.split(".")[0])
    return names


def _real_module(name: str, base: Path) -> bool:
    """Would ``name`` import from somewhere other than ``base`` (stdlib, installed)?"""
    if name in sys.stdlib_module_names or name in sys.builtin_module_names:
        return True
    skip = {"", ".", os.path.normpath(base), os.getcwd()}
    path = [p for p in sys.path if os.path.normpath(p or ".") not in skip and p not in skip]
    try:
        return PathFinder.find_spec(name, path) is not None
    except (ImportError, ValueError):
        return False


def _cover_shadows(base: Path, project: Path, found: dict[str, str]) -> None:
    """Entries of ``base`` named like a real module: imported instead of it from there."""
    try:
        packages = [p for p in base.iterdir() if (p / "__init__.py").is_file()]
        packages += [p for p in base.iterdir() if (p / "__init__.pyc").is_file()]
    except OSError:
        packages = []
    for path in [*_walk(base, False), *packages]:
        stem = path.name.split(".")[0]
        is_module = path.is_dir() or path.suffix in {".py", ".pyc", ".so", ".pyd"}
        if is_module and stem.isidentifier() and _real_module(stem, base):
            if path.is_dir():
                _cover_directory(path, project, found)
            else:
                _cover_file(path, project, found)


def referenced_files(command: str, project: Path) -> dict[str, str]:
    """Every project file ``command`` runs or reads as code, hashed (see the module doc)."""
    project = project.resolve()
    found: dict[str, str] = {}
    _refer(command, project, found, depth=0)
    return found


def _refer(command: str, project: Path, found: dict[str, str], depth: int) -> None:
    base = project
    for words in _simple_commands(command):
        words = [_expand(w, project) for w in words]
        program = os.path.basename(words[0])
        if program == "cd" and len(words) > 1:
            target = Path(words[1].replace("\0", ""))
            base = Path(os.path.normpath(target if target.is_absolute() else base / target))
            continue
        for name in _BUILD_TOOLS.get(program, ()):
            _cover_file(base / name, project, found)
        for i, word in enumerate(words):
            if depth < 3 and any(c.isspace() for c in word):
                _refer(word, project, found, depth + 1)  # sh -c "…", bash -c '…'
                continue
            if program.startswith(_PYTHONS) and i > 0 and words[i - 1] == "-m":
                _module_files(word, base, project, found)
                continue
            for candidate in (word, word.partition("=")[2] if "=" in word else ""):
                if candidate and not candidate.startswith("-") and "\0" not in candidate:
                    _cover_named(candidate, base, project, found)


def _cover_named(word: str, base: Path, project: Path, found: dict[str, str]) -> None:
    """A word that names a file (relative to ``base`` or the project): it and its folder."""
    try:
        path = Path(word).expanduser()
    except RuntimeError:  # ~user that does not exist
        path = Path(word)
    for full in (path,) if path.is_absolute() else (base / path, project / path):
        try:
            named = full.is_file() or full.is_symlink()
        except (OSError, ValueError):
            named = False
        if named:
            _cover_file(full, project, found)
            if os.path.normpath(full.parent) != os.path.normpath(project):
                _cover_directory(full.parent, project, found)
            else:
                _cover_root_script(full, project, found)
            return


_CODE_SUFFIXES = frozenset({".sh", ".bash", ".py", ".pl", ".rb", ".js", ".mk"})


def _cover_root_script(script: Path, project: Path, found: dict[str, str]) -> None:
    """A script in the project root: its folder is the whole project, so not all of it is
    covered (every edit would refuse it), only what it can load: for Python the project
    modules it imports and every root module shadowing a real one, else the code files it
    names. :func:`_unseen_reads` warns that the rest is not covered."""
    text_is_python = script.suffix == ".py" or _shebang(script).endswith(("python", "python3"))
    if text_is_python:
        for name in _imports(script):
            _module_files(name, project, project, found)
        _cover_shadows(project, project, found)
        return
    for word in _mentions(script):
        path = Path(os.path.normpath(project / word))
        if path.suffix in _CODE_SUFFIXES and path.is_file():
            _cover_file(path, project, found)


def _shebang(path: Path) -> str:
    if not path.is_file():
        return ""  # a FIFO would block the read
    try:
        with path.open("rb") as f:
            first = f.readline(200).decode("utf-8", "replace").strip()
    except OSError:
        return ""
    return first.split()[-1] if first.startswith("#!") and first.split() else ""


def blind_spots(command: str) -> tuple[str, ...]:
    """What the fingerprint of ``command`` cannot follow, one short phrase each."""
    notes: list[str] = []
    for words in _simple_commands(command):
        program = os.path.basename(words[0])
        if program in _BUILD_TOOLS:
            notes.append(f"`{program}` runs recipes whose dependencies are not covered")
        elif program in {"eval", "source", "."} and any("$" in w for w in words[1:]):
            notes.append(f"`{program}` of a variable: what it runs is not covered")
    if "$(" in command or "`" in command:
        notes.append("command substitution: what it runs is not covered")
    return tuple(dict.fromkeys(notes))


_MENTION = re.compile(r"[\w.-]*/[\w./-]+|[\w-]+\.(?:sh|py|bash|pl|rb|js|mk|toml|json|ya?ml|cfg)\b")
_MENTIONS: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {}


def _mentions(path: Path) -> tuple[str, ...]:
    """Path-like words in a small text file (cached while its stat is the same)."""
    try:
        st = path.stat()
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        cached = _MENTIONS.get(str(path))
        if cached is not None and cached[0] == key:
            return cached[1]
        found: tuple[str, ...] = ()
        if st.st_size <= 256 * 1024:
            text = read_limited(path).decode("utf-8", "replace")
            found = tuple(dict.fromkeys(_MENTION.findall(text)))
    except OSError:
        return ()
    _MENTIONS[str(path)] = (key, found)
    return found


def _unseen_reads(command: str, files: Mapping[str, str], project: Path) -> tuple[str, ...]:
    """Project files a covered script mentions that its fingerprint does not cover, and the
    scripts ``command`` names in the project root (only what they load is covered)."""
    notes = [
        f"`{rel}` is in the project root: files beside it are not covered"
        for rel in sorted(files)
        if "/" not in rel and rel in command
    ]
    for rel in sorted(files):
        if files[rel].startswith("->"):
            continue
        script = project / rel
        for word in _mentions(script):
            for base in (script.parent, project):
                target = Path(os.path.normpath(base / word))
                other = _lexically_inside(target, project)
                if other is not None and other not in files and target.is_file():
                    notes.append(f"`{rel}` mentions {other}, whose changes are not covered")
                    break
    return tuple(dict.fromkeys(notes))[:5]


def command_item(key: str, command: str, project: Path, **definition: object) -> TrustItem:
    """An item for a shell command (plus any named fields), with the files it refers to."""
    fields = {"command": command, **{k: v for k, v in definition.items() if v is not None}}
    files = referenced_files(command, project)
    return TrustItem(
        key=key,
        definition=json.dumps(fields, sort_keys=True, default=str),
        files=files,
        blind=blind_spots(command) + _unseen_reads(command, files, project.resolve()),
    )


# --- the project's files that define what runs -------------------------------------------------


def _bytes_item(key: str, path: Path) -> TrustItem:
    return TrustItem(key=key, definition="unreadable or malformed", files={key: _safe_hash(path)})


def _safe_hash(path: Path) -> str:
    try:
        return _sha256_file(path)
    except OSError as exc:
        return f"unreadable: {exc.strerror}"


def _read_toml(path: Path) -> dict[str, Any] | None:
    try:
        return tomllib.loads(read_limited_text(path, limit=CONFIG_LIMIT))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return None


def hooks_file_items(path: Path, project: Path) -> list[TrustItem]:
    """One item per ``[[hooks]]`` entry of a hooks.toml (none when the file is absent).

    The file is read as TOML only; validation is the hooks layer's job, so a broken file still
    yields items for what it says (and its own bytes as one item, so any edit is seen).
    """
    path, project = _rebase(path, project)
    if not os.path.lexists(path):
        return []
    data = _read_toml(path)
    entries = data.get("hooks") if data is not None else None
    if not isinstance(entries, list):
        return [_bytes_item(path.name, path)]
    items: list[TrustItem] = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            entry = {"entry": repr(entry)}
        event = entry.get("event")
        key = f"{path.name}[{index}]" + (f" {event}" if isinstance(event, str) else "")
        command = entry.get("command")
        definition = {k: v for k, v in entry.items() if k != "command"}
        items.append(
            command_item(key, command if isinstance(command, str) else "", project, **definition)
        )
    return items


def directory_items(directory: Path, project: Path) -> list[TrustItem]:
    """One item per file below ``directory`` (lifecycle hooks and what they call)."""
    directory, project = _rebase(directory, project)
    if not directory.is_dir():
        return []
    items: list[TrustItem] = []
    for path in _walk(directory, True):
        found: dict[str, str] = {}
        _cover_file(path, project, found)
        for rel in found:
            executable = os.access(path, os.X_OK)
            items.append(TrustItem(rel, json.dumps({"executable": executable}), found))
    return items


def python_module_items(names: Sequence[str], project: Path) -> list[TrustItem]:
    """Items for ``--hooks-module`` names found in the project (imported from its root)."""
    project = project.resolve()
    items: list[TrustItem] = []
    for name in names:
        files: dict[str, str] = {}
        _module_files(name, project, project, files)
        top = name.split(".")[0]
        mine = [
            p for p in map(Path, files) if top in (p.parts[0].split(".")[0], p.name.split(".")[0])
        ]
        if mine:
            items.append(TrustItem(key=f"hooks module {name}", definition=name, files=files))
    return items


# --- Claude Code settings ------------------------------------------------------------------------

# Settings keys that neither run a program nor send anything anywhere; every other key (hooks,
# apiKeyHelper, env, statusLine, plugins, MCP switches, helpers, unknown ones) is an item.
_CLAUDE_HARMLESS = frozenset(
    {
        "$schema",
        "model",
        "includeCoAuthoredBy",
        "cleanupPeriodDays",
        "outputStyle",
        "spinnerTipsEnabled",
        "alwaysThinkingEnabled",
        "language",
    }
)


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _claude_key_is_item(key: str, value: object) -> bool:
    if key in _CLAUDE_HARMLESS:
        return False
    if key == "permissions" and isinstance(value, dict):
        return set(value) - {"deny"} != set()  # deny only tightens
    return True


def claude_settings_items(path: Path, project: Path, label: str) -> list[TrustItem]:
    """Items of one Claude Code settings file: each key that runs or redirects."""
    if not (path.is_file() or path.is_symlink()):
        return []
    try:
        data: Any = json.loads(read_limited_text(path, limit=CONFIG_LIMIT))
    except (OSError, ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        return [_bytes_item(label, path)]
    items: list[TrustItem] = []
    for key, value in sorted(data.items()):
        if not _claude_key_is_item(key, value):
            continue
        files: dict[str, str] = {}
        blind: list[str] = []
        for text in _strings(value):
            files.update(referenced_files(text, project))
            blind += blind_spots(text)
        definition = json.dumps(value, sort_keys=True, default=str)
        items.append(TrustItem(f"{label} {key}", definition, files, tuple(dict.fromkeys(blind))))
    return items


def claude_items(project: Path, extra_args: str = "") -> list[TrustItem]:
    """What Claude Code would run or obey from the project: both settings files, ``.mcp.json``,
    and the ``--settings``/``--mcp-config`` files ``extra_args`` names."""
    project = project.resolve()
    items: list[TrustItem] = []
    for name in ("settings.json", "settings.local.json"):
        path = project / ".claude" / name
        items += claude_settings_items(path, project, f".claude/{name}")
    mcp = project / ".mcp.json"
    if mcp.is_file() or mcp.is_symlink():
        files: dict[str, str] = {}
        _cover_file(mcp, project, files)
        items.append(TrustItem(".mcp.json", "mcp servers", files))
    words = _split(extra_args)
    for i, word in enumerate(words):
        flag, _, value = word.partition("=")
        if flag in {"--settings", "--mcp-config"} and not value and i + 1 < len(words):
            value = words[i + 1]
        if flag == "--settings" and value and not value.lstrip().startswith("{"):
            path = Path(value) if Path(value).is_absolute() else project / value
            items += claude_settings_items(path, project, f"--settings {value}")
    return items


def agent_config_items(
    project: Path, files: Sequence[str] = (), folders: Sequence[str] = ()
) -> list[TrustItem]:
    """What an agent CLI loads from the project by itself: each of ``files`` there (its own
    config, which may name servers or plugins to start) and every file below ``folders`` (its
    plugins, extensions, commands), all relative to the project."""
    project = project.resolve()
    items: list[TrustItem] = []
    for name in files:
        path = project / name
        if path.is_file() or path.is_symlink():
            found: dict[str, str] = {}
            _cover_file(path, project, found)
            items.append(TrustItem(name, "the agent's own config", found))
    for name in folders:
        items += directory_items(project / name, project)
    return items


# --- the project's own config ------------------------------------------------------------------


_NO_DEFAULT = object()


def loosens(key: str, value: object, default: object = _NO_DEFAULT) -> bool:
    """Does a project's ``[security] key = value`` loosen a limit (so it needs trust)?

    The default (what a project without the key gets) never loosens. A project may tighten
    without trust: turn the sandbox on, network off, pass nothing, allow no path. Anything
    else, unknown keys included, loosens.
    """
    if value == default:
        return False
    if key in {"pass_env", "allow_paths", "writable"}:
        return value not in ("", [], None)
    if key == "sandbox":
        return not (value is True or value in {"bwrap", "auto", "on"})
    if key == "sandbox_network":
        return value not in (False, "false", "no", "off", "0", 0)
    return True


def config_items(
    project: Path,
    relpath: str = ".fresher/config.toml",
    *,
    security_defaults: Mapping[str, object],
) -> list[TrustItem]:
    """Items of the project's config file: gate, extra_args, profiles, loosening security,
    paths that lead out of the project. ``security_defaults`` are the ``[security]`` values a
    project without the key gets (the loop's config model holds them; they never loosen)."""
    project = project.resolve()
    path = project / relpath
    if not (path.is_file() or path.is_symlink()):
        return []
    data = _read_toml(path)
    if data is None:
        return [_bytes_item(relpath, path)]
    items: list[TrustItem] = []
    limits = data.get("limits", {})
    agent = data.get("agent", {})
    security = data.get("security", {})
    if isinstance(limits, dict) and limits.get("gate"):
        items.append(command_item("[limits] gate", str(limits["gate"]), project))
    if isinstance(agent, dict):
        if agent.get("extra_args"):
            items.append(command_item("[agent] extra_args", _words(agent["extra_args"]), project))
        profiles = agent.get("profiles")
        if isinstance(profiles, dict):
            for name, profile in sorted(profiles.items()):
                text = json.dumps(profile, sort_keys=True, default=str)
                files: dict[str, str] = {}
                for s in _strings(profile):
                    files.update(referenced_files(s, project))
                items.append(TrustItem(f"[agent.profiles.{name}]", text, files))
    paths = data.get("paths", {})
    for key, value in sorted(paths.items() if isinstance(paths, dict) else []):
        # Lifecycle hooks or records outside the project are outside what trust can see;
        # resolved, so that a committed link (logs -> /elsewhere) counts as outside.
        where = (project / str(value)).resolve()
        if not isinstance(value, str) or _lexically_inside(where, project.resolve()) is None:
            items.append(TrustItem(f"[paths] {key}", json.dumps(value, default=str)))
    if isinstance(security, dict):
        for key, value in sorted(security.items()):
            if loosens(key, value, security_defaults.get(key, _NO_DEFAULT)):
                text = json.dumps(value, sort_keys=True, default=str)
                items.append(TrustItem(f"[security] {key}", text))
    elif security:
        items.append(TrustItem("[security]", repr(security)))
    return items


def fleet_items(path: Path, project: Path) -> list[TrustItem]:
    """A fleet file's commands: ``[fleet] gate`` and each loop's ``agent_command``."""
    path, project = _rebase(path, project)
    data = _read_toml(path)
    if data is None:
        return [_bytes_item(path.name, path)] if path.is_file() else []
    items: list[TrustItem] = []
    fleet = data.get("fleet")
    if isinstance(fleet, dict) and fleet.get("gate"):
        items.append(command_item(f"{path.name} [fleet] gate", str(fleet["gate"]), project))
    loops = data.get("loop")
    for index, loop in enumerate(loops if isinstance(loops, list) else []):
        if isinstance(loop, dict) and loop.get("agent_command"):
            name = loop.get("name", index)
            key = f"{path.name} loop[{name}] agent_command"
            items.append(command_item(key, str(loop["agent_command"]), project))
    return items


def fleet_files(project: Path) -> list[Path]:
    """The project's top-level TOML files that are fleet files (a ``[fleet]`` table)."""
    found = []
    for path in sorted(project.glob("*.toml")):
        data = _read_toml(path)
        if data is not None and isinstance(data.get("fleet"), dict) and "loop" in data:
            found.append(path)
    return found


def _words(value: object) -> str:
    if isinstance(value, list):
        return shlex.join(str(v) for v in value)
    return str(value)


def agent_trust_items(
    project: Path, hooks_file: Path | None = None, hooks_modules: Sequence[str] = ()
) -> list[TrustItem]:
    """What ``forgeflare run`` would run from the project: hooks.toml and hook modules."""
    path = hooks_file if hooks_file is not None else project / ".forgeflare" / "hooks.toml"
    return [*hooks_file_items(path, project), *python_module_items(hooks_modules, project)]
