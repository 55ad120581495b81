"""Backends in real loops: Codex (a stand-in replaying recorded output) and a command agent
that writes the report file. The loops run in this process (``Project.arun``; the agents are
real children) except ``--raw``'s, a real ``forgeflare loop`` process."""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import pytest

from cli_inprocess import forgeflare_here
from forgeflare.cli import main
from forgeflare.disk import Final
from forgeflare.supervisor.backends import (
    BACKENDS,
    BaseBackend,
    ChildEnd,
    InitTemplate,
    IterationReport,
    LineReader,
    Tokens,
    register_backend,
)
from forgeflare.trust import TrustItem
from supervisor_agents.project import Project, base_env

FIXTURES = Path(__file__).parent.parent / "fixtures"


async def test_codex_loop_records_tokens_and_completes_by_signal(tmp_path: Path) -> None:
    project = Project(tmp_path)
    codex = shlex.join([sys.executable, str(FIXTURES / "fake_codex.py")])
    done = await project.arun("--backend", "codex", "--agent-cmd", codex, "--mode", "planning")
    assert done.code == 0, done.stderr
    rec = project.record()
    (row,) = rec["iterations"]
    assert row["outcome"] == "ok"
    assert row["tokens"] == {"input": 315, "output": 122, "cache_read": 24448, "cache_write": 0}
    assert row["session_id"] == "0199a213-81c0-7800-8aa1-bbab2a035a53"
    assert row["signal"] == "<loop-done>COMPLETE</loop-done>"
    assert rec["finish_type"] == "complete"
    # the terminal shows what happened, not JSON; the log keeps the raw stream
    assert "▸ Bash  bash -lc 'cat IMPLEMENTATION_PLAN.md'" in done.stdout
    assert '{"type"' not in done.stdout
    log = (project.run_dirs()[0] / "iteration-001.log").read_text()
    assert log.count('{"type"') == 8


def test_codex_raw_shows_the_stream(tmp_path: Path) -> None:
    project = Project(tmp_path)
    codex = shlex.join([sys.executable, str(FIXTURES / "fake_codex.py")])
    done = project.run("--backend", "codex", "--agent-cmd", codex, "--mode", "planning", "--raw")
    assert done.code == 0, done.stderr
    assert '{"type":"turn.completed"' in done.stdout


AGENT = """
import json, os, sys
sys.stdin.read()
json.dump({"outcome": "ok", "tokens": {"input": 1000, "output": 100, "cache_read": 50},
           "model": "claude-opus-4-6", "turns": 3, "session_id": "s1"},
          open(os.environ["FORGEFLARE_REPORT"], "w"))
"""


async def test_command_agent_report_file(tmp_path: Path) -> None:
    project = Project(tmp_path)
    script = project.write("agent.py", AGENT)
    done = await project.arun(
        "--agent-cmd",
        shlex.join([sys.executable, str(script)]),
        "--mode",
        "planning",
        "--max-iterations",
        "1",
        env=base_env(),
    )
    assert done.code == 10, done.stderr
    (row,) = project.record()["iterations"]
    assert row["tokens"] == {"input": 1000, "output": 100, "cache_read": 50, "cache_write": 0}
    assert (row["turns"], row["session_id"]) == (3, "s1")
    expected = (1000 * 5 + 100 * 25 + 50 * 0.5) / 1e6  # priced from the table: no cost given
    assert abs(row["cost_usd"] - expected) < 1e-9


async def test_command_agent_without_report_is_judged_by_exit(tmp_path: Path) -> None:
    project = Project(tmp_path)
    done = await project.arun(
        "--agent-cmd",
        "false",
        "--mode",
        "planning",
        env=base_env(FRESHER_MAX_CONSECUTIVE_ERRORS="2"),
    )
    assert done.code == 12
    rows = project.record()["iterations"]
    assert [r["outcome"] for r in rows] == ["agent_error", "agent_error"]
    assert rows[0]["stop_reason"] == "exit 1"


async def test_final_required_makes_a_silent_command_agent_an_error(tmp_path: Path) -> None:
    """``[agent] final_required = "yes"``: a command agent that exits 0 without writing
    ``convergence.json``'s ``final`` had an error iteration; by default its exit status decides."""
    project = Project(tmp_path)
    args = ("--agent-cmd", "true", "--mode", "planning", "--max-iterations", "2")
    done = await project.arun(*args)
    assert done.code == 10, done.stderr
    (default_run,) = project.run_dirs()
    project.write(".fresher/config.toml", '[agent]\nfinal_required = "yes"\n')
    required = await project.arun(
        *args, env=base_env(FRESHER_MAX_CONSECUTIVE_ERRORS="2", FRESHER_ERROR_PAUSE="0")
    )
    assert required.code == 12, required.stderr
    # Two runs in one second sort by their random suffix: take the one that is not the first.
    (newest,) = set(project.run_dirs()) - {default_run}
    rows = json.loads((newest / "run.json").read_text())["iterations"]
    assert [(r["outcome"], r["detail"]) for r in rows] == [("agent_error", "no final written")] * 2


# -- a backend defined here alone: one class, registered, and a real loop runs it -------------

TOY_AGENT = """
import json, os, sys
sys.stdin.read()
print('working on it')
key = open(sys.argv[sys.argv.index('--key-file') + 1]).read()
print('TOY ' + json.dumps({
    'tokens': {'input': 40, 'output': 7, 'cache_read': 300, 'cache_write': 12}, 'cost': 0.0123,
    'key_by_file': key == 'toy-secret', 'key_in_env': 'TOY_API_KEY' in os.environ,
    'told': os.environ.get('TOY_KEY_FROM'),
}))
"""
TOY_SETTINGS = ".toy/settings.json"


@dataclass
class ToyReader:
    """Keeps the toy agent's lines; shows each with a prefix."""

    lines: list[str] = field(default_factory=list)

    def feed(self, line: str) -> list[str]:
        self.lines.append(line.strip())
        return [f"toy: {line.strip()}"]


@dataclass
class ToyBackend(BaseBackend):
    """A whole backend: how to start its agent, what it keeps, checks, runs and reports."""

    name: str = "toy"
    prompt_suffix: str = ""
    secret_names: ClassVar[tuple[str, ...]] = ("TOY_API_KEY",)
    helper_keys: ClassVar[tuple[str, ...]] = ("TOY_API_KEY",)
    """Its key comes in a one-shot file, never in its environment."""
    helper_env: ClassVar[Mapping[str, str]] = {"TOY_KEY_FROM": "file"}
    init: ClassVar[InitTemplate | None] = InitTemplate("Toy (a test's own agent)")

    def argv(self, *, python: str, model: str, command: str, extra: list[str]) -> list[str]:
        return [python, "-c", TOY_AGENT, *extra]

    def helper_argv(self, key_file: Path) -> list[str]:
        return ["--key-file", str(key_file)]

    def reader(self) -> ToyReader:
        return ToyReader()

    def problems(self, env: Mapping[str, str], argv: Sequence[str], *, root: bool) -> list[str]:
        if env.get("TOY_REGION", "earth") != "earth":
            return [f"the toy agent runs on earth only (TOY_REGION={env['TOY_REGION']})"]
        return []

    def trust_items(self, project: Path, extra_args: str) -> list[TrustItem]:
        settings = project / TOY_SETTINGS
        if not settings.is_file():
            return []
        digest = hashlib.sha256(settings.read_bytes()).hexdigest()
        return [TrustItem(TOY_SETTINGS, "toy settings", {TOY_SETTINGS: digest})]

    def report(
        self, reader: LineReader, end: ChildEnd, final: Final | None, report_file: Path | None
    ) -> IterationReport:
        assert isinstance(reader, ToyReader)
        said = [text for text in reader.lines if text.startswith("TOY ")]
        if not said:
            return IterationReport(outcome="agent_error", detail=" / ".join(reader.lines[-3:]))
        used = json.loads(said[-1].removeprefix("TOY "))
        handed = used["key_by_file"] and not used["key_in_env"] and used["told"] == "file"
        return IterationReport(
            outcome="ok" if end.exit_code == 0 and handed else "agent_error",
            stop_reason="toy_done" if handed else f"key not handed over: {used}",
            tokens=Tokens(**used["tokens"]),
            cost_usd=used["cost"],
            model="toy-1",
        )


@pytest.fixture
def toy() -> Iterator[type[ToyBackend]]:
    register_backend(ToyBackend)
    try:
        yield ToyBackend
    finally:
        BACKENDS.pop("toy", None)


TOY_ENV = {"TOY_API_KEY": "toy-secret"}


async def test_a_backend_defined_in_a_test_runs_a_loop(
    tmp_path: Path, toy: type[ToyBackend]
) -> None:
    project = Project(tmp_path)
    args = ("--backend", "toy", "--mode", "planning", "--max-iterations", "1")
    done = await project.arun(*args, env=base_env(**TOY_ENV))
    assert done.code == 10, done.stderr
    assert "toy: working on it" in done.stdout
    # its box (BaseBackend's: it runs as it is, told the sandbox) says so in the banner
    assert "sandbox: a toy agent runs as it is" in done.stdout + done.stderr
    total = 40 + 7 + 300 + 12
    (run,) = json.loads(forgeflare_here(tmp_path, "runs", "--json").stdout)
    assert (run["tokens"], run["cost_usd"], run["iterations"]) == (total, 0.0123, 1)
    (row,) = project.record()["iterations"]
    # ok only when its key came through the file its helper_argv named, not its environment
    assert (row["outcome"], row["stop_reason"], row["model"]) == ("ok", "toy_done", "toy-1")
    assert row["backend"] == project.record()["backend"] == "toy"
    assert not list((project.run_dirs()[0]).glob(".key-*"))  # the key file is gone with it
    report = forgeflare_here(tmp_path, "report").stdout
    assert f"1 iteration · 0 commits · {total} tokens · $0.0123" in report
    assert re.search(r"#1 \d+s ok \(toy_done\)", report), report
    watch = forgeflare_here(tmp_path, "watch", "--wait", "0").stdout
    assert f"tokens {total} · $0.0123" in watch
    assert "finished: max_iterations" in watch


def _cli_loop(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    **env: str,
) -> tuple[int, str]:
    """``forgeflare loop --backend toy`` as a user runs it (in this process: the test's
    backend is registered here) with the test environment, ``TOY_API_KEY`` and ``env`` (the
    loop takes its secrets out of the process's environment: set again each time)."""
    for name, value in base_env(**{"TOY_REGION": "earth", **TOY_ENV, **env}).items():
        monkeypatch.setenv(name, value)
    argv = ["loop", "--dir", str(project), "--backend", "toy", "--mode", "planning"]
    with pytest.raises(SystemExit) as ended:
        main([*argv, "--max-iterations", "1"])
    return int(ended.value.code or 0), capsys.readouterr().err


def test_a_test_backends_preflight_and_trust_items_hold_the_loop(
    tmp_path: Path,
    toy: type[ToyBackend],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    project = Project(tmp_path)
    code, err = _cli_loop(tmp_path, monkeypatch, capsys, TOY_REGION="moon")
    assert code == 2
    assert "the toy agent runs on earth only (TOY_REGION=moon)" in err
    assert project.run_dirs() == []  # found before anything started
    project.write(TOY_SETTINGS, '{"run": "anything"}')
    code, err = _cli_loop(tmp_path, monkeypatch, capsys, FORGEFLARE_TRUST="")
    assert code == 2
    assert TOY_SETTINGS in err
    assert project.run_dirs() == []
    with pytest.raises(SystemExit) as trusted:  # `forgeflare trust` lists the toy's items too
        main(["trust", "--dir", str(tmp_path), "--yes"])
    assert trusted.value.code in (0, None)
    assert TOY_SETTINGS in capsys.readouterr().out
    code, err = _cli_loop(tmp_path, monkeypatch, capsys, FORGEFLARE_TRUST="")
    assert code == 10, err
    (row,) = project.record()["iterations"]
    assert (row["outcome"], row["stop_reason"]) == ("ok", "toy_done"), row["detail"]


def test_a_test_backend_is_an_init_option(
    tmp_path: Path, toy: type[ToyBackend], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as listed:
        main(["init", "--agents"])
    assert listed.value.code in (0, None)
    assert "--toy" in capsys.readouterr().out
    with pytest.raises(SystemExit) as done:
        main(["init", "--toy", str(tmp_path / "p")])
    assert done.value.code in (0, None), capsys.readouterr().err
    config = (tmp_path / "p" / ".fresher" / "config.toml").read_text()
    assert 'backend = "toy"' in config
    assert "permission_mode" not in config  # another agent's own setting
    agents = (tmp_path / "p" / ".fresher" / "AGENTS.md").read_text()
    assert "nothing here blocks them" in agents  # it runs none of forgeflare's agent hooks
