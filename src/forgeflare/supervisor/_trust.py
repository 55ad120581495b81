"""What a loop would run from a project, for trust.

The loop runs more than the agent does: lifecycle hooks, the agent, gate and notify commands,
``[agent] extra_args``, loosening ``[security]`` keys and, when the agent is Claude Code, the
project's Claude Code settings and MCP servers. All of it is gathered here from
:mod:`forgeflare.trust` and checked before anything starts and before every iteration.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from forgeflare.supervisor._config import LoopConfig, SecuritySection
from forgeflare.trust import (
    TrustItem,
    agent_trust_items,
    claude_items,
    command_item,
    config_items,
    directory_items,
)

__all__ = [
    "GATE_KEYS",
    "GATE_NOTE",
    "describe_items",
    "hooks_modules",
    "loop_trust_items",
    "security_defaults",
    "uses_claude_code",
]


def security_defaults() -> dict[str, object]:
    """``[security]`` defaults, from the config model (the one home of them): a project that
    sets a key to its default loosens nothing."""
    return {
        name: info.get_default(call_default_factory=True)
        for name, info in SecuritySection.model_fields.items()
    }


def hooks_modules(argv: Sequence[str]) -> list[str]:
    """The Python hook modules an agent command names with ``--hooks-module``."""
    names = []
    for i, word in enumerate(argv):
        if word == "--hooks-module" and i + 1 < len(argv):
            names.append(argv[i + 1])
        elif word.startswith("--hooks-module="):
            names.append(word.partition("=")[2])
    return names


def uses_claude_code(config: LoopConfig) -> bool:
    """Is the loop's agent Claude Code (whose project hooks then run too)?"""
    backend = getattr(config.agent, "backend", "")
    words = config.agent.command.split()
    return backend == "claude" or (bool(words) and os.path.basename(words[0]) == "claude")


def loop_trust_items(
    project: Path,
    config: LoopConfig,
    *,
    project_command: bool = True,
    every_backend: bool = False,
) -> list[TrustItem]:
    """Every project-supplied thing ``forgeflare loop`` with ``config`` would run or obey.

    ``project_command=False`` when the agent command came from the user (a flag or a
    variable), not from the project's config.toml: what the user typed is theirs.
    ``every_backend`` adds what only Claude Code would run (``forgeflare trust`` shows it
    whatever the backend, since ``--backend claude`` may come later).
    """
    # The agent imports the hook modules its command names (e.g. [agent] extra_args).
    modules = hooks_modules(config.agent_argv(sys.executable))
    items = agent_trust_items(project, hooks_modules=modules)
    if config.hooks.enabled:
        items += directory_items(project / config.paths.hooks_dir, project)
    if config.agent.command and project_command:
        items.append(command_item("[agent] command", config.agent.command, project))
    notify = getattr(getattr(config, "notify", None), "command", "")
    if notify:
        items.append(command_item("[notify] command", notify, project))
    items += config_items(project, security_defaults=security_defaults())
    if every_backend or uses_claude_code(config):
        items += claude_items(project, config.agent.extra_args)
    return items


GATE_KEYS = frozenset({"[limits] gate", "stop-hook gate"})
"""Trust items that are gates: commands that run the project's own code."""
GATE_NOTE = (
    "runs the project's tests: code the agent can change (in forgeflare's sandbox when "
    "bubblewrap works, without secrets)"
)
"""What ``forgeflare trust`` says under a gate, so trusting it is trusting what it imports."""


def describe_items(items: list[TrustItem], project: Path, lines: int = 3) -> list[str]:
    """Human lines for ``forgeflare trust``: each item, what its fingerprint cannot see, its
    files' hashes and (the first time a file is listed) its first lines."""
    out: list[str] = []
    seen: set[str] = set()
    for item in items:
        out.append(f"• {item.key}: {item.definition}")
        if item.key in GATE_KEYS:
            out.append(f"    note: {GATE_NOTE}")
        out.extend(f"    warning: {note}" for note in item.blind)
        for rel, digest in sorted(item.files.items()):
            hashed = len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)
            shown = f"sha256 {digest[:16]}" if hashed else digest  # else what it is, in words
            out.append(f"    {rel}  {shown}")
            if rel in seen:
                continue
            seen.add(rel)
            try:
                with (project / rel).open(encoding="utf-8", errors="replace") as fh:
                    head = [fh.readline().rstrip("\n") for _ in range(lines)]
            except OSError:
                head = []
            out.extend(f"      | {line}" for line in head if line)
    return out
