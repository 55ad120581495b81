"""Merging the Stop hook into .claude/settings.json."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgeflare.stophook import SettingsFileError, install_hook, merge_stop_hook

CMD = "forgeflare stop-hook"
OURS = {"hooks": [{"type": "command", "command": CMD, "timeout": 700}]}


def test_empty_settings_get_the_hook() -> None:
    merged, changed = merge_stop_hook({}, CMD)
    assert changed
    assert merged == {"hooks": {"Stop": [OURS]}}


def test_everything_already_there_is_kept() -> None:
    settings = {
        "model": "opus",
        "permissions": {"allow": ["Bash(ls)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "g"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        },
    }
    merged, changed = merge_stop_hook(settings, CMD)
    assert changed
    assert merged["model"] == "opus"
    assert merged["permissions"] == settings["permissions"]
    assert merged["hooks"]["PreToolUse"] == settings["hooks"]["PreToolUse"]
    assert merged["hooks"]["Stop"] == [*settings["hooks"]["Stop"], OURS]
    assert len(settings["hooks"]["Stop"]) == 1  # the input is not mutated


def test_second_merge_adds_nothing() -> None:
    once, _ = merge_stop_hook({"x": 1}, CMD)
    twice, changed = merge_stop_hook(once, CMD)
    assert not changed
    assert twice == once


@pytest.mark.parametrize(
    ("settings", "where"),
    [
        ([], "top level"),
        ({"hooks": []}, "'hooks'"),
        ({"hooks": {"Stop": {}}}, "'hooks.Stop'"),
        ({"hooks": {"Stop": [{"hooks": "x"}]}}, "'hooks.Stop[0].hooks'"),
    ],
)
def test_wrong_shapes_are_named(settings: object, where: str) -> None:
    with pytest.raises(SettingsFileError, match=re.escape(where)):
        merge_stop_hook(settings, CMD)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=50)
@given(st.dictionaries(st.text(max_size=8).filter(lambda k: k != "hooks"), json_values, max_size=4))
def test_merge_keeps_other_keys_and_is_idempotent(settings: dict[str, object]) -> None:
    merged, _ = merge_stop_hook(settings, CMD)
    assert {k: v for k, v in merged.items() if k != "hooks"} == settings
    again, changed = merge_stop_hook(merged, CMD)
    assert (again, changed) == (merged, False)


def test_install_writes_then_is_idempotent(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"env": {"A": "1"}}', encoding="utf-8")
    path, changed = install_hook(tmp_path)
    assert (path, changed) == (settings, True)
    first = settings.read_text(encoding="utf-8")
    assert json.loads(first) == {"env": {"A": "1"}, "hooks": {"Stop": [OURS]}}
    assert install_hook(tmp_path) == (settings, False)
    assert settings.read_text(encoding="utf-8") == first


def test_install_creates_the_file(tmp_path: Path) -> None:
    path, changed = install_hook(tmp_path, command="/opt/bin/forgeflare stop-hook")
    assert changed
    assert json.loads(path.read_text())["hooks"]["Stop"][0]["hooks"][0]["command"] == (
        "/opt/bin/forgeflare stop-hook"
    )


def test_install_refuses_invalid_json_and_keeps_it(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": ', encoding="utf-8")
    with pytest.raises(SettingsFileError, match=r"settings\.json: not valid JSON"):
        install_hook(tmp_path)
    assert settings.read_text(encoding="utf-8") == '{"hooks": '
