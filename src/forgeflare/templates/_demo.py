"""``forgeflare demo``: a whole Ralph loop offline, on ``forgeflare mock-api``.

In a fresh project (a new temporary directory, or ``--dir``): the demo's seed files (a spec,
a two-task plan, a stale ``build/``), then ``init`` in-process, then a git repository with a
first commit (the loop counts the commits the story's agent makes), then ``forgeflare mock-api``
as a subprocess with the scripted story (``templates/demo/story.json``; its responses are
consumed in order across the agent processes of every iteration), then ``forgeflare loop
--mode building`` as a subprocess against it, then the mock is stopped.

``--backend NAME`` runs the story through another agent's real CLI instead (a backend of the
registry that has an offline demo: ``demo_api``): the mock speaks the API that CLI does (the
Messages API, or the Responses API), the story is the same two tasks done with shell commands,
and the environment is the backend's ``demo_env`` (the mock's URL, a dummy key, what the CLI
needs besides). A CLI that is not installed is said in one line with how to install it.

The summary at the end is read from the records (run.json, events.jsonl, the audit and
session logs, convergence.json), never from what the story is expected to do:
:func:`summarize` is pure over those texts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from forgeflare._errors import ForgeflareError
from forgeflare.disk import json_objects
from forgeflare.mockapi import start_mock_api, stop_mock_api
from forgeflare.security import run_git
from forgeflare.supervisor import RunRecord, newest_run, runs_root
from forgeflare.templates._init import TemplateError, TemplateUsageError, init_project

__all__ = [
    "DemoSummary",
    "demo_story_text",
    "run_demo",
    "seed_files",
    "summarize",
]

_LOOP_TIMEOUT_S = 300.0
_MAX_ITERATIONS = 4
"""A safety net: the story needs 2 iterations."""


def _forgeflare(python: str, *args: str) -> list[str]:
    return [python, "-P", "-m", "forgeflare", *args]  # -P: not the cwd first on sys.path


def demo_story_text(api: str | None = None, *, shell_tool: str = "Bash") -> str:
    """The mock-api script of the demo (JSON): the own agent's, or with ``api`` the story for
    a CLI agent that speaks that API (``messages`` or ``responses``), its shell tool called
    ``shell_tool`` (the name the agent gives it)."""
    name = "story.json" if api is None else f"story-{api}.json"
    text = (resources.files("forgeflare.templates") / "demo" / name).read_text("utf-8")
    if shell_tool == "Bash":
        return text
    story = json.loads(text)
    for response in story.get("responses", []):
        for block in response.get("content", []):
            if block.get("type") == "tool_use" and block.get("name") == "Bash":
                block["name"] = shell_tool
    return json.dumps(story, indent=2)


@dataclass(frozen=True)
class _Agent:
    """The agent a demo runs: the own one (``backend`` empty), or a CLI backend's."""

    backend: str = ""
    api: str = "messages"
    env: Callable[[str, Path], dict[str, str]] | None = None
    """The backend's ``demo_env``: its environment for the mock at a URL."""
    args: tuple[str, ...] = ()
    """The backend's ``demo_args``: more ``loop`` arguments (its model's spelling)."""
    shell_tool: str = "Bash"
    """The name the agent gives its shell tool (the story calls it)."""

    def url(self, port: int) -> str:
        base = f"http://127.0.0.1:{port}"
        return f"{base}/v1" if self.api == "responses" else base

    def loop_args(self) -> list[str]:
        return ["--backend", self.backend, *self.args] if self.backend else []


def _demo_agent(name: str, env: Mapping[str, str]) -> _Agent:
    """The agent ``--backend NAME`` names, checked before anything is written:
    :class:`TemplateUsageError` (exit 2) for one without an offline demo or not installed.
    A backend says how with ``demo_api``, ``demo_env``, ``demo_args``, ``program`` and
    ``install_hint``."""
    from forgeflare.supervisor.backends import BACKENDS

    if name == "forgeflare":
        return _Agent()
    backend = BACKENDS[name]()
    api = getattr(backend, "demo_api", None)
    demo_env = getattr(backend, "demo_env", None)
    if not isinstance(api, str) or not callable(demo_env):
        raise TemplateUsageError(f"--backend {name}: this agent has no offline demo")
    program = str(getattr(backend, "program", name))
    if shutil.which(program, path=env.get("PATH")) is None:
        hint = getattr(backend, "install_hint", "") or f"its installer (`{program}` on PATH)"
        raise TemplateUsageError(
            f"--backend {name}: `{program}` is not installed (not on PATH); install it with "
            f"`{hint}`, then run `forgeflare demo --backend {name}` again"
        )
    args = tuple(getattr(backend, "demo_args", ()))
    return _Agent(name, api, demo_env, args, str(getattr(backend, "demo_shell_tool", "Bash")))


def seed_files() -> dict[str, str]:
    """The demo project's own files, written before ``init`` (which then keeps them)."""
    root = resources.files("forgeflare.templates") / "demo" / "project"
    files = {
        "IMPLEMENTATION_PLAN.md": (root / "IMPLEMENTATION_PLAN.md").read_text("utf-8"),
        "specs/calculator.md": (root / "specs" / "calculator.md").read_text("utf-8"),
        # Written here, not shipped: "build/" is ignored by most .gitignore files.
        "build/stale-output.txt": "Stale output of an old build script.\n",
        # The tests' bytecode is not work: a tree with it untracked is not a committed one
        # (the convergence hook signals only on a committed tree).
        ".gitignore": "__pycache__/\n",
    }
    return files


@dataclass
class DemoSummary:
    """What the records say about the loop the demo ran."""

    finish_type: str | None = None
    exit_code: int | None = None
    iterations: int = 0
    commits: int = 0
    tool_calls: int = 0
    tools: dict[str, int] = field(default_factory=dict)
    blocked: list[str] = field(default_factory=list)
    signals: list[str] = field(default_factory=list)
    hooks: list[str] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    last_final: str | None = None
    """``final.reason`` in convergence.json (it holds the last iteration's state)."""

    @property
    def complete(self) -> bool:
        """Whether the loop finished ``complete``."""
        return self.finish_type == "complete"


def summarize(
    *,
    run: RunRecord | None,
    events_jsonl: str = "",
    audit_log: str = "",
    sessions_log: str = "",
    convergence_json: str = "",
) -> DemoSummary:
    """Read the figures of a run from its record texts (pure)."""
    summary = DemoSummary()
    try:
        conv = json.loads(convergence_json) if convergence_json.strip() else {}
    except ValueError:
        conv = {}
    if isinstance(conv, dict) and isinstance(conv.get("final"), dict):
        summary.last_final = conv["final"].get("reason")
    if run is not None:
        summary.finish_type = run.finish_type
        summary.exit_code = run.exit_code
        summary.iterations = run.totals.iterations
        summary.commits = run.totals.commits
        for it in run.iterations:
            for obs in it.observations:
                reason = f": {obs['reason']}" if obs.get("reason") else ""
                summary.signals.append(f"{obs.get('signal')} (iteration {it.number}){reason}")
    for event in json_objects(events_jsonl):
        if event.get("event") == "hook":
            summary.hooks.append(f"{event.get('hook')} {event.get('status')}")
    tools: Counter[str] = Counter()
    for line in audit_log.splitlines():
        fields = line.split("\t")
        if len(fields) < 4:
            continue
        tools[fields[1]] += 1
        if fields[2] == "BLOCKED":
            reason = fields[4] if len(fields) > 4 else ""
            summary.blocked.append(f"{fields[1]} {fields[3]}" + (f" ({reason})" if reason else ""))
    summary.tools = dict(sorted(tools.items()))
    summary.tool_calls = sum(tools.values())
    for line in sessions_log.splitlines():
        pairs = dict(f.split("=", 1) for f in line.split("\t")[1:] if "=" in f)
        if "reason" in pairs:
            summary.sessions.append(pairs["reason"])
    return summary


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _hook_counts(hooks: list[str]) -> str:
    counts = Counter(hooks)
    return ", ".join(f"{h} ×{n}" if n > 1 else h for h, n in counts.items()) or "none"


def _render(summary: DemoSummary, *, project: Path, run_dir: Path | None) -> list[str]:
    tools = ", ".join(f"{name} {n}" for name, n in summary.tools.items())
    lines = [
        "",
        "── forgeflare demo: summary ──────────────────────────────────────────────",
        f"finish type      {summary.finish_type or 'unknown'} (exit {summary.exit_code})",
        f"iterations       {summary.iterations}",
        f"commits          {summary.commits}",
        f"tool calls       {summary.tool_calls}" + (f" ({tools})" if tools else ""),
        f"blocked          {len(summary.blocked)}",
        *(f"                   {b}" for b in summary.blocked),
        f"signals          {len(summary.signals)}",
        *(f"                   {s}" for s in summary.signals),
        f"lifecycle hooks  {_hook_counts(summary.hooks)}",
        f"agent sessions   {len(summary.sessions)}"
        + (f" (ended: {', '.join(summary.sessions)})" if summary.sessions else ""),
        "records",
    ]
    rel_run = run_dir.relative_to(project).as_posix() if run_dir else ".fresher/runs/"
    records = [
        ("run", f"{rel_run}/ (run.json, events.jsonl, iteration-NNN.log)"),
        ("audit log", ".forgeflare/audit.log"),
        ("sessions", ".forgeflare/sessions.log"),
        (
            "convergence",
            ".forgeflare/convergence.json (last iteration: final "
            f"{summary.last_final or 'missing'})",
        ),
        ("transcripts", ".entire/metadata/<session-id>/"),
    ]
    lines += [f"  {name:<15}{where}" for name, where in records]
    lines.append(f"project          {project}")
    return lines


def _child_env(base: Mapping[str, str], api_url: str, python: str) -> dict[str, str]:
    env = {k: v for k, v in base.items() if not k.startswith("FRESHER_")}
    env.pop("ANTHROPIC_BASE_URL", None)
    env["ANTHROPIC_API_URL"] = api_url
    # A dummy key: the mock accepts any; a real key is never needed (or sent anywhere else).
    env["ANTHROPIC_API_KEY"] = "demo-key-offline"
    env["FRESHER_ERROR_PAUSE"] = "0"
    env["PYTHONUNBUFFERED"] = "1"
    # The hooks are `#!/usr/bin/env python3` and the story runs `python3 -m unittest`: the
    # interpreter running forgeflare comes first, so they work in a bare virtual environment.
    bindir = str(Path(python).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", os.defpath)
    return env


def _prepare(project: Path) -> None:
    if project.exists():
        if not project.is_dir():
            raise TemplateUsageError(f"--dir {project}: not a directory")
        if any(project.iterdir()):
            raise TemplateUsageError(
                f"--dir {project}: not empty; the demo needs a fresh directory"
            )
    try:
        for rel, text in seed_files().items():
            path = project / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise TemplateError(f"{project}: cannot write the demo project: {exc}") from exc


_DEMO_IDENTITY = {"user.name": "forgeflare demo", "user.email": "demo@forgeflare.invalid"}
"""The demo repository's own committer: the agent commits with it, whatever git knows of you."""


def _make_repository(project: Path) -> str | None:
    """The project as a git repository with everything so far in a first commit; ``None``,
    or why not (no git: the loop then says it cannot count commits, and the demo goes on)."""
    steps = [
        ("init", "-q"),
        *(("config", key, value) for key, value in _DEMO_IDENTITY.items()),
        ("add", "-A"),
        ("commit", "-q", "-m", "The demo project: a spec and a two-task plan"),
    ]
    for args in steps:
        done = run_git(project, *args)
        if not done.ok:
            return (done.stderr.strip().splitlines() or [f"git {args[0]} failed"])[-1]
    return None


def _write_report(project: Path, run_dir: Path | None) -> Path | None:
    """The run's self-contained HTML report beside its records (what `forgeflare report
    --html` writes); ``None`` when it cannot be written."""
    if run_dir is None:
        return None
    from forgeflare.report import collect_digest, render_html

    out = run_dir / "report.html"
    try:
        page = render_html(collect_digest(project, run_dir), run_dir=run_dir, out=out)
        out.write_text(page, encoding="utf-8")
    except (OSError, ForgeflareError):
        return None
    return out


def _set_up(project: Path, echo: Callable[[str], None]) -> None:
    """Make the demo project (its files, ``forgeflare init``, a first commit), saying each step."""
    _prepare(project)
    echo(f"forgeflare demo: a Ralph loop, offline, in {project}")
    echo("")
    echo("$ forgeflare init")
    for line in init_project(project).lines():
        echo(line)
    echo("")
    echo("$ git init && git add -A && git commit   (the loop counts the agent's commits)")
    problem = _make_repository(project)
    echo(f"no git repository: {problem}" if problem else "committed the demo project")


def _run_loop(
    project: Path,
    agent: _Agent,
    url: str,
    scratch: Path,
    python: str,
    base_env: Mapping[str, str],
    echo: Callable[[str], None],
) -> subprocess.CompletedProcess[bytes]:
    """``forgeflare loop --mode building`` in the demo project, its agent on the mock at
    ``url``, writing to this process's terminal."""
    argv = _forgeflare(python, "loop", "--mode", "building", *agent.loop_args())
    argv += ["--dir", str(project), "--max-iterations", str(_MAX_ITERATIONS)]
    argv += ["--iteration-timeout", "120s" if agent.backend else "60s"]
    shown = " ".join(["--mode building", *agent.loop_args()])
    echo("")
    echo(f"$ forgeflare loop {shown} --max-iterations {_MAX_ITERATIONS}")
    sys.stdout.flush()
    child_env = _child_env(base_env, url, python)
    if agent.env is not None:
        child_env.update(agent.env(url, scratch))
    return subprocess.run(
        argv,
        cwd=project,
        env=child_env,
        stdin=subprocess.DEVNULL,
        timeout=_LOOP_TIMEOUT_S,
        check=False,
    )


def run_demo(
    project_dir: Path | None = None,
    *,
    backend: str = "forgeflare",
    python: str = sys.executable,
    env: Mapping[str, str] | None = None,
    echo: Callable[[str], None] = lambda line: print(line, flush=True),
) -> int:
    """Run the demo (through ``backend``'s agent); 0 when the loop finished ``complete``, else
    non-zero.

    The loop writes to this process's stdout and stderr directly; the mock server's stderr
    is kept aside and shown only when the loop does not finish complete.
    """
    base_env = os.environ if env is None else env
    agent = _demo_agent(backend, base_env)
    project = (
        Path(tempfile.mkdtemp(prefix="forgeflare-demo-")) if project_dir is None else project_dir
    )
    project = project.resolve()
    _set_up(project, echo)
    with tempfile.TemporaryDirectory(prefix="forgeflare-demo-mock-") as tmp:
        scratch = Path(tmp)
        story = scratch / "story.json"
        story.write_text(
            demo_story_text(agent.api if agent.backend else None, shell_tool=agent.shell_tool),
            "utf-8",
        )
        err = scratch / "mock-api.err"
        api = [] if agent.api == "messages" else ["--api", agent.api]
        echo("")
        echo(
            f"$ forgeflare mock-api {' '.join([*api, ''])}--script story.json"
            "   (a scripted model: no network, no key)"
        )
        sys.stdout.flush()
        mock, port = start_mock_api(
            story,
            port_file=scratch / "port",
            stderr_path=err,
            args=api,
            python=python,
        )
        try:
            url = agent.url(port)
            echo(f"listening on {url}")
            loop = _run_loop(project, agent, url, scratch, python, base_env, echo)
        except subprocess.TimeoutExpired as exc:
            raise TemplateError(f"the demo loop did not finish in {_LOOP_TIMEOUT_S:g}s") from exc
        finally:
            stop_mock_api(mock)
            mock_errors = _read(err).strip()
    newest = newest_run(runs_root(project, {}))
    run_dir = newest[0] if newest else None
    summary = summarize(
        run=newest[1] if newest else None,
        events_jsonl=_read(run_dir / "events.jsonl") if run_dir else "",
        audit_log=_read(project / ".forgeflare" / "audit.log"),
        sessions_log=_read(project / ".forgeflare" / "sessions.log"),
        convergence_json=_read(project / ".forgeflare" / "convergence.json"),
    )
    for line in _render(summary, project=project, run_dir=run_dir):
        echo(line)
    report = _write_report(project, run_dir)
    if report is not None:
        echo(f"report           {report}")
        echo(f"                 (open it in a browser; or: forgeflare report --dir {project})")
    if loop.returncode == 0 and summary.complete:
        echo("The loop finished complete.")
        return 0
    if mock_errors:
        echo(f"forgeflare mock-api said: {mock_errors}")
    echo(f"forgeflare demo: the loop did not finish complete (exit {loop.returncode})")
    return loop.returncode or 1
