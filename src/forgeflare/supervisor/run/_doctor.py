"""``forgeflare doctor``: the checks the loop's preflight makes, for every configured agent,
plus one tiny live request for the own agent.

Each agent (the primary and every fallback, with its profile's environment) gets the offline
checks (its executable, the variables its CLI reads, root without ``IS_SANDBOX``); the own agent
also gets a one-token request against its endpoint. A usage limit (429) is reported, not a
failure: the loop waits it out or falls back. Exit 0 when nothing would fail, 1 otherwise.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import typer

from forgeflare._cliopts import ProjectDir
from forgeflare._errors import ConfigError

__all__ = ["Check", "live_verdict", "register"]

_HELP = """Check every configured agent before a night: what would make each iteration fail.

For the primary agent and each [agent] fallback (with its profile's env): the executable on
PATH, the variables its CLI reads (Claude Code: ANTHROPIC_BASE_URL and a key, IS_SANDBOX=1 as
root; Codex: its sandbox helper, lost with CODEX_HOME under /tmp), and for the own agent
(backend forgeflare) one tiny request against its endpoint; a usage limit (429) there is
reported, not a failure. One line per check. Exit 0 when every agent would start, 1 when one
would not, 2 for a bad configuration.
"""


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the doctor's: ``ok`` false when the agent would fail."""

    agent: str
    ok: bool
    text: str

    @property
    def line(self) -> str:
        return f"{self.agent}: {'ok' if self.ok else 'FAIL'}: {self.text}"


def live_verdict(status: int, url: str, retry_after: str = "") -> tuple[bool, str]:
    """What one tiny request's HTTP ``status`` at ``url`` says of the agent (pure)."""
    if status < 300:
        return True, f"the API at {url} answers"
    if status == 429:
        after = f", retry-after {retry_after}s" if retry_after else ""
        return True, f"the API at {url} answers with a usage limit (429{after}): the loop waits"
    if status in (401, 403):
        return False, f"the API at {url} refused the key (HTTP {status}): check ANTHROPIC_API_KEY"
    return False, f"the API at {url} answered HTTP {status}"


def _live(env: Mapping[str, str], model: str) -> tuple[bool, str]:
    from forgeflare._apiurl import resolve_base_url
    from forgeflare._httpx import httpx

    url = resolve_base_url(None, env)
    key = env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN") or ""
    body = {"model": model, "max_tokens": 1, "messages": [{"role": "user", "content": "ping"}]}
    headers = {"x-api-key": key, "anthropic-version": "2023-06-01"}
    try:
        response = httpx.post(f"{url}/v1/messages", json=body, headers=headers, timeout=30)
    except httpx.HTTPError as exc:
        return False, f"cannot reach the API at {url}: {exc}"
    return live_verdict(response.status_code, url, response.headers.get("retry-after", ""))


def _elsewhere(profile_env: Mapping[str, str]) -> bool:
    """The profile moves the endpoint but keeps the user's key (a project's config may)."""
    urls = ("ANTHROPIC_API_URL", "ANTHROPIC_BASE_URL")
    keys = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
    return any(u in profile_env for u in urls) and not any(k in profile_env for k in keys)


def agent_checks(project: Path, env: Mapping[str, str]) -> list[Check]:
    """Every check for every configured agent. Raises ConfigError for a bad configuration."""
    from forgeflare.agent import DEFAULT_MODEL
    from forgeflare.supervisor.agents._fallback import AgentSpec, parse_agent_spec
    from forgeflare.supervisor.config._config import load_config
    from forgeflare.supervisor.run._preflight import check_agent

    config = load_config(project, env=env).config
    specs = [AgentSpec(config.backend_name)]
    specs += [s for t in config.agent.fallback if (s := parse_agent_spec(t)) not in specs]
    checks = []
    for n, spec in enumerate(specs):
        label = f"{spec.label} ({'primary' if n == 0 else 'fallback'})"
        agent_env = {**env, **config.profile_env(spec.profile)}
        backend = config.backend_for(spec.backend)
        argv = config.agent_argv(sys.executable, backend, spec.profile)
        try:
            backend.preflight(project, argv, agent_env)
            check_agent(backend, argv, agent_env)
        except ConfigError as exc:
            checks.append(Check(label, False, str(exc)))
            continue
        checks.append(Check(label, True, f"{argv[0] if argv else '?'} found, settings fit"))
        if backend.name == "forgeflare":
            if _elsewhere(config.profile_env(spec.profile)):
                # The user's key never goes to an address a project's config chose untrusted.
                note = "no live request: the profile's env names the endpoint, not the key"
                checks.append(Check(label, True, note))
                continue
            profile = config.agent.profiles.get(spec.profile)
            model = (profile.model if profile else "") or config.fresher.model or DEFAULT_MODEL
            checks.append(Check(label, *_live(agent_env, model)))
    return checks


def _doctor(project_dir: ProjectDir = Path()) -> None:
    if not project_dir.is_dir():
        raise ConfigError(f"--dir {project_dir}: not a directory")
    checks = agent_checks(project_dir, dict(os.environ))
    for check in checks:
        typer.echo(check.line)
    if not all(c.ok for c in checks):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``doctor``."""
    app.command("doctor", help=_HELP)(_doctor)
