"""``forgeflare init --codex`` and ``forgeflare schema report`` as a user runs them (in the test
process)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest

from cli_inprocess import run_cli
from forgeflare.supervisor import load_config

REPORT_FIELDS = {
    "outcome",
    "transient",
    "stop_reason",
    "tokens",
    "cost_usd",
    "resets_at",
    "turns",
    "session_id",
    "model",
}
OUTCOMES = {
    "ok",
    "agent_error",
    "api_error",
    "rate_limited",
    "refused",
    "killed",
    "interrupted",
    "timed_out",
    "budget",
    "quota",
}


def test_init_codex_makes_codex_the_agent(tmp_path: Path) -> None:
    project = tmp_path / "codex-project"
    done = run_cli(["init", "--codex", str(project)], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    config_text = (project / ".fresher" / "config.toml").read_text()
    assert 'backend = "codex"' in config_text
    assert "permission_mode" not in config_text  # a Claude Code flag Codex never reads
    cfg = load_config(project, env={}).config
    assert cfg.backend_name == "codex"
    assert cfg.agent_argv(sys.executable)[:4] == [
        "codex",
        "exec",
        "--json",
        "--skip-git-repo-check",
    ]
    # Codex has no Claude Code Stop hook to install.
    assert not (project / ".claude").exists()
    # Again: the config is kept, with the hint to set the backend by hand.
    again = run_cli(["init", "--codex", str(project)], cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "exists, kept    .fresher/config.toml (set [agent] backend yourself)" in again.stdout


def test_init_with_both_agents_is_one_clear_error(tmp_path: Path) -> None:
    done = run_cli(["init", "--claude", "--codex", str(tmp_path / "p")], cwd=tmp_path)
    assert done.returncode == 2  # a usage error, as everywhere
    assert done.stderr.strip() == "forgeflare: error: --claude and --codex: choose one agent"
    assert not (tmp_path / "p" / ".fresher").exists()


def test_schema_report_is_a_json_schema_with_the_report_fields(tmp_path: Path) -> None:
    done = run_cli(["schema", "report"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    schema = json.loads(done.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert set(schema["properties"]) >= REPORT_FIELDS
    assert set(schema["properties"]["outcome"]["enum"]) == OUTCOMES
    tokens = schema["$defs"]["Tokens"]["properties"]
    assert set(tokens) == {"input", "output", "cache_read", "cache_write"}
    validator = jsonschema.Draft202012Validator(schema)
    # The README's command-agent example is a valid report.
    example = {
        "outcome": "ok",
        "tokens": {"input": 1200, "output": 300},
        "model": "claude-sonnet-4-5",
    }
    validator.validate(example)
    limited = {"outcome": "rate_limited", "resets_at": "2026-11-24T03:12:00Z", "cost_usd": None}
    validator.validate(limited)
    for bad in ({"outcome": "fine"}, {"tokens": {"input": -1}}, {"turns": "three"}):
        with pytest.raises(jsonschema.ValidationError):
            validator.validate(bad)


def test_schema_of_something_else_is_one_line(tmp_path: Path) -> None:
    done = run_cli(["schema", "nope"], cwd=tmp_path)
    assert done.returncode == 2
    assert "schema 'nope': unknown; expected report" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
