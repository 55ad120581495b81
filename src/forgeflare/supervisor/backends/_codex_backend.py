"""The Codex backend: ``codex exec --json`` with the prompt on stdin.

Everything forgeflare knows of Codex as an agent lives here and in its reader (:mod:`._codex`):
its sandbox, its account (its config file's provider may name the API), the offline facts
that make it fail, its budget bound and its ``init`` option.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from forgeflare.security import AgentBox
from forgeflare.supervisor.backends._backends import (
    AgentAccount,
    InitTemplate,
    LineReader,
    StreamBackend,
    register_backend,
)
from forgeflare.supervisor.backends._codex import CodexStreamReader, codex_home

__all__ = ["CodexBackend", "codex_problems", "codex_provider_url"]

_UNCONFINED = ("danger-full-access", "--dangerously-bypass-approvals-and-sandbox")


def _under(path: str, root: str) -> bool:
    path = path.rstrip("/") or "/"
    return path == root or path.startswith(root + "/")


def codex_problems(env: Mapping[str, str], argv: Sequence[str], helper_found: bool) -> list[str]:
    """What makes every Codex iteration fail in ``env`` (pure): its sandbox helper under a
    ``CODEX_HOME`` in ``/tmp``, which its sandbox hides. ``helper_found``: whether
    ``codex-linux-sandbox`` is on ``PATH``."""
    home = env.get("CODEX_HOME", "")
    tmpdir = env.get("TMPDIR", "").rstrip("/")
    unconfined = any(a in _UNCONFINED for a in argv)
    if helper_found or unconfined or not _under(home, "/tmp") or tmpdir not in ("", "/tmp"):
        return []
    # Codex links its sandbox helper under $CODEX_HOME/tmp/arg0; its sandbox gives commands
    # a fresh /tmp when TMPDIR is /tmp, so the link is gone when bwrap starts it.
    return [
        f"Codex's sandbox helper (codex-linux-sandbox) would be under CODEX_HOME={home}, which "
        "its sandbox hides (/tmp): every command would fail with `bwrap: execvp "
        "codex-linux-sandbox`; move CODEX_HOME out of /tmp (or put codex-linux-sandbox on PATH)"
    ]


def codex_provider_url(env: Mapping[str, str]) -> str:
    """The ``base_url`` of the ``model_provider`` that ``$CODEX_HOME/config.toml`` chooses, or
    ``""``; a damaged file names none."""
    try:
        text = (codex_home(env) / "config.toml").read_text(encoding="utf-8")
        config = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return ""
    providers, name = config.get("model_providers"), config.get("model_provider")
    if not isinstance(providers, dict) or not isinstance(name, str):
        return ""
    provider = providers.get(name)
    url = provider.get("base_url") if isinstance(provider, dict) else None
    return url if isinstance(url, str) else ""


@register_backend
@dataclass
class CodexBackend(StreamBackend):
    """Codex: ``codex exec --json`` with the prompt on stdin (``-``)."""

    name: str = "codex"
    secret_names: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY", "CODEX_API_KEY")
    box: ClassVar[AgentBox] = "own"
    account: ClassVar[AgentAccount | None] = AgentAccount(
        ("OPENAI_BASE_URL",),
        "https://api.openai.com/v1",
        ("CODEX_API_KEY", "OPENAI_API_KEY"),
        "CODEX_HOME",
    )
    overshoot: ClassVar[str] = (
        "one Codex turn: Codex streams its tokens only when a turn completes, and the "
        "loop ends it once they pass the cap"
    )
    init: ClassVar[InitTemplate | None] = InitTemplate("Codex (codex exec --json)")
    sandbox: str = "workspace-write"
    program: ClassVar[str] = "codex"
    deterministic_errors: ClassVar[tuple[str, ...]] = (
        r"\bbwrap: execvp\b",
        r"codex-linux-sandbox",
        r"\binvalid_api_key\b",
        r"\bmodel_not_found\b",
    )
    demo_api: ClassVar[str | None] = "responses"
    install_hint: ClassVar[str] = "npm install -g @openai/codex"
    args: ClassVar[tuple[str, ...]] = ("exec", "--json", "--skip-git-repo-check")
    last: ClassVar[tuple[str, ...]] = ("-",)
    """The prompt comes on stdin."""

    def options(self) -> list[str]:
        return ["--sandbox", self.sandbox] if self.sandbox else []

    @property
    def commits_itself(self) -> bool:
        # Codex's own sandbox keeps .git read-only (workspace-write) or everything (read-only).
        return self.sandbox not in ("workspace-write", "read-only")

    def reader(self) -> LineReader:
        return CodexStreamReader()

    def start_reader(self, *, argv: Sequence[str], env: Mapping[str, str]) -> LineReader:
        reader = CodexStreamReader()
        reader.setup(argv=argv, env=env)  # its model and CODEX_HOME (session files)
        return reader

    def problems(self, env: Mapping[str, str], argv: Sequence[str], *, root: bool) -> list[str]:
        helper = shutil.which("codex-linux-sandbox", path=env.get("PATH")) is not None
        return codex_problems(env, argv, helper)

    def configured_url(self, env: Mapping[str, str]) -> str:
        return codex_provider_url(env)

    def demo_env(self, url: str, scratch: Path) -> dict[str, str]:
        """A ``CODEX_HOME`` of the demo's own whose provider is the mock's Responses API, a key
        for it, and a ``TMPDIR`` outside ``CODEX_HOME`` (Codex loses its sandbox helper when
        its temporary files sit in its home)."""
        home, tmp = scratch / "codex-home", scratch / "codex-tmp"
        home.mkdir(parents=True, exist_ok=True)
        tmp.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text(
            'model = "gpt-5.5"\nmodel_provider = "demo"\n\n'
            "[model_providers.demo]\n"
            'name = "forgeflare demo"\n'
            f"base_url = {json.dumps(url)}\n"
            'wire_api = "responses"\n'
            'env_key = "OPENAI_API_KEY"\n'
            "request_max_retries = 0\n"
            "stream_max_retries = 0\n"
            "\n[features]\nshell_snapshot = false\n",
            encoding="utf-8",
        )
        return {"CODEX_HOME": str(home), "OPENAI_API_KEY": "demo-key-offline", "TMPDIR": str(tmp)}
