"""Every command the README and the documentation pages show is run, so they cannot drift
from the product.

Rules for code blocks (the docs' "Development" page says the same):

- ``sh``, ``bash`` and ``console`` blocks hold commands, one per line. Blank lines and lines
  that are only a ``# comment`` are skipped; in ``console`` blocks only ``$ `` lines count.
  A line ending in ``\\`` continues on the next; a heredoc (``<<'EOF'``) runs to its end line.
- A command exits 0 unless its trailing comment says ``exit N``, e.g.
  ``forgeflare loop --max-iterations 2   # here: stops at the limit, exit 10``.
- A command whose comment says ``not-run: REASON`` is not run, and neither is any command of a
  block whose first line is ``# not-run: REASON`` (kubectl, publishing, real accounts, a
  terminal the test does not have).
- A block of any language whose first line is ``# file: PATH`` is not run: its other lines are
  written to PATH (relative to the walkthrough's current directory) at that point.
- ``make TARGET`` lines are checked with ``make -n -C <repository> TARGET`` (running
  ``make test`` from a test would recurse).

The README runs first, in a directory of its own; then the pages, in the order of mkdocs.yml's
navigation, in another, like a reader following along in one terminal: one bash process, with
``forgeflare`` resolving to this venv's console script and ``ANTHROPIC_API_URL`` pointing at a
``forgeflare mock-api`` that answers every request with a plain ``end_turn`` text.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from docs_support import DOCS, README, REPO, docs_text, nav_pages, reference
from forgeflare._app import app
from forgeflare.disk import ConvergenceState
from forgeflare.hooks import (
    EXIT_CODES,
    ExitReason,
    HookConfig,
    ProcessOutcome,
    interpret_guard,
    interpret_post,
    parse_hooks_text,
    post_tool_payload,
    pre_tool_payload,
    stop_payload,
)
from forgeflare.mockapi import parse_script
from forgeflare.supervisor.config._config import LoopConfig, default_config_toml, env_name
from forgeflare.supervisor.evidence import FINISH_EXIT_CODES
from mockapi_support import MockAPI, MockServer

_RUN_LANGS = frozenset({"sh", "bash", "console"})
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)\s*$")
_FILE_MARK = re.compile(r"^#\s*file:\s*(\S+)\s*$")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")
_EXIT = re.compile(r"\bexit (\d+)\b")
_NOT_RUN = re.compile(r"\bnot-run:\s*(\S.*)$")


@dataclass(frozen=True)
class Block:
    """One fenced code block: its language, first content line number and lines."""

    lang: str
    line: int
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Step:
    """One thing the walkthrough does: run a command, or write a file."""

    kind: str  # "run" | "write"
    line: int
    text: str
    expected: int = 0
    path: str = ""
    skip: str = ""
    """Why the command is not run (``not-run: REASON``); empty: it runs."""
    source: str = ""
    """The file the step comes from, relative to the repository."""


def code_blocks(markdown: str) -> list[Block]:
    """Fenced blocks in order, with the fence's indentation removed from their lines."""
    blocks: list[Block] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, fence, lang = opening.group(1), opening.group(2), opening.group(3)
        body: list[str] = []
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            text = lines[j]
            body.append(text[len(indent) :] if text.startswith(indent) else text.lstrip())
            j += 1
        blocks.append(Block(lang=lang, line=i + 2, lines=tuple(body)))
        i = j + 1
    return blocks


def split_comment(line: str) -> tuple[str, str]:
    """``(command, comment)``: the comment starts at an unquoted ``#`` after a space."""
    quote = ""
    for k, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (k == 0 or line[k - 1] in " \t"):
            return line[:k].rstrip(), line[k + 1 :].strip()
    return line.rstrip(), ""


def block_steps(block: Block) -> list[Step]:
    """The steps of one block (see the module docstring for the rules)."""
    if block.lines and (mark := _FILE_MARK.match(block.lines[0])):
        content = "\n".join(block.lines[1:]) + "\n"
        return [Step("write", block.line, content, path=mark.group(1))]
    if block.lang not in _RUN_LANGS:
        return []
    whole = _NOT_RUN.search(block.lines[0].strip()) if block.lines else None
    steps: list[Step] = []
    lines = list(block.lines)
    i = 0
    while i < len(lines):
        number = block.line + i
        raw = lines[i]
        i += 1
        if block.lang == "console":
            if not raw.startswith("$ "):
                continue
            raw = raw[2:]
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        command, comment = split_comment(raw)
        parts = [raw]
        while parts[-1].rstrip().endswith("\\") and i < len(lines):
            parts.append(lines[i])
            i += 1
        heredoc = _HEREDOC.search(command)
        if heredoc:
            end = heredoc.group(2)
            while i < len(lines):
                parts.append(lines[i])
                i += 1
                if parts[-1].strip() == end:
                    break
        found = _EXIT.search(comment)
        not_run = whole or _NOT_RUN.search(comment)
        steps.append(
            Step(
                "run",
                number,
                "\n".join(parts),
                expected=int(found.group(1)) if found else 0,
                skip=not_run.group(1).strip() if not_run else "",
            )
        )
    return steps


def file_steps(path: Path) -> list[Step]:
    """Every step of one Markdown file, in order, each naming the file."""
    source = path.relative_to(REPO).as_posix()
    blocks = code_blocks(path.read_text(encoding="utf-8"))
    return [dataclasses.replace(s, source=source) for b in blocks for s in block_steps(b)]


def readme_steps() -> list[Step]:
    """Every step of the README, in order."""
    return file_steps(README)


def docs_steps() -> list[Step]:
    """Every step of the documentation pages, in navigation order."""
    return [s for page in nav_pages() for s in file_steps(page)]


def _first_command(step: Step) -> str:
    return split_comment(step.text.splitlines()[0])[0].strip()


def walkthrough_script(parts: list[tuple[str, list[Step]]]) -> str:
    """One bash script that runs (or writes) every step and checks each exit status; each
    part's steps run in a directory of its own (named by the part) under the work folder."""
    out = ["set -u"]
    n = 0
    for folder, steps in parts:
        out.append(f'mkdir -p "$README_WORK/{folder}" && cd "$README_WORK/{folder}" || exit 97')
        for step in steps:
            n += 1
            out += _step_lines(n, step)
    out.append("echo README-WALKTHROUGH-DONE")
    return "\n".join(out) + "\n"


def _step_lines(n: int, step: Step) -> list[str]:
    """The script lines of step ``n``."""
    out: list[str] = []
    where = f"{step.source or 'README.md'} line {step.line}"
    if step.kind == "write":
        out.append(f"# step {n}: write {step.path} ({where})")
        out.append(f'mkdir -p "$(dirname {shlex.quote(step.path)})"')
        out.append(f"printf '%s' {shlex.quote(step.text)} > {shlex.quote(step.path)}")
        return out
    command = _first_command(step)
    if step.skip:
        out.append(f"# step {n}: not run ({where}): {step.skip}")
        return out
    text = step.text
    if command.startswith("make "):
        text = 'make -n -C "$README_REPO"' + command[len("make") :] + " >/dev/null"
    label = shlex.quote(f"{where}: {command}")
    out.append(f"# step {n} ({where})")
    out.append(f"echo {shlex.quote('+ ' + command)} >&2")
    out.append(text)
    out.append(
        f"__rc=$?; if [ $__rc -ne {step.expected} ]; then "
        f'echo "README FAILURE (exit $__rc, expected {step.expected})" {label} >&2; '
        "exit 97; fi"
    )
    return out


# -- the parser's own rules ---------------------------------------------------------------


def test_parser_rules() -> None:
    """Comments, continuations, heredocs, ``console`` prompts and ``# file:`` blocks."""
    markdown = "\n".join(
        [
            "```sh",
            "# a comment line",
            "",
            "echo '# not a comment' # exit 3",
            "ls \\",
            "  -l",
            "cat > x <<'EOF'",
            "a # b",
            "EOF",
            "```",
            "```console",
            "$ echo hi",
            "hi",
            "```",
            "```python",
            "# file: pkg/mod.py",
            "print(1)",
            "```",
            "```toml",
            "a = 1",
            "```",
            "```sh",
            "kubectl apply -f k8s/   # applies it (not-run: needs a cluster)",
            "```",
            "```bash",
            "# not-run: publishing pushes",
            "mkdocs gh-deploy",
            "git push",
            "```",
        ]
    )
    steps = [s for b in code_blocks(markdown) for s in block_steps(b)]
    assert [(s.kind, s.text, s.expected, s.skip) for s in steps] == [
        ("run", "echo '# not a comment' # exit 3", 3, ""),
        ("run", "ls \\\n  -l", 0, ""),
        ("run", "cat > x <<'EOF'\na # b\nEOF", 0, ""),
        ("run", "echo hi", 0, ""),
        ("write", "print(1)\n", 0, ""),
        (
            "run",
            "kubectl apply -f k8s/   # applies it (not-run: needs a cluster)",
            0,
            "needs a cluster)",
        ),
        ("run", "mkdocs gh-deploy", 0, "publishing pushes"),
        ("run", "git push", 0, "publishing pushes"),
    ]
    assert steps[4].path == "pkg/mod.py"
    assert split_comment('x "a # b" # c') == ('x "a # b"', "c")


# -- the content of the README and the pages ----------------------------------------------


def help_commands(*args: str) -> list[str]:
    """The names in the Commands box of ``forgeflare ARGS --help``."""
    result = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    names: list[str] = []
    inside = False
    # A part's group has typer's rich box; the root listing is click's plain "Commands:".
    for line in result.output.splitlines():
        if "─ Commands ─" in line or line == "Commands:":
            inside = True
        elif inside and (line.startswith("╰") or not line.strip()):
            break
        elif inside and (m := re.match(r"^(?:│ |  )(\S+)", line)):
            names.append(m.group(1))
    return names


def test_every_subcommand_is_in_the_docs() -> None:
    """Every command is explained on a page written by hand (not only in the generated
    command reference)."""
    text = docs_text()
    names = help_commands()
    assert {"run", "loop", "init", "demo", "mock-api", "hooks", "stop-hook"} <= set(names)
    missing = [f"forgeflare {n}" for n in names if f"forgeflare {n}" not in text]
    for group in ("hooks", "stop-hook", "fleet"):
        children = help_commands(group)
        assert children, group
        missing += [
            f"forgeflare {group} {c}" for c in children if f"forgeflare {group} {c}" not in text
        ]
    assert missing == []


def test_config_reference_lists_every_key() -> None:
    """Key, variable and default of every config key, exactly as the model renders them, in
    the table the configuration page is given when the site is built."""
    defaults = tomllib.loads(default_config_toml())
    expected: dict[str, tuple[str, str]] = {}
    for section, fields in LoopConfig.model_fields.items():
        model: Any = fields.annotation
        for key in model.model_fields:
            if section == "agent" and key == "profiles":
                continue  # a table of tables ([agent.profiles.NAME]): "More than one agent"
            value = defaults[section][key]
            rendered = json.dumps(value) if isinstance(value, str) else str(value).lower()
            expected[f"{section}.{key}"] = (env_name(section, key), rendered)
    table = reference().loop_config_table()
    rows: dict[str, tuple[str, str]] = {}
    pattern = re.compile(r"^\| `\[(\w+)\] (\w+)` \| `(\w+)` \| `([^`]*)` \|", re.MULTILINE)
    for m in pattern.finditer(table):
        rows[f"{m.group(1)}.{m.group(2)}"] = (m.group(3), m.group(4))
    assert rows == expected
    assert "| `[agent.profiles.NAME]` | | |" in table
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    assert "<!-- generated: loop-config -->" in page
    assert "<!-- generated: fleet-config -->" in page
    fleet = reference().fleet_config_table()
    for key in ("name", "parallel", "max_cost", "gate", "land"):
        assert f"| `[fleet] {key}` |" in fleet
    for key in ("name", "repo", "prompt", "backend", "agent_command"):
        assert f"| `[[loop]] {key}` |" in fleet
    hooks = reference().hooks_config_table()
    assert [line.split("`")[1] for line in hooks.splitlines()[2:]] == list(HookConfig.model_fields)
    assert "<!-- generated: hooks-config -->" in (DOCS / "hooks.md").read_text(encoding="utf-8")


def test_command_reference_has_every_commands_help() -> None:
    """The generated command reference holds each command's own --help, and every marker
    on a page names a generator."""
    ref = reference()
    paths = ref.command_paths()
    assert ("fleet", "k8s") in paths
    assert ("stop-hook", "install") in paths
    page = ref.expand((DOCS / "reference" / "cli.md").read_text(encoding="utf-8"))
    for path in paths:
        assert f"`forgeflare {' '.join(path)}`" in page, path
        assert f"Usage: forgeflare {' '.join(path)} " in page, path
    for doc in nav_pages():
        for name in ref.MARKER.findall(doc.read_text(encoding="utf-8")):
            assert name in ref.GENERATORS, (doc.name, name)


def test_exit_code_tables_match_the_code() -> None:
    text = docs_text()
    for finish, code in FINISH_EXIT_CODES.items():
        assert f"| {code} | `{finish.value}` |" in text, finish
    for reason, code in EXIT_CODES.items():
        row = next(line for line in text.splitlines() if line.startswith(f"| {code} |"))
        assert f"`{reason.value}`" in row, reason


def _check_json_example(data: dict[str, Any]) -> str:
    """Check one JSON example against the code that makes or reads that shape; its kind."""
    if "event" in data:  # a hook's stdin: exactly what the agent sends
        common = {"tool_iterations": data["tool_iterations"], "cwd": data["cwd"]}
        if data["event"] == "PreToolUse":
            made = pre_tool_payload(
                phase=data["phase"],
                tool=data["tool"],
                input=data["input"],
                blocked=data.get("blocked", False),
                blocked_by=data.get("blocked_by"),
                block_reason=data.get("block_reason"),
                **common,
            )
        elif data["event"] == "PostToolUse":
            made = post_tool_payload(
                tool=data["tool"],
                input=data["input"],
                result=data["result"],
                is_error=data["is_error"],
                **common,
            )
        else:
            made = stop_payload(reason=data["reason"], total_tokens=data["total_tokens"], **common)
            assert data["reason"] in {r.value for r in ExitReason}
        assert made == data
        return f"stdin {data['event']}"
    if "action" in data:  # a hook's answer: read the way the agent reads it
        stdout = json.dumps(data).encode()
        interpret = interpret_post if data["action"] == "signal" else interpret_guard
        result = interpret(ProcessOutcome("exited", returncode=0, stdout=stdout))
        assert result.outcome == data["action"], result
        return f"answer {data['action']}"
    if "final" in data:
        ConvergenceState.model_validate(data)
        return "convergence.json"
    assert "responses" in data
    parse_script(data)
    return "mock script"


def test_data_blocks_parse() -> None:
    """JSON and TOML examples are valid, and each means what the code makes of it."""
    kinds: list[str] = []
    for block in code_blocks(README.read_text(encoding="utf-8") + "\n" + docs_text()):
        lines = list(block.lines)
        if lines and _FILE_MARK.match(lines[0]):
            lines = lines[1:]
        body = "\n".join(lines)
        if block.lang == "json":
            kinds.append(_check_json_example(json.loads(body)))
        elif block.lang == "toml":
            data = tomllib.loads(body)
            if "hooks" in data:
                assert parse_hooks_text(body, Path("README.md")).hooks
                kinds.append("hooks.toml")
            elif set(data) <= set(LoopConfig.model_fields):
                LoopConfig.model_validate(data)
                kinds.append("config.toml")
    for kind in (
        "stdin PreToolUse",
        "stdin PostToolUse",
        "stdin Stop",
        "answer block",
        "answer signal",
        "convergence.json",
        "mock script",
        "hooks.toml",
        "config.toml",
    ):
        assert kind in kinds, kind


def test_readme_is_short_and_its_links_resolve() -> None:
    """The README says what forgeflare is and points into the docs: at most 200 lines, every
    relative link to a file that exists (the pages' own links are checked by the strict
    site build, ``make docs``)."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    links = re.findall(r"\]\(((?!https?:|#)[^)#\s]+)(?:#[^)]*)?\)", text)
    assert "docs/getting-started.md" in links
    missing = [link for link in links if not (REPO / link).exists()]
    assert missing == []
    linked = {Path(link).name for link in links if link.startswith("docs/")}
    unlinked = [p.name for p in nav_pages() if p.name not in linked]
    assert unlinked == ["index.md"]  # the site's home page is this README's counterpart


def test_commands_not_run_say_why() -> None:
    """Few commands are left out, each with its reason."""
    skipped = [s for s in readme_steps() + docs_steps() if s.skip]
    assert all(len(s.skip) > 10 for s in skipped), skipped
    assert len(skipped) <= 12, [(s.source, s.line) for s in skipped]


# -- the walkthrough ----------------------------------------------------------------------


def _env(tmp_path: Path, server: MockServer) -> dict[str, str]:
    drop = ("FRESHER_", "ANTHROPIC_", "IDLE_LOOP_", "FORGEFLARE_", "XDG_CONFIG_HOME")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    home = tmp_path / "home"
    home.mkdir()
    env.update(
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
        ANTHROPIC_API_URL=server.url,
        ANTHROPIC_API_KEY="test-key",
        HOME=str(home),
        NO_COLOR="1",
        COLUMNS="100",
        # The temporary directory must not count as part of an enclosing git repository.
        GIT_CEILING_DIRECTORIES=str(tmp_path),
        # A reader's git knows who they are; the temporary HOME has no ~/.gitconfig.
        GIT_AUTHOR_NAME="Reader",
        GIT_AUTHOR_EMAIL="reader@example.com",
        GIT_COMMITTER_NAME="Reader",
        GIT_COMMITTER_EMAIL="reader@example.com",
        README_REPO=str(REPO),
        README_WORK=str(tmp_path / "work"),
    )
    return env


def test_readme_walkthrough(tmp_path: Path, mock_api: MockAPI) -> None:
    readme, docs = readme_steps(), docs_steps()
    commands = [_first_command(s) for s in readme + docs if s.kind == "run" and not s.skip]
    # The walkthrough covers the main paths of the README and the pages, not just a few lines.
    for wanted in (
        "make demo",
        "make test",
        "make docs",
        "forgeflare init myproject",
        "forgeflare plan --max-iterations 3",
        "forgeflare report",
        "forgeflare loop --mode planning --max-iterations 1",
        "forgeflare stop-hook install",
        "forgeflare hooks validate",
        'forgeflare run --hooks-module myhooks "Run the tests"',
    ):
        assert wanted in commands, wanted
    server = mock_api({"responses": [], "when_exhausted": "end_turn"})
    (tmp_path / "work").mkdir()
    script = tmp_path / "walkthrough.sh"
    script.write_text(walkthrough_script([("readme", readme), ("docs", docs)]), encoding="utf-8")
    proc = subprocess.Popen(
        ["bash", str(script)],
        cwd=tmp_path / "work",
        env=_env(tmp_path, server),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=540)  # below the per-test 600 s
    finally:
        # Background jobs a README block started (the mock server) go with the group.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    stderr = err.decode(errors="replace")
    failure = [line for line in stderr.splitlines() if line.startswith("README FAILURE")]
    assert not failure, (
        failure[0] + "\n--- stderr (last 60 lines) ---\n" + "\n".join(stderr.splitlines()[-60:])
    )
    assert proc.returncode == 0, stderr[-4000:]
    assert out.decode(errors="replace").rstrip().endswith("README-WALKTHROUGH-DONE")
    taste = tmp_path / "work" / "readme" / "myproject"
    finished = [
        json.loads((r / "run.json").read_text())["finish_type"]
        for r in sorted((taste / ".fresher" / "runs").iterdir())
    ]
    assert finished == ["no_changes"] * 2  # the README's plan, then its build
    project = tmp_path / "work" / "docs" / "myproject"
    runs = sorted((project / ".fresher" / "runs").iterdir())
    assert len(runs) == 3  # planning, building, and the command agent of "Backends"
    finished = [json.loads((r / "run.json").read_text())["finish_type"] for r in runs]
    assert finished == ["max_iterations"] * 3
    reported = json.loads((runs[-1] / "run.json").read_text())["iterations"][0]
    assert reported["tokens"]["input"] == 1200  # from the command agent's report file
    assert reported["cost_usd"] is not None
    assert server.requests(), "the agent never reached the mock API"
