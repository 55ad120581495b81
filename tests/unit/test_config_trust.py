"""What a loop would run from a project, gathered for trust: the backends whose project files
count, the agent and notify commands (the agent's only when the project set it), lifecycle
hooks, and ``[security]`` keys that loosen the defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from forgeflare.supervisor import LoopConfig
from forgeflare.supervisor.backends import BACKENDS
from forgeflare.supervisor.config import security_defaults
from forgeflare.supervisor.config._trust import hooks_modules, loop_trust_items, trusted_backends
from project_support import write_files


def _names(config: dict[str, Any], **options: bool) -> list[str]:
    backends = trusted_backends(LoopConfig.model_validate(config), **options)
    return [name for name, cls in sorted(BACKENDS.items()) if any(type(b) is cls for b in backends)]


@pytest.mark.parametrize(
    ("config", "names"),
    [
        ({}, ["forgeflare"]),
        ({"agent": {"backend": "codex"}}, ["codex"]),
        ({"agent": {"command": "my-agent --fast"}}, ["command"]),
        # a command that starts Claude Code runs Claude Code's project hooks too
        ({"agent": {"command": "/usr/local/bin/claude --verbose"}}, ["claude", "command"]),
        ({"agent": {"backend": "claude"}}, ["claude"]),
    ],
)
def test_the_backends_whose_project_files_count(config: dict[str, Any], names: list[str]) -> None:
    assert _names(config) == names


def test_every_backend_when_asked() -> None:
    assert _names({}, every_backend=True) == sorted(BACKENDS)


def test_the_defaults_are_the_config_model_s() -> None:
    defaults = security_defaults()
    assert defaults["sandbox"] == "auto"
    assert defaults["pass_env"] == []
    assert set(defaults) == set(LoopConfig().security.model_dump())


def _keys(project: Path, config: dict[str, Any], **options: bool) -> list[str]:
    return [i.key for i in loop_trust_items(project, LoopConfig.model_validate(config), **options)]


def test_the_agent_command_counts_only_when_the_project_set_it(tmp_path: Path) -> None:
    config = {"agent": {"command": "my-agent"}, "notify": {"command": "sh notify.sh"}}
    assert _keys(tmp_path, config) == ["[agent] command", "[notify] command"]
    assert _keys(tmp_path, config, project_command=False) == ["[notify] command"]
    assert _keys(tmp_path, {}) == []


def test_lifecycle_hooks_count_unless_switched_off(tmp_path: Path) -> None:
    write_files(tmp_path, {".fresher/hooks/started": "#!/bin/sh\necho hi\n"})
    with_hooks = _keys(tmp_path, {})
    assert with_hooks
    assert all(".fresher/hooks" in key for key in with_hooks)
    assert _keys(tmp_path, {"hooks": {"enabled": False}}) == []


@pytest.mark.parametrize(
    ("setting", "counts"),
    [('sandbox = "off"', True), ('sandbox = "auto"', False), ("pass_env = []", False)],
)
def test_a_security_key_counts_only_when_it_loosens(
    tmp_path: Path, setting: str, counts: bool
) -> None:
    write_files(tmp_path, {".fresher/config.toml": f"[security]\n{setting}\n"})
    keys = _keys(tmp_path, {})
    assert any(key.startswith("[security]") for key in keys) is counts


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], []),
        (["python", "-m", "forgeflare", "run"], []),
        (["forgeflare", "run", "--hooks-module", "a"], ["a"]),
        (["x", "--hooks-module=a.b", "--hooks-module", "c"], ["a.b", "c"]),
        (["x", "--hooks-module"], []),  # a dangling flag: the agent itself reports it
        (["x", "--hooks-modules", "a"], []),
    ],
)
def test_hooks_modules_in_an_agent_argv(argv: list[str], expected: list[str]) -> None:
    assert hooks_modules(argv) == expected
