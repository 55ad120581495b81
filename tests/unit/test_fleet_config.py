"""Fleet files: parsing, one-line errors, durations, near-miss keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet_support import FLEET
from forgeflare.fleet import FleetConfigError, load_fleet_file, parse_fleet_text
from forgeflare.fleet._config import duration_seconds


def test_valid_fleet() -> None:
    fleet = parse_fleet_text(FLEET, Path("FLEET.toml"))
    assert fleet.fleet.parallel == 2
    assert [loop.name for loop in fleet.loop] == ["parser", "docs"]
    assert fleet.branch(fleet.loop[0]) == "forgeflare/night/parser"
    assert fleet.loop[1].runtime_seconds == 1800


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("max_iterations = 10", "max_iterations = -1"), "loop[0] (parser): max_iterations:"),
        (("max_iterations = 10", "maxiterations = 10"), "loop[0] (parser): maxiterations: unknown"),
        (('name = "docs"', 'name = "parser"'), "loop name 'parser' is used twice"),
        (('max_runtime = "30m"', 'max_runtime = "soon"'), "'soon' is not a duration"),
        (('name = "night"', 'name = "Night Shift"'), "fleet.name: lower-case letters"),
        (('name = "docs"', 'name = "Docs"'), "loop[1] (Docs): name: lower-case letters, digits"),
        (('prompt = "Write the docs."', ""), "loop[1] (docs): prompt: missing"),
        (("[fleet]", "[fleet"), "not valid TOML"),
        (("parallel = 2", "paralel = 2"), "fleet.paralel: unknown key; did you mean 'parallel'?"),
        (("max_iterations = 10", "max_iteration = 10"), "did you mean 'max_iterations'?"),
    ],
)
def test_one_line_errors(edit: tuple[str, str], message: str) -> None:
    with pytest.raises(FleetConfigError) as info:
        parse_fleet_text(FLEET.replace(*edit), Path("FLEET.toml"))
    text = str(info.value)
    assert message in text
    assert text.startswith("FLEET.toml")
    assert "\n" not in text


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (90, 90.0),
        (1.5, 1.5),
        ("90", 90.0),
        ("250ms", 0.25),
        ("90s", 90.0),
        ("15m", 900.0),
        ("2h", 7200.0),
        ("1d", 86400.0),
        (" 1.5h ", 5400.0),
    ],
)
def test_durations(value: str | float, seconds: float) -> None:
    assert duration_seconds(value) == seconds


@pytest.mark.parametrize("value", ["", "soon", "2 hours", "-5m", "1w", "h"])
def test_what_is_not_a_duration(value: str) -> None:
    with pytest.raises(ValueError, match="is not a duration"):
        duration_seconds(value)


def test_a_key_far_from_any_known_one_gets_no_suggestion() -> None:
    with pytest.raises(FleetConfigError) as info:
        parse_fleet_text(FLEET.replace("parallel = 2", "zzz = 2"), Path("FLEET.toml"))
    assert "fleet.zzz: unknown key" in str(info.value)
    assert "did you mean" not in str(info.value)


def test_every_mistake_is_listed_one_line_each() -> None:
    text = FLEET.replace("max_iterations = 10", "max_iterations = -1").replace(
        'max_runtime = "30m"', 'max_runtime = "soon"'
    )
    with pytest.raises(FleetConfigError) as info:
        parse_fleet_text(text, Path("FLEET.toml"))
    lines = str(info.value).splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("FLEET.toml: loop[0] (parser): max_iterations:")
    assert lines[1].startswith("FLEET.toml: loop[1] (docs): max_runtime:")


def test_a_command_loop_needs_its_command() -> None:
    text = FLEET.replace('backend = "claude"', 'backend = "command"')
    with pytest.raises(FleetConfigError, match=r"loop\[1\] \(docs\): backend 'command' needs"):
        parse_fleet_text(text, Path("FLEET.toml"))
    fleet = parse_fleet_text(text + 'agent_command = "true"\n', Path("FLEET.toml"))
    assert fleet.loop[1].agent_command == "true"


def test_the_secret_is_named_after_the_fleet() -> None:
    assert parse_fleet_text(FLEET, Path("FLEET.toml")).secret_name == "forgeflare-night"


def test_loading_a_file(tmp_path: Path) -> None:
    with pytest.raises(FleetConfigError, match=r"missing\.toml: no such fleet file"):
        load_fleet_file(tmp_path / "missing.toml")
    path = tmp_path / "FLEET.toml"
    path.write_text(FLEET)
    assert load_fleet_file(path).fleet.name == "night"
