"""Supervisor settings: precedence, one-line errors, durations, the rendered defaults."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare._errors import ConfigError
from forgeflare.supervisor.config import (
    LoopConfig,
    default_config_toml,
    default_prompt,
    format_duration,
    load_config,
    parse_duration,
)


def write_config(tmp_path: Path, text: str) -> None:
    (tmp_path / ".fresher").mkdir(exist_ok=True)
    (tmp_path / ".fresher" / "config.toml").write_text(text)


def test_defaults_without_file(tmp_path: Path) -> None:
    loaded = load_config(tmp_path, env={})
    assert loaded.config == LoopConfig()
    assert loaded.sources == {}


def test_default_config_toml_loads_back_to_defaults(tmp_path: Path) -> None:
    text = default_config_toml()
    data = tomllib.loads(text)
    assert set(data) == {
        "fresher",
        "paths",
        "hooks",
        "agent",
        "limits",
        "finish",
        "notify",
        "security",
    }
    write_config(tmp_path, text)
    loaded = load_config(tmp_path, env={})
    assert loaded.config == LoopConfig()
    assert loaded.warnings == []
    # every key has a comment line above it
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "=" in line and not line.startswith("#"):
            assert lines[i - 1].startswith("# "), line


def test_precedence_cli_env_file_default(tmp_path: Path) -> None:
    write_config(
        tmp_path, "[fresher]\nmax_iterations = 5\nmode = 'planning'\n[limits]\nmax_runtime = '1h'\n"
    )
    env = {"FRESHER_MAX_ITERATIONS": "7", "FRESHER_MAX_RUNTIME": "90s"}
    loaded = load_config(tmp_path, env=env, cli={"fresher.max_iterations": 9})
    cfg = loaded.config
    assert cfg.fresher.max_iterations == 9
    assert cfg.limits.max_runtime == 90
    assert cfg.fresher.mode == "planning"
    assert cfg.hooks.timeout == 30
    assert loaded.sources["fresher.max_iterations"] == "command line"
    assert loaded.sources["limits.max_runtime"] == "environment"
    assert loaded.sources["fresher.mode"] == ".fresher/config.toml"
    # None on the command line means "not given"
    assert (
        load_config(
            tmp_path, env={}, cli={"fresher.max_iterations": None}
        ).config.fresher.max_iterations
        == 5
    )


@pytest.mark.parametrize(
    ("env", "cli", "file", "message"),
    [
        (
            {"FRESHER_MAX_ITERATIONS": "abc"},
            {},
            "",
            "FRESHER_MAX_ITERATIONS=abc (environment): not an integer",
        ),
        (
            {"FRESHER_HOOK_TIMEOUT": "soon"},
            {},
            "",
            "FRESHER_HOOK_TIMEOUT=soon (environment): not a duration",
        ),
        (
            {"FRESHER_HOOKS_ENABLED": "perhaps"},
            {},
            "",
            "FRESHER_HOOKS_ENABLED=perhaps (environment): not a boolean",
        ),
        ({"FRESHER_MODE": "dreaming"}, {}, "", "FRESHER_MODE=dreaming (environment)"),
        (
            {},
            {"limits.iteration_timeout": "x"},
            "",
            "--iteration-timeout=x (command line): not a duration",
        ),
        (
            {},
            {},
            "[limits]\nmax_consecutive_errors = 0\n",
            "[limits] max_consecutive_errors = 0 (.fresher/config.toml)",
        ),
        (
            {},
            {},
            "[fresher]\nmax_iterations = 'x'\n",
            "[fresher] max_iterations = 'x' (.fresher/config.toml): not an integer",
        ),
        (
            {"FRESHER_AGENT_COMMAND": 'foo "bar'},
            {},
            "",
            'FRESHER_AGENT_COMMAND=foo "bar (environment)',
        ),
        (
            {},
            {},
            "[agent]\ncommand = 'foo \"bar'\n",
            "[agent] command = 'foo \"bar' (.fresher/config.toml)",
        ),
        ({}, {}, "[fresher\n", ".fresher/config.toml: invalid TOML"),
        ({}, {}, "fresher = 3\n", "[fresher] in .fresher/config.toml: not a table"),
    ],
)
def test_bad_values_name_key_and_source(
    tmp_path: Path, env: dict[str, str], cli: dict[str, object], file: str, message: str
) -> None:
    if file:
        write_config(tmp_path, file)
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, env=env, cli=cli)
    assert message in str(info.value)
    assert "\n" not in str(info.value).strip()
    assert info.value.exit_code == 2


def test_unknown_keys_warn_and_are_ignored(tmp_path: Path) -> None:
    write_config(tmp_path, "[fresher]\nfoo = 1\nmax_iteration = 3\n")
    loaded = load_config(tmp_path, env={})
    assert loaded.warnings == [
        ".fresher/config.toml: unknown key [fresher] foo (ignored)",
        ".fresher/config.toml: unknown key [fresher] max_iteration (ignored); "
        "did you mean 'max_iterations'?",
    ]


def test_unknown_sections_are_an_error_with_the_closest_name(tmp_path: Path) -> None:
    write_config(
        tmp_path,
        "[docker]\nimage = 'x'\n[limit]\nmax_cost = 1\n[Fresher]\nmode = 'building'\n",
    )
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, env={})
    assert str(info.value).splitlines() == [
        ".fresher/config.toml: unknown section [docker]",
        ".fresher/config.toml: unknown section [limit]; did you mean 'limits'?",
        ".fresher/config.toml: unknown section [Fresher]; did you mean 'fresher'?",
    ]
    assert info.value.exit_code == 2


def test_spec_variables_are_honoured(tmp_path: Path) -> None:
    env = {
        "FRESHER_HOOK_TIMEOUT": "5",
        "FRESHER_HOOKS_ENABLED": "false",
        "FRESHER_HOOK_FAIL_BEHAVIOR": "abort",
        "FRESHER_HOOK_STARTED_ENABLED": "0",
        "FRESHER_HOOK_NEXT_ITERATION_ENABLED": "no",
        "FRESHER_HOOK_FINISHED_ENABLED": "off",
    }
    hooks = load_config(tmp_path, env=env).config.hooks
    assert hooks.timeout == 5
    assert not hooks.enabled
    assert hooks.fail_behavior == "abort"
    assert not (hooks.started_enabled)
    assert not (hooks.next_iteration_enabled)
    assert not (hooks.finished_enabled)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("15m", 900),
        ("2h", 7200),
        ("1d", 86400),
        ("500ms", 0.5),
        ("12", 12),
        ("0.25", 0.25),
        (" 3 s ", 3),
        (7, 7),
        (1.5, 1.5),
    ],
)
def test_parse_duration(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("bad", ["", "1x", "m", "-1", "1h30m", True, -2, None])
def test_parse_duration_rejects(bad: object) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(bad)


@given(
    st.one_of(
        st.integers(0, 10**7), st.floats(0, 10**6, allow_nan=False).map(lambda f: round(f, 3))
    )
)
def test_format_duration_round_trips(seconds: float) -> None:
    assert parse_duration(format_duration(seconds)) == pytest.approx(seconds)


def test_agent_argv() -> None:
    cfg = LoopConfig()
    assert cfg.agent_argv("py") == ["py", "-P", "-m", "forgeflare", "run"]
    assert cfg.final_expected
    cfg = LoopConfig.model_validate({"fresher": {"model": "m1"}})
    assert cfg.agent_argv("py")[-2:] == ["--model", "m1"]
    cfg = LoopConfig.model_validate({"agent": {"command": "claude -p 'a b'"}})
    assert cfg.agent_argv("py") == ["claude", "-p", "a b"]
    assert not cfg.final_expected


def test_default_prompts() -> None:
    assert "PLANNING" in default_prompt("planning")
    assert "- [ ]" in default_prompt("building")
    with pytest.raises(ConfigError):
        default_prompt("other")
