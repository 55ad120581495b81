"""The settings a resumed run goes on with (:func:`kept_settings`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from forgeflare._errors import ConfigError
from forgeflare.supervisor import LoopConfig, load_config
from forgeflare.supervisor.records import RunSettings
from forgeflare.supervisor.run._resume import kept_settings

STARTED = LoopConfig.model_validate(
    {
        "agent": {"command": "./agent.sh"},
        "fresher": {"max_iterations": 3},
        "limits": {"max_cost": 1.0, "gate": "make test", "max_runtime": 7200},
    }
)
FLAGS = {"limits.max_cost": "--max-cost", "agent.command": "--agent-cmd"}


def keep(tmp_path: Path, cli: dict[str, object], env: dict[str, str] | None = None, **kw: object):
    stored = RunSettings(config=STARTED.model_dump(mode="json"), task="the task", pass_env=["A"])
    loaded = load_config(tmp_path, env=env or {}, cli=cli)
    args: dict[str, object] = {"task": None, "pass_env": ()} | kw
    return kept_settings(stored, loaded, run_id="r1", flags=FLAGS, **args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "cli",
    [
        {},
        {"limits.max_cost": 1},
        {"agent.command": "./agent.sh", "fresher.max_iterations": 3},
        {"limits.max_runtime": "2h"},
    ],
)
def test_no_flag_or_the_same_value_keeps_every_setting(tmp_path: Path, cli: dict[str, object]):
    assert keep(tmp_path, cli) == STARTED


def test_variables_and_config_toml_do_not_change_a_resumed_run(tmp_path: Path) -> None:
    (tmp_path / ".fresher").mkdir()
    (tmp_path / ".fresher" / "config.toml").write_text("[limits]\nmax_cost = 9\n")
    assert keep(tmp_path, {}, env={"FRESHER_MAX_ITERATIONS": "50"}) == STARTED


@pytest.mark.parametrize(
    ("cli", "kw", "said"),
    [
        ({"limits.max_cost": 5}, {}, "--max-cost 5: run r1 started with 1;"),
        ({"agent.command": "x"}, {}, "--agent-cmd 'x': run r1 started with './agent.sh';"),
        ({"limits.max_runtime": "1h"}, {}, "--max-runtime 1h: run r1 started with 2h;"),
        ({"fresher.mode": "planning"}, {}, "--mode 'planning': run r1 started with 'building';"),
        ({}, {"task": "other"}, "--task: run r1 started with another task;"),
        ({}, {"pass_env": ["B"]}, "--pass-env B: run r1 started without it;"),
    ],
)
def test_a_contradicting_flag_names_both_values(
    tmp_path: Path, cli: dict[str, object], kw: dict[str, object], said: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        keep(tmp_path, cli, **kw)
    assert str(caught.value).startswith(said)
    assert caught.value.exit_code == 2
