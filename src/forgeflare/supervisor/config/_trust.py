"""What a loop would run from a project, for trust.

The loop runs more than the agent does: lifecycle hooks, the agent, gate and notify commands,
``[agent] extra_args``, loosening ``[security]`` keys and what the agent itself would run from
the project (its backend's ``trust_items``: Claude Code's settings and MCP servers). All of it
is gathered here from :mod:`forgeflare.trust` and the backends, and checked before anything
starts and before every iteration.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from forgeflare.supervisor.backends import BACKENDS, Backend
from forgeflare.supervisor.config._config import LoopConfig, SecuritySection
from forgeflare.trust import (
    TrustItem,
    agent_trust_items,
    command_item,
    config_items,
    directory_items,
)

__all__ = [
    "hooks_modules",
    "loop_trust_items",
    "security_defaults",
    "trusted_backends",
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


def trusted_backends(config: LoopConfig, *, every_backend: bool = False) -> list[Backend]:
    """The backends whose agent's own project files the loop with ``config`` needs trusted:
    its backend, and the one whose ``program`` an ``[agent] command`` starts (a ``claude ...``
    command runs Claude Code's project hooks too); ``every_backend``: all registered."""
    words = config.agent.command.split()
    program = os.path.basename(words[0]) if words else ""
    names = [
        name
        for name, cls in sorted(BACKENDS.items())
        if every_backend or name == config.backend_name or (program and cls.program == program)
    ]
    return [config.backend_for(name) for name in names]


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
    ``every_backend`` adds what only another backend's agent would run (``forgeflare trust``
    shows it whatever the backend, since ``--backend`` may choose another later).
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
    for backend in trusted_backends(config, every_backend=every_backend):
        items += backend.trust_items(project, config.agent.extra_args)
    return items
