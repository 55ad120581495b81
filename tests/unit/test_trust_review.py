"""What ``forgeflare trust`` shows (pure): a meaning per item, marks, files once, the command."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.trust import (
    GATE_NOTE,
    TrustCheck,
    TrustItem,
    item_meaning,
    review_lines,
    trust_command,
)

GUARD = {".forgeflare/hooks/guard.py": "a" * 64}


@pytest.mark.parametrize(
    ("item", "words"),
    [
        (TrustItem("[security] sandbox", '"off"'), "turns the sandbox off"),
        (TrustItem("[security] sandbox", "false"), "turns the sandbox off"),
        (
            TrustItem("[security] pass_env", '["ANTHROPIC_API_KEY"]'),
            "passes ANTHROPIC_API_KEY to hooks",
        ),
        (TrustItem("[security] sandbox_network", "true"), "use the network"),
        (TrustItem("[security] writable", '["/srv"]'), "write to /srv"),
        (TrustItem("[security] something_new", "1"), "loosens the [security] something_new"),
        (TrustItem("hooks.toml[0] PreToolUse", '{"command": "g"}'), "can block it"),
        (TrustItem("hooks.toml[1] PostToolUse", '{"command": "g"}'), "after each"),
        (TrustItem("hooks.toml[2] Stop", '{"command": "g"}'), "when the agent stops"),
        (TrustItem(".fresher/hooks/started", '{"executable": true}'), "when the loop starts"),
        (TrustItem(".fresher/hooks/next_iteration", '{"executable": true}'), "every iteration"),
        (TrustItem(".fresher/hooks/custom/x.sh", '{"executable": true}'), "they may run"),
        (TrustItem(".fresher/hooks/lib.txt", '{"executable": false}'), "they may read"),
        (TrustItem("[agent] command", '{"command": "x"}'), "as the agent"),
        (TrustItem("[limits] gate", '{"command": "make test"}'), "gate"),
        (TrustItem("[notify] command", '{"command": "x"}'), "notifies you"),
        (TrustItem(".claude/settings.json hooks", "{}"), "Claude Code runs these hook"),
        (TrustItem(".claude/settings.json apiKeyHelper", '"x"'), "API key"),
        (TrustItem(".mcp.json", "mcp servers"), "MCP servers"),
        (TrustItem("hooks module myhooks", "myhooks"), "beside its API key"),
        (TrustItem("[paths] hooks_dir", '"../x"'), "outside the project"),
        (TrustItem("FLEET.toml loop[a] agent_command", '{"command": "x"}'), "fleet loop"),
        (TrustItem("hooks.toml", "unreadable or malformed"), "by its bytes"),
    ],
)
def test_every_kind_of_item_says_what_it_means(item: TrustItem, words: str) -> None:
    assert words in item_meaning(item)


def test_items_are_marked_and_scripts_listed_once() -> None:
    # Four hooks.toml entries that all run one script: the script is listed once, not 4 times.
    items = [TrustItem(f"hooks.toml[{i}] PreToolUse", '{"command": "g"}', GUARD) for i in range(4)]
    items.append(TrustItem("[security] sandbox", '"off"'))
    check = TrustCheck(
        trusted=False, new=("[security] sandbox",), changed=("hooks.toml[1] PreToolUse",)
    )
    lines = review_lines(items, check, lambda rel: ["#!/usr/bin/env python3"])
    assert sum(".forgeflare/hooks/guard.py  sha256" in line for line in lines) == 1
    assert sum("#!/usr/bin/env python3" in line for line in lines) == 1
    assert '    new  [security] sandbox = "off"' in lines
    assert "changed  hooks.toml[1] PreToolUse: g" in lines
    assert "         hooks.toml[0] PreToolUse: g" in lines  # trusted before: no mark
    # the file of a changed item is marked changed
    assert any(line.startswith("changed  .forgeflare/hooks/guard.py") for line in lines)


@given(st.lists(st.sampled_from(["a.sh", "b.py", "c/d.sh"]), max_size=6))
def test_each_file_is_listed_exactly_once(names: list[str]) -> None:
    items = [TrustItem(f"k{i}", "{}", {name: "0" * 64}) for i, name in enumerate(names)]
    lines = review_lines(items, TrustCheck(trusted=False, new=tuple(i.key for i in items)))
    for name in set(names):
        assert sum(f"  {name}  sha256" in line for line in lines) == 1


@pytest.mark.parametrize(
    ("project", "cwd", "command"),
    [
        ("/p", "/p", "forgeflare trust"),
        ("/p/sub", "/p", "forgeflare trust --dir sub"),
        ("/q", "/p", "forgeflare trust --dir /q"),
        ("/q/a b", "/p", "forgeflare trust --dir '/q/a b'"),
    ],
)
def test_the_refusal_names_one_command(project: str, cwd: str, command: str) -> None:
    assert trust_command(Path(project), Path(cwd)) == command


def test_trust_says_a_gate_runs_project_code(tmp_path: Path) -> None:
    items = [TrustItem(key="[limits] gate", definition='{"command": "pytest"}')]
    check = TrustCheck(trusted=False)
    assert f"         note: {GATE_NOTE}" in review_lines(items, check)
    other = [TrustItem(key="[notify] command", definition='{"command": "x"}')]
    assert not any("note:" in line for line in review_lines(other, check))
