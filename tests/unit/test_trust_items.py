"""What trust covers: items gathered from hooks, config, Claude settings, fleet files and the
files a command really runs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from forgeflare.supervisor.config import security_defaults
from forgeflare.trust import (
    blind_spots,
    claude_items,
    command_item,
    config_items,
    directory_items,
    fleet_files,
    fleet_items,
    hooks_file_items,
    loosens,
    python_module_items,
    referenced_files,
)
from project_support import write_files


def test_hooks_file_items_cover_definition_and_scripts(tmp_path: Path) -> None:
    (tmp_path / ".forgeflare" / "hooks").mkdir(parents=True)
    script = tmp_path / ".forgeflare" / "hooks" / "guard.py"
    script.write_text("print('{}')\n")
    hooks = tmp_path / ".forgeflare" / "hooks.toml"
    hooks.write_text(
        '[[hooks]]\nevent = "PreToolUse"\nmatch_tool = "Bash"\n'
        'command = "python3 .forgeflare/hooks/guard.py --strict"\n'
        '[[hooks]]\nevent = "Stop"\ncommand = "echo {} /etc/passwd"\n'
    )
    items = hooks_file_items(hooks, tmp_path)
    assert [i.key for i in items] == ["hooks.toml[0] PreToolUse", "hooks.toml[1] Stop"]
    assert list(items[0].files) == [".forgeflare/hooks/guard.py"]
    assert items[1].files == {}  # outside the project: not the project's to vouch for
    before = items[0].digest
    script.write_text('print(\'{"decision": "allow"}\')\n')
    assert hooks_file_items(hooks, tmp_path)[0].digest != before
    hooks.write_text(hooks.read_text().replace('"Bash"', '"Edit"'))
    assert hooks_file_items(hooks, tmp_path)[0].key == "hooks.toml[0] PreToolUse"
    assert hooks_file_items(hooks, tmp_path)[0].definition != items[0].definition


def test_broken_hooks_toml_is_still_an_item(tmp_path: Path) -> None:
    hooks = tmp_path / "hooks.toml"
    hooks.write_text("[[hooks]\n")
    assert [i.key for i in hooks_file_items(hooks, tmp_path)] == ["hooks.toml"]
    assert hooks_file_items(tmp_path / "missing.toml", tmp_path) == []


def test_project_dir_variables_and_symlinks(tmp_path: Path) -> None:
    (tmp_path / "h.sh").write_text("echo hi\n")
    item = command_item("c", '"$FRESHER_PROJECT_DIR/h.sh" arg', tmp_path)
    assert list(item.files) == ["h.sh"]
    outside = tmp_path.parent / f"{tmp_path.name}-outside.sh"
    outside.write_text("echo out\n")
    (tmp_path / "link.sh").symlink_to(outside)
    linked = command_item("c", "./link.sh", tmp_path)
    assert linked.files["link.sh"].startswith(f"-> {outside}")  # covered by its target
    outside.write_text("echo changed\n")
    assert command_item("c", "./link.sh", tmp_path).digest != linked.digest
    outside.unlink()


def test_directory_and_module_items(tmp_path: Path) -> None:
    hooks = tmp_path / ".fresher" / "hooks"
    (hooks / "custom").mkdir(parents=True)
    (hooks / "started").write_text("#!/bin/sh\n")
    os.chmod(hooks / "started", 0o755)
    (hooks / "custom" / "notify").write_text("#!/bin/sh\n")
    keys = [i.key for i in directory_items(hooks, tmp_path)]
    assert keys == [".fresher/hooks/custom/notify", ".fresher/hooks/started"]
    (tmp_path / "myhooks.py").write_text("x = 1\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    items = python_module_items(["myhooks", "pkg", "installed_elsewhere"], tmp_path)
    assert [i.key for i in items] == ["hooks module myhooks", "hooks module pkg"]


def test_security_keys_loosen_unless_default_or_tighter() -> None:
    rows = [
        # key, value, default -> loosens
        ("pass_env", ["ANTHROPIC_API_KEY"], [], True),
        ("pass_env", [], [], False),
        ("allow_paths", ["/"], [], True),
        ("writable", ["/home"], [], True),
        ("sandbox", "off", "auto", True),
        ("sandbox", "", "auto", True),
        ("sandbox", "", "", False),  # the default is not a loosening
        ("sandbox", "bwrap", "", False),
        ("sandbox", "auto", "", False),
        ("sandbox_network", True, False, True),
        ("sandbox_network", False, False, False),
        ("sandbox_network", "no", True, False),
        ("something_new", 1, None, True),  # when in doubt, an item
    ]
    for key, value, default, expected in rows:
        assert loosens(key, value, default) is expected, (key, value)


def test_config_items_table(tmp_path: Path) -> None:
    rows = [
        ("[limits]\ngate = 'make check'\n", ["[limits] gate"]),
        ("[agent]\nextra_args = '--api-url http://x'\n", ["[agent] extra_args"]),
        ("[agent.profiles.night]\ncommand = 'claude'\n", ["[agent.profiles.night]"]),
        (
            "[security]\npass_env = ['GITHUB_TOKEN']\nsandbox_network = false\n",
            ["[security] pass_env"],
        ),
        ("[security]\nsandbox = 'bwrap'\n[hooks]\nenabled = false\n", []),
        ("[fresher]\nmode = 'planning'\n", []),
        ("[paths]\nhooks_dir = '../elsewhere'\nlog_dir = 'logs'\n", ["[paths] hooks_dir"]),
        ("not toml [", [".fresher/config.toml"]),
    ]
    for text, keys in rows:
        write_files(tmp_path, {".fresher/config.toml": text})
        assert [
            i.key for i in config_items(tmp_path, security_defaults=security_defaults())
        ] == keys, text


def test_claude_settings_keys_that_run_or_redirect_are_items(tmp_path: Path) -> None:
    settings = {
        "model": "opus",
        "permissions": {"deny": ["Bash(curl:*)"]},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./stop.sh"}]}]},
        "apiKeyHelper": "./key.sh",
        "env": {"ANTHROPIC_BASE_URL": "http://elsewhere"},
        "statusLine": {"type": "command", "command": "make status"},
        "enabledPlugins": {"x@y": True},
    }
    write_files(tmp_path, {
        ".claude/settings.local.json": json.dumps(settings),
        "stop.sh": "true\n",
        "key.sh": "echo k\n",
        "conf/hostile.json": json.dumps({"apiKeyHelper": "echo k"}),
        ".mcp.json": "{}",
    })  # fmt: skip
    items = {i.key: i for i in claude_items(tmp_path, "--settings conf/hostile.json")}
    local = ".claude/settings.local.json"
    assert sorted(items) == sorted([
        f"{local} apiKeyHelper", f"{local} enabledPlugins", f"{local} env", f"{local} hooks",
        f"{local} statusLine", ".mcp.json", "--settings conf/hostile.json apiKeyHelper",
    ])  # fmt: skip
    assert "stop.sh" in items[f"{local} hooks"].files
    assert "key.sh" in items[f"{local} apiKeyHelper"].files
    assert items[f"{local} statusLine"].blind  # make: dependencies not covered
    write_files(tmp_path, {".claude/settings.json": "[1, 2"})
    assert ".claude/settings.json" in {i.key for i in claude_items(tmp_path)}


def test_what_a_command_really_runs_is_covered(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "hooks/a/h.sh": ". ./lib.sh\n",
        "hooks/a/lib.sh": "true\n",
        "hooks/a/sub/deep.sh": "true\n",
        "tools/b/run.sh": "true\n",
        "mod.py": "import helper\n",
        "helper.py": "x = 1\n",
        "json.py": "shadow = True\n",
        "README.md": "not code\n",
        "pkg/__init__.py": "",
        "pkg/part.py": "",
        "pkg/__pycache__/part.cpython-311.pyc": "",
        "Makefile": "all:\n\ttrue\n",
    })  # fmt: skip
    rows = [
        ("hooks/a/h.sh", {"hooks/a/h.sh", "hooks/a/lib.sh", "hooks/a/sub/deep.sh"}),
        ("cd tools/b && ./run.sh", {"tools/b/run.sh"}),
        ("bash -c 'cd tools/b; ./run.sh'", {"tools/b/run.sh"}),
        ("python3 -m mod", {"mod.py", "helper.py", "json.py"}),
        ("python3 -m pkg", {"pkg/__init__.py", "pkg/part.py",
                            "pkg/__pycache__/part.cpython-311.pyc", "json.py"}),
        ("make -s all", {"Makefile"}),
        ("echo hi", set()),
    ]  # fmt: skip
    for command, expected in rows:
        assert set(referenced_files(command, tmp_path)) == expected, command
    assert blind_spots("make -s all") == ("`make` runs recipes whose dependencies are not covered",)
    assert blind_spots("./h.sh $(cat list)") == (
        "command substitution: what it runs is not covered",
    )
    assert blind_spots("./h.sh") == ()


def test_pyc_and_extension_modules_are_module_files(tmp_path: Path) -> None:
    (tmp_path / "evilc.pyc").write_bytes(b"\x00" * 16)
    (tmp_path / "fast.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
    keys = [i.key for i in python_module_items(["evilc", "fast", "absent"], tmp_path)]
    assert keys == ["hooks module evilc", "hooks module fast"]


def test_fleet_items(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "FLEET.toml": "[fleet]\nname = 'n'\ngate = 'make test'\n[[loop]]\nname = 'a'\n"
        "prompt = 'p'\nagent_command = './agent.sh'\n[[loop]]\nname = 'b'\nprompt = 'p'\n",
        "agent.sh": "true\n",
        "other.toml": "[tool]\nx = 1\n",
    })  # fmt: skip
    assert fleet_files(tmp_path) == [tmp_path / "FLEET.toml"]
    items = fleet_items(tmp_path / "FLEET.toml", tmp_path)
    assert [i.key for i in items] == ["FLEET.toml [fleet] gate", "FLEET.toml loop[a] agent_command"]
    assert "agent.sh" in items[1].files


def test_a_script_reading_other_files_is_a_warning(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "hooks/h.sh": "sh scripts/helper.sh\ncat config/rules.txt\n. ./lib.sh\n",
        "hooks/lib.sh": "true\n",
        "scripts/helper.sh": "true\n",
        "config/rules.txt": "x\n",
    })  # fmt: skip
    item = command_item("k", "hooks/h.sh", tmp_path)
    assert item.blind == (
        "`hooks/h.sh` mentions scripts/helper.sh, whose changes are not covered",
        "`hooks/h.sh` mentions config/rules.txt, whose changes are not covered",
    )  # lib.sh is beside it: covered, no warning


@settings(max_examples=200, deadline=None, derandomize=bool(os.environ.get("CI")))
@given(st.text(alphabet=st.sampled_from(list("ab./-=$&;|()'\"\\ \n\t\x00~*#`")), max_size=40))
def test_any_command_text_gives_an_item(tmp_path_factory: Any, command: str) -> None:
    root = tmp_path_factory.mktemp("p")
    (root / "a").mkdir()
    (root / "a" / "b").write_text("x\n")
    item = command_item("k", command, root)
    assert all(not rel.startswith("/") for rel in item.files)


@settings(max_examples=100, deadline=None, derandomize=bool(os.environ.get("CI")))
@given(st.binary(max_size=80) | st.integers(1, 3000).map(lambda n: b"a = " + b"[" * n))
def test_any_project_file_gives_items_not_a_traceback(tmp_path_factory: Any, raw: bytes) -> None:
    root = tmp_path_factory.mktemp("p")
    for rel in (".forgeflare/hooks.toml", ".fresher/config.toml", ".claude/settings.json",
                "FLEET.toml"):  # fmt: skip
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(raw)
    hooks_file_items(root / ".forgeflare" / "hooks.toml", root)
    config_items(root, security_defaults=security_defaults())
    claude_items(root)
    fleet_items(root / "FLEET.toml", root)


def test_a_script_in_the_project_root_covers_what_it_loads_not_its_folder(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "check.sh": "#!/bin/sh\n. ./env.sh\npytest -q\n",
        "env.sh": "export X=1\n",
        "README.md": "edited by the agent all night\n",
        "gate.py": "import helper\n",
        "helper.py": "x = 1\n",
        "main.py": "print('app')\n",
        "json.py": "shadow = 1\n",
    })  # fmt: skip
    item = command_item("k", "./check.sh", tmp_path)
    assert set(item.files) == {"check.sh", "env.sh"}
    assert "`check.sh` is in the project root: files beside it are not covered" in item.blind
    py = command_item("k", "python3 gate.py", tmp_path)
    assert set(py.files) == {"gate.py", "helper.py", "json.py"}  # not main.py, not README
