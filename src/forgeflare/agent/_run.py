"""The shell around the turn loop: ``forgeflare run`` as a process.

Start-up checks (hooks config, API key) happen before the first API call; the stale
convergence file is deleted; every turn's end writes ``final`` (also with no hooks: the
supervisor depends on it); the transcript is flushed line by line and ``context.md`` is
written on the way out, however the process ends short of SIGKILL.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

from forgeflare._budget import worst_case_usd
from forgeflare._clock import utc_timestamp
from forgeflare._completion import completion_signal, find_question
from forgeflare._errors import ConfigError
from forgeflare._pricing import price_usd
from forgeflare.agent._agent_hooks import builtin_hooks
from forgeflare.agent._client import DEFAULT_BASE_URL, MessagesClient, checked_base_url
from forgeflare.agent._display import AgentDisplay
from forgeflare.agent._errors import UsageLimitError
from forgeflare.agent._messages import Message, TextBlock
from forgeflare.agent._prompt import build_system_prompt
from forgeflare.agent._retry import RetryingClient, backoff_schedule
from forgeflare.agent._session import SessionWriter
from forgeflare.agent._turn import TurnLoop, TurnResult
from forgeflare.agent.tools import tool_schemas
from forgeflare.agent.tools._registry import TOOL_NAMES
from forgeflare.disk import (
    WRITTEN_FOLDERS,
    Final,
    check_project_folders,
    clear_convergence,
    convergence_path,
    write_final,
)
from forgeflare.hooks import (
    EXIT_CODES,
    HOOKS_RELPATH,
    Hook,
    HookPipeline,
    build_pipeline,
    collect_agent_hooks,
)
from forgeflare.platform import end_adopted
from forgeflare.security import SANDBOX_ENV, require_sandbox, scope_abstract_sockets
from forgeflare.trust import TrustItem, TrustPin, agent_trust_items, require_trust

__all__ = ["DEFAULT_MAX_TOKENS", "DEFAULT_MODEL", "RunOptions", "run_agent"]

_ORPHAN_GRACE = 2.0
"""Seconds an orphan left at the end of the run gets between TERM and KILL."""

DEFAULT_MODEL = "claude-opus-4-6"
DEFAULT_MAX_TOKENS = 16384

EXIT_INTERRUPTED = {signal.SIGINT: 130, signal.SIGTERM: 143}


@dataclass
class RunOptions:
    """Everything ``forgeflare run`` takes from its command line."""

    cwd: Path
    model: str = DEFAULT_MODEL
    max_tokens: int = DEFAULT_MAX_TOKENS
    api_url: str | None = None
    verbose: bool = False
    hooks_file: Path | None = None
    hooks_modules: Sequence[str] = ()
    python_hooks: Sequence[Hook] = ()
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    trust_project: bool = False
    max_cost: float | None = None
    max_requests: int | None = None


def _api_key(options: RunOptions, base_url: str) -> str | None:
    key = options.env.get("ANTHROPIC_API_KEY") or None
    if key is None and base_url == DEFAULT_BASE_URL:
        raise ConfigError(
            "ANTHROPIC_API_KEY is not set: export it, or point --api-url / ANTHROPIC_API_URL "
            "at another endpoint (e.g. `forgeflare mock-api`)"
        )
    return key


async def _interactive_prompts() -> AsyncIterator[str]:
    while True:
        try:
            line = await trio.to_thread.run_sync(input, "> ", abandon_on_cancel=True)
        except EOFError:
            return
        if line.strip() == "exit":
            return
        if line.strip():
            yield line


async def _one(prompt: str) -> AsyncIterator[str]:
    yield prompt


def prompt_source(prompt: str | None) -> AsyncIterator[str]:
    """The argument, else piped stdin (one prompt), else an interactive prompt."""
    if prompt is not None:
        return _one(prompt)
    if not sys.stdin.isatty():
        text = sys.stdin.read()
        if not text.strip():
            raise ConfigError("no prompt: give one as an argument or on stdin")
        return _one(text)
    return _interactive_prompts()


async def run_agent(
    options: RunOptions, prompts: AsyncIterator[str], *, display: AgentDisplay | None = None
) -> int:
    """Run turns for each prompt; returns the process exit status."""
    display = display or AgentDisplay(verbose=options.verbose)
    project_dir = options.cwd.resolve()
    if not project_dir.is_dir():
        raise ConfigError(f"--dir {options.cwd}: not a directory")
    check_project_folders(project_dir, WRITTEN_FOLDERS)  # a clone's links must not lead out
    base_url = checked_base_url(options.api_url, options.env)
    api_key = _api_key(options, base_url)
    if options.env.get(SANDBOX_ENV):
        # First, before a thread exists: threads and children made later inherit the scope.
        scope_abstract_sockets()
        await require_sandbox(project_dir)  # os.environ: already without secrets
    display.verbose_info(f"API URL: {base_url}")

    pin, override = _trust_pin(options, project_dir)
    collected = collect_agent_hooks(
        project_dir=project_dir,
        hooks_file=options.hooks_file,
        hooks_modules=options.hooks_modules,
        python_hooks=options.python_hooks,
        builtins=builtin_hooks(project_dir),
        tools=TOOL_NAMES,
    )
    session = SessionWriter(project_dir)
    hooks = build_pipeline(
        project_dir=project_dir,
        hooks=collected,
        audit_path=session.directory / "hooks.jsonl",
        log=display.warn,
        pin=pin.refusal if pin is not None else None,
    )
    if override:
        display.warn("project hooks trusted without review (--trust-project / FORGEFLARE_TRUST)")
    warning = clear_convergence(convergence_path(project_dir))
    if warning:
        display.warn(warning)
    client = MessagesClient(base_url=base_url, api_key=api_key)
    if isinstance(options.env, MutableMapping):
        # From here the key is in the client's header only (os.environ never held it: the
        # CLI scrubbed it), so no copy outlives its one use.
        options.env.pop("ANTHROPIC_API_KEY", None)
    loop = _turn_loop(options, project_dir, client, hooks, display, session)
    return await _run_prompts(options, prompts, client, loop, display, session)


def _trust_pin(options: RunOptions, project_dir: Path) -> tuple[TrustPin | None, bool]:
    """Before any project hook module is imported or hook configured: nothing from the project
    runs unless the user trusted exactly this content. Returns the pin that checks it again
    before every hook call (the agent may rewrite a trusted hook mid-run), and whether trust
    came from the override (``--trust-project`` / ``FORGEFLARE_TRUST``)."""

    def gather() -> list[TrustItem]:
        return agent_trust_items(project_dir, options.hooks_file, options.hooks_modules)

    trusted_items = gather()
    trust = require_trust(project_dir, trusted_items, options.env, flag=options.trust_project)
    override = trust.reason == "override"
    if override or not trusted_items:
        return None, override
    hooks_file = options.hooks_file or project_dir / HOOKS_RELPATH
    return TrustPin(project_dir, gather, trusted_items, watch=(hooks_file,)), override


def _turn_loop(
    options: RunOptions,
    project_dir: Path,
    client: MessagesClient,
    hooks: HookPipeline,
    display: AgentDisplay,
    session: SessionWriter,
) -> TurnLoop:
    """The turn loop over the client (with retries), the tools and the project's hooks."""
    # FORGEFLARE_PROMPT_CACHE=0 turns the breakpoints off (for comparisons)
    cached = options.env.get("FORGEFLARE_PROMPT_CACHE", "1") != "0"
    loop = TurnLoop(
        model_client=RetryingClient(
            client,
            schedule=backoff_schedule(options.env),
            log=display.retry,
            on_discard=display.discard,
        ),
        model=options.model,
        max_tokens=options.max_tokens,
        system=build_system_prompt(project_dir, loop="FRESHER_RUN_ID" in options.env),
        tools=tool_schemas(),
        cwd=project_dir,
        hooks=hooks,
        display=display,
        transcript=session,
        max_cost=options.max_cost,
        max_requests=options.max_requests,
        price=lambda spend: price_usd(options.model, spend.tokens.model_dump()),
        worst_case=lambda input_tokens, max_tokens: worst_case_usd(
            options.model, input_tokens=input_tokens, max_tokens=max_tokens, cached=cached
        ),
        prompt_cache=cached,
    )
    if price_usd(options.model, {"input": 1}) is None:
        display.warn(
            f"no price known for model {options.model!r}: tokens are recorded, cost is unknown"
            + (" and --max-cost cannot be enforced" if options.max_cost else "")
        )
    return loop


async def _run_prompts(
    options: RunOptions,
    prompts: AsyncIterator[str],
    client: MessagesClient,
    loop: TurnLoop,
    display: AgentDisplay,
    session: SessionWriter,
) -> int:
    """A turn for each prompt, until they end or a signal interrupts; the exit status."""
    project_dir = loop.cwd
    last: TurnResult | None = None
    received: list[signal.Signals] = []
    in_turn = False
    since = time.time()
    try:
        async with client, trio.open_nursery() as nursery:
            nursery.start_soon(_watch_signals, nursery.cancel_scope, received)
            async for prompt in prompts:
                session.write_prompt(prompt)  # only the first prompt is written
                in_turn = True
                last = await loop.run_turn(prompt)
                in_turn = False
                _write_final(
                    project_dir,
                    last,
                    display,
                    model=options.model,
                    session=session,
                    question=last.question or _question(loop.conversation),
                    tag=completion_signal(_last_text(loop.conversation)),
                )
            nursery.cancel_scope.cancel()
    finally:
        session.write_context(
            model=options.model,
            exit_reason=last.reason.value if last else None,
            messages=loop.conversation,
        )
        with trio.CancelScope(shield=True):
            # What left the process group of a tool or hook and was adopted since (the CLI is
            # a subreaper; elsewhere this finds none) does not outlive the run.
            await trio.to_thread.run_sync(end_adopted, since, _ORPHAN_GRACE)
    if received:
        name = received[0].name
        display.warn(f"interrupted by {name}")
        if in_turn:
            # A turn cut short ends too: its final says so (a loop reads `interrupted`).
            _write_interrupted(project_dir, display, name, model=options.model, session=session)
        return EXIT_INTERRUPTED[received[0]]
    if last is None:
        return 0
    display.verbose_info(f"turn ended: {last.reason.value}")
    return EXIT_CODES[last.reason]


def _write_final(
    project_dir: Path,
    result: TurnResult,
    display: AgentDisplay,
    *,
    model: str,
    session: SessionWriter | None = None,
    question: str | None = None,
    tag: str | None = None,
) -> None:
    tokens = result.spend.tokens
    failure = result.failure
    final = Final(
        reason=result.reason.value,
        tool_iterations=result.tool_iterations,
        total_tokens=result.total_tokens,
        timestamp=utc_timestamp(),
        tokens=tokens,
        cost_usd=price_usd(model, tokens.model_dump()),
        requests=result.spend.requests,
        model=model,
        session_id=session.session_id if session is not None else None,
        resets_at=(
            utc_timestamp(failure.resets_at)
            if isinstance(failure, UsageLimitError) and failure.resets_at is not None
            else None
        ),
        transient=failure.transient if failure is not None else None,
        detail=str(failure)[:200] if failure is not None else None,
        question=question,
        signal=tag,
    )
    try:
        write_final(convergence_path(project_dir), final)
    except OSError as exc:
        display.warn(f"could not write {convergence_path(project_dir)}: {exc.strerror}")


def _last_text(conversation: Sequence[Message]) -> str:
    """The text of the final assistant message (empty: none)."""
    for message in reversed(conversation):
        if message.role == "assistant":
            return "\n".join(b.text for b in message.content if isinstance(b, TextBlock))
    return ""


def _question(conversation: Sequence[Message]) -> str | None:
    """The question of a final message that parks the loop (the BLOCKED tag), if it does."""
    return find_question(_last_text(conversation)) if conversation else None


def _write_interrupted(
    project_dir: Path, display: AgentDisplay, name: str, *, model: str, session: SessionWriter
) -> None:
    final = Final(
        reason="interrupted",
        timestamp=utc_timestamp(),
        model=model,
        session_id=session.session_id,
        detail=f"interrupted by {name}",
    )
    try:
        write_final(convergence_path(project_dir), final)
    except OSError as exc:
        display.warn(f"could not write {convergence_path(project_dir)}: {exc.strerror}")


async def _watch_signals(scope: trio.CancelScope, received: list[signal.Signals]) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            received.append(signal.Signals(signum))
            # Cancelling the turn ends a running Bash command's process group (TERM, grace,
            # KILL, shielded) before the records are flushed on the way out.
            scope.cancel()
            return
