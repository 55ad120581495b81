"""A completion claim's evidence in the stop-hook: the frame's gate, then its reviewer.

The I/O around ``_claims``. Imported only when the last message claims completion under a frame
with a gate or a reviewer: the Stop without a claim never loads it (nor httpx, trio or
pydantic). The gate runs in the project, bounded; the reviewer is
``forgeflare.agent.ask_reviewer``, asked with the hook's ``ANTHROPIC_API_KEY`` and
``ANTHROPIC_API_URL`` / ``ANTHROPIC_BASE_URL`` (the session's own), and its request and answer
are kept in ``.forgeflare/loop-reviews/``. Its tools (subprocess, ``_evidence``) load inside
the functions: the package names this module on every Stop.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from forgeflare.disk import read_limited_text
from forgeflare.stophook._claims import REVIEWS_RELPATH, ReviewNote, gate_refused, reviewer_refused
from forgeflare.stophook._machine import Frame, Refusal

if TYPE_CHECKING:  # the package loads this module on every Stop; its tools load on a claim
    from collections.abc import Callable

    from forgeflare._evidence import GateRun
    from forgeflare.security import BoxSettings
    from forgeflare.trust import TrustItem

    SettingsFor = Callable[[Path, Mapping[str, str]], BoxSettings]
    """A project's ``[security]`` settings for its gate: the stop-hook's caller reads them
    (the configuration lives above the stop-hook), and only when a claim has a gate."""

__all__ = [
    "GATE_TIMEOUT_S",
    "GATE_TRUST_KEY",
    "PLAN_FILE",
    "REVIEW_TIMEOUT_S",
    "Checked",
    "check_claim",
    "diff_since",
    "gate_trust_item",
    "gate_untrusted",
    "head_commit",
    "review_claim",
    "run_gate",
]

GATE_TRUST_KEY = "stop-hook gate"
"""The trust item ``stop-hook start --gate`` records: a gate runs only as the user set it."""
GATE_TIMEOUT_S = 600.0
"""How long a gate may take before the claim is refused."""
REVIEW_TIMEOUT_S = 45.0
"""The whole reviewer request: a reviewer that takes longer refuses the claim. The gate, the
reviewer and the state lock together stay within Claude Code's hook timeout (the plugin's is
700 s; at its timeout Claude Code would let the stop through unverified)."""
PLAN_FILE = "IMPLEMENTATION_PLAN.md"
"""The plan the reviewer is shown when the project has one (the loop's default plan file)."""
_WORK = (
    ".",
    ":(exclude).forgeflare/loop-state.*",
    ":(exclude).forgeflare/loop-reviews",
    ":(exclude).claude/idle-loop.local.md",
)
"""The work the diff shows: the project without the loop's own state and review files."""
_UNTRACKED_MAX = 50
"""New files shown to the reviewer at most (each is one ``git diff --no-index``)."""


class Checked(NamedTuple):
    """What the evidence said: why the claim is refused (``None``: it holds), and the
    reviewer's verdict when one was asked."""

    refused: Refusal | None
    review: ReviewNote | None = None


def gate_trust_item(gate: str, project: Path) -> TrustItem:
    """The gate as a trust item: its command and the project files it names."""
    from forgeflare.trust import command_item

    return command_item(GATE_TRUST_KEY, gate, project)


def gate_untrusted(gate: str, project: Path, environ: Mapping[str, str]) -> str:
    """Why the frame's ``gate`` may not run here (empty: it may). The state file is a project
    file like any other: a clone can carry one with a gate nobody here ever set."""
    from forgeflare.trust import TrustError, TrustStoreError, require_trust

    try:
        require_trust(project, [gate_trust_item(gate, project)], environ)
    except (TrustError, TrustStoreError) as exc:
        return (
            f"not run: this gate was not set with `forgeflare stop-hook start --gate` here, "
            f"or what it runs changed since ({exc})"
        )
    return ""


def run_gate(
    gate: str, project: Path, environ: Mapping[str, str], settings: BoxSettings | None = None
) -> GateRun:
    """Run ``gate`` with bash in ``project`` through the one gate runner: in the sandbox
    (unless ``settings``, the project's ``[security]``, turn it off; ``None``: the defaults,
    the box on), without the hook's secrets, bounded, nothing of it left behind."""
    from forgeflare.security import BoxSettings, run_project_gate_blocking

    return run_project_gate_blocking(
        gate,
        project=project,
        settings=settings or BoxSettings(),
        env=environ,
        timeout=GATE_TIMEOUT_S,
    )


def _git(project: Path, *args: str) -> tuple[int, str]:
    # forgeflare's one safe git (no fsmonitor, hooks, external diff or filter programs the
    # project's .git/config may name; no secrets): the frame can come from a copied tree.
    from forgeflare.security import run_git

    done = run_git(project, *args, timeout=30)
    return done.returncode, done.stdout


def head_commit(project: Path) -> str:
    """The commit checked out in ``project`` (empty: no git, or no commit yet)."""
    code, out = _git(project, "rev-parse", "--verify", "-q", "HEAD")
    return out.strip() if code == 0 else ""


def diff_since(
    project: Path,
    base: str,
    budget: int,
    environ: Mapping[str, str] | None = None,
    settings: BoxSettings | None = None,
) -> tuple[str, str]:
    """The work tree's diff since ``base`` (commits, uncommitted changes and new files) and
    its ``--stat`` (both empty outside git). New files are added while ``budget`` bytes last:
    in a session the agent often has not committed (or even added) what it wrote. Collected
    in the box the project's gate gets (``settings``, its ``[security]``; ``None``: the
    defaults; ``_reviewdiff``): the state can come from a copied tree, and the agent wrote
    the rest."""
    import os

    from forgeflare.security import collect_project_diff_blocking

    collected = collect_project_diff_blocking(
        project,
        base or None,
        env=os.environ if environ is None else environ,
        settings=settings,
        budget=budget,
        pathspec=_WORK,
        new_files=_UNTRACKED_MAX,
    )
    return collected.diff, collected.stat


def review_claim(
    frame: Frame,
    *,
    gate: GateRun | None,
    final_text: str,
    project: Path,
    environ: Mapping[str, str],
    save_as: str,
    settings: BoxSettings | None = None,
) -> ReviewNote:
    """Ask the frame's reviewer about its claim; never raises (a failure is the note's
    ``error``: the claim is then refused, never accepted)."""
    try:
        from functools import partial

        import trio

        from forgeflare._review import DEFAULT_MAX_DIFF, ReviewInput
        from forgeflare.agent import ask_reviewer

        diff, stat = diff_since(project, frame.base, DEFAULT_MAX_DIFF, environ, settings)
        try:
            plan = read_limited_text(project / PLAN_FILE, folder=project, errors="replace")
        except OSError:
            plan = ""
        given = ReviewInput(
            model=frame.reviewer,
            task=frame.prompt or "(the loop was started without a prompt: judge from the rest)",
            plan=plan,
            diff=diff,
            diff_stat=stat,
            max_diff=DEFAULT_MAX_DIFF,
            gate=gate,
            final_message=final_text,
            claim="tag",
        )
        folder = project / REVIEWS_RELPATH
        folder.mkdir(parents=True, exist_ok=True)
        ask = partial(
            ask_reviewer, given, env=environ, save_to=folder / save_as, timeout=REVIEW_TIMEOUT_S
        )
        answer = trio.run(ask)
    except Exception as exc:  # a reviewer never ends the hook, nor the loop
        error = " ".join(str(exc).split()) or type(exc).__name__
        return ReviewNote(model=frame.reviewer, complete=None, error=error)
    return ReviewNote(
        model=answer.model,
        complete=answer.complete,
        reasons=tuple(answer.reasons),
        missing=tuple(answer.missing),
        error=answer.error or "",
        tokens=sum(answer.tokens.values()),
        cost_usd=answer.cost_usd,
        file=answer.file or "",
    )


def check_claim(
    frame: Frame,
    *,
    depth: int,
    run_id: str,
    final_text: str,
    project: Path,
    environ: Mapping[str, str],
    settings_for: SettingsFor | None = None,
) -> Checked:
    """The evidence for the claim in ``final_text`` under ``frame`` (the ``depth``-th frame of
    run ``run_id``): its gate (in the box ``settings_for`` reads, ``None``: the defaults),
    then (the gate passed, or there is none) its reviewer."""
    read: list[BoxSettings | None] = []

    def box_of() -> BoxSettings | None:
        # Read once, and only when a gate or a reviewer's diff runs (it loads the supervisor).
        if not read:
            read.append(settings_for(project, environ) if settings_for else None)
        return read[0]

    gate: GateRun | None = None
    if frame.gate:
        untrusted = gate_untrusted(frame.gate, project, environ)
        if untrusted:
            from forgeflare._evidence import GateRun

            gate = GateRun(frame.gate, None, untrusted)
        else:
            gate = run_gate(frame.gate, project, environ, box_of())
        if not gate.passed:
            text, signature, note = gate_refused(gate, frame.iter)
            return Checked(Refusal(text, signature, note))
    if not frame.reviewer:
        return Checked(None)
    name = f"{run_id or 'loop'}-{depth}-{frame.iter:03d}.json"
    review = review_claim(
        frame,
        gate=gate,
        final_text=final_text,
        project=project,
        environ=environ,
        save_as=name,
        settings=box_of(),
    )
    refused = reviewer_refused(review, gate, frame.iter)
    if refused is None:
        return Checked(None, review)
    text, note = refused
    return Checked(Refusal(text, "", note), review)
