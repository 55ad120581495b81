"""A loop project in a temporary directory, and ways to run ``forgeflare loop`` on it."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forgeflare._errors import ForgeflareError
from forgeflare.supervisor import LoopOptions, load_config, run_loop
from forgeflare.supervisor.agents import StopControl
from forgeflare.supervisor.records import LoopDisplay
from mockapi_support import MockServer
from platform_support import alive as alive  # re-exported: the loop tests import it here
from project_support import run_text

_FLAGS = {
    "--agent-cmd": "agent.command",
    "--max-iterations": "fresher.max_iterations",
    "--max-runtime": "limits.max_runtime",
    "--iteration-timeout": "limits.iteration_timeout",
    "--mode": "fresher.mode",
    "--model": "fresher.model",
    "--backend": "agent.backend",
}

AGENT = Path(__file__).with_name("agent.py")


def agent_cmd(*flags: str) -> str:
    """``--agent-cmd`` for the stand-in agent with ``flags``."""
    return shlex.join([sys.executable, str(AGENT), *flags])


def python_agent(source: str) -> str:
    """``--agent-cmd`` for an agent that is the Python program ``source``."""
    return f"{sys.executable} -c {shlex.quote(source)}"


def base_env(**extra: str) -> dict[str, str]:
    """The test environment: no inherited FRESHER_*, no pause after errors, short grace."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRESHER_")}
    env.update(
        FRESHER_ERROR_PAUSE="0", FRESHER_AGENT_KILL_GRACE="2", NO_COLOR="1", PYTHONUNBUFFERED="1"
    )
    env.update(extra)
    return env


def env_for(server: MockServer, **extra: str) -> dict[str, str]:
    """The test environment for a loop whose agent talks to ``server``; waits scaled to 1 %."""
    return base_env(
        ANTHROPIC_API_URL=server.url,
        ANTHROPIC_API_KEY="test-key",
        FORGEFLARE_TIME_SCALE="0.01",
        **extra,
    )


def forgeflare(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``forgeflare ARGS`` in ``project`` with the test environment (``runs``, ``report`` ...)."""
    return run_text(
        [sys.executable, "-m", "forgeflare", *args], cwd=project, env=base_env(), timeout=60
    )


def wait_for(predicate: Callable[[], bool], *, timeout: float = 120.0) -> None:
    """Bounded polling (not a synchronising sleep: it re-checks a condition)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.02)


@dataclass
class Done:
    code: int
    stdout: str
    stderr: str


@dataclass
class Project:
    dir: Path

    def write(self, rel: str, text: str) -> Path:
        path = self.dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def hook(self, name: str, body: str, *, executable: bool = True) -> Path:
        path = self.write(f".fresher/hooks/{name}", "#!/bin/sh\n" + body + "\n")
        path.chmod(0o755 if executable else 0o644)
        return path

    def dump_env_hooks(self) -> None:
        for name in ("started", "next_iteration", "finished"):
            self.hook(name, f'env > "$FRESHER_PROJECT_DIR/env.{name}.${{FRESHER_ITERATION:-0}}"')

    def hook_env(self, name: str, iteration: int = 0) -> dict[str, str]:
        text = (self.dir / f"env.{name}.{iteration}").read_text()
        return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)

    def git_init(self) -> None:
        for args in (
            ["init", "-q"],
            ["config", "user.name", "Test"],
            ["config", "user.email", "test@example.invalid"],
            ["config", "commit.gpgsign", "false"],
        ):
            subprocess.run(["git", *args], cwd=self.dir, check=True)
        self.write(".gitignore", ".fresher/runs/\nenv.*\n")
        subprocess.run(["git", "add", "-A"], cwd=self.dir, check=True)
        subprocess.run(["git", "commit", "-qm", "init"], cwd=self.dir, check=True)

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "forgeflare", "loop", "--dir", str(self.dir), *args]

    def run(self, *args: str, env: dict[str, str] | None = None, timeout: float = 60) -> Done:
        out = run_text(self.argv(*args), cwd=self.dir, env=env or base_env(), timeout=timeout)
        return Done(out.returncode, out.stdout, out.stderr)

    async def arun(
        self, *args: str, env: dict[str, str] | None = None, stop: StopControl | None = None
    ) -> Done:
        """Like :meth:`run`, but the loop runs in this process (agents and hooks are still
        real processes): the same code below the thin CLI, without its start-up cost."""
        env = env or base_env()
        cli: dict[str, object] = {}
        resume = False
        rest = list(args)
        while rest:
            flag = rest.pop(0)
            if flag == "--resume":
                resume = True
            else:
                cli[_FLAGS[flag]] = rest.pop(0)
        out, err = io.StringIO(), io.StringIO()
        try:
            loaded = load_config(self.dir, env=env, cli=cli)
            opts = LoopOptions(
                project_dir=self.dir,
                config=loaded.config,
                resume=resume,
                env=env,
                warnings=loaded.warnings,
            )
            display = LoopDisplay(out=out, err=err, live=False)
            result = await run_loop(opts, display=display, stop=stop)
        except ForgeflareError as exc:
            err.write(f"forgeflare: error: {exc}\n")
            return Done(exc.exit_code, out.getvalue(), err.getvalue())
        return Done(result.exit_code, out.getvalue(), err.getvalue())

    def popen(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.argv(*args),
            env=env or base_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=self.dir,
        )

    def run_dirs(self) -> list[Path]:
        root = self.dir / ".fresher" / "runs"
        return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []

    def record(self) -> dict[str, Any]:
        (run_dir,) = self.run_dirs()
        return json.loads((run_dir / "run.json").read_text())  # type: ignore[no-any-return]

    def events(self) -> list[dict[str, Any]]:
        (run_dir,) = self.run_dirs()
        lines = (run_dir / "events.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines]

    def hook_events(self, name: str) -> list[dict[str, Any]]:
        return [e for e in self.events() if e["event"] == "hook" and e["hook"] == name]


def cli_agent_env(
    backend: str, command: Path, cli_env: dict[str, str], *, iterations: int, **settings: str
) -> dict[str, str]:
    """The test environment for a planning loop of at most ``iterations``, waits scaled to
    nothing, whose agent is the real CLI ``command`` in its own environment ``cli_env``."""
    return base_env(
        **{
            **cli_env,
            "FRESHER_AGENT_BACKEND": backend,
            "FRESHER_AGENT_COMMAND": str(command),
            "FRESHER_MODE": "planning",
            "FRESHER_MAX_ITERATIONS": str(iterations),
            "FORGEFLARE_TIME_SCALE": "0",
            **settings,
        }
    )


@dataclass
class CliLoop:
    """A finished loop over a real CLI agent: its exit, record, project and first log."""

    done: Done
    record: dict[str, Any]
    project: Project
    log: str

    @property
    def rows(self) -> list[dict[str, Any]]:
        return self.record["iterations"]  # type: ignore[no-any-return]


async def finished_loop(project: Project, env: dict[str, str]) -> CliLoop:
    """``project``'s loop run to its end in ``env``; it must have recorded an iteration."""
    done = await project.arun(env=env)
    record = project.record()
    assert record["iterations"], done.stdout + done.stderr
    log = (project.run_dirs()[0] / "iteration-001.log").read_text()
    return CliLoop(done, record, project, log)
