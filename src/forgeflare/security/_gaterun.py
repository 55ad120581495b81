"""The one gate runner: ``bash -c GATE`` in the project, in forgeflare's sandbox when it can.

A gate (``[limits] gate``, a stop-hook frame's ``--gate``, a fleet's landing gate) runs the
project's tests: code the agent can change. So it runs like the agent's own commands: inside
bubblewrap whenever bubblewrap works and ``[security] sandbox`` is not ``"off"``, whatever
the backend, with no secret in its environment (not even one ``pass_env`` names), on the one
process primitive (:func:`forgeflare.platform._process.run_child`: its own group, TERM, grace, KILL,
marked descendants ended, nothing left behind).

Where the gate runs is decided once per run (:func:`gate_box`), before it first runs: the
rule is :func:`choose_gate_box` (pure).
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from forgeflare._errors import ConfigError
from forgeflare._evidence import GateRun
from forgeflare.platform import HeadTail, run_child
from forgeflare.security._sandbox import BoxSettings, box_variables, sandbox_argv
from forgeflare.security._scopeexec import scoped_argv
from forgeflare.security._secrets import child_environment

__all__ = [
    "GATE_MARKER",
    "GateBox",
    "choose_gate_box",
    "gate_argv",
    "gate_box",
    "gate_box_blocking",
    "run_gate",
    "run_gate_blocking",
    "run_project_gate",
    "run_project_gate_blocking",
]

GATE_MARKER = "FORGEFLARE_GATE"
"""Carried by everything an unconfined gate starts, so what detaches from its group is ended
too (in the box, its own PID namespace ends with it)."""


@dataclass(frozen=True, slots=True)
class GateBox:
    """Where a run's gate runs: ``env`` holds the sandbox's variables (``None``: unconfined,
    or ``refused``: not at all), ``line`` says which in one line."""

    env: dict[str, str] | None
    network: bool
    line: str
    refused: str = ""
    """Why the gate may not run (``[security] sandbox = "bwrap"`` and no bubblewrap)."""


def choose_gate_box(setting: str, problem: str | None) -> tuple[bool, str, str]:
    """(boxed, the line that says where the gate runs, why it may not run) (pure).

    ``setting`` is ``[security] sandbox``; ``problem`` the probe's answer (``None``:
    bubblewrap works).
    """
    if setting == "off":
        return False, 'gate: runs unconfined ([security] sandbox = "off")', ""
    if problem is None:
        return True, "gate: runs in the sandbox (bubblewrap), without secrets", ""
    if setting == "bwrap":
        refused = f'not run: [security] sandbox = "bwrap": {problem}'
        return False, f"gate: {refused}", refused
    return False, f"gate: runs unconfined: {problem}", ""


async def gate_box(project: Path, settings: BoxSettings, env: Mapping[str, str]) -> GateBox:
    """Decide where ``project``'s gate runs (probes bubblewrap once; I/O)."""
    try:
        problem, variables = await box_variables(project, settings, env=child_environment(env))
    except ConfigError as exc:
        problem, variables = str(exc), {}
    boxed, line, refused = choose_gate_box(settings.sandbox, problem)
    if not boxed:
        return GateBox(None, settings.network, line, refused)
    return GateBox(variables, settings.network, line)


def gate_box_blocking(project: Path, settings: BoxSettings, env: Mapping[str, str]) -> GateBox:
    """:func:`gate_box` for synchronous code (the stop-hook, a fleet's landing)."""
    return trio.run(gate_box, project, settings, env)


def gate_argv(gate: str, project: Path, box: GateBox, env: Mapping[str, str]) -> list[str]:
    """The command line that runs ``gate``: bash, wrapped in bwrap when ``box`` says so."""
    command = ["bash", "-c", gate]
    if box.env is None:
        return command
    # Scoped from the host's abstract unix sockets: with the network on, no file hides them.
    return scoped_argv(sandbox_argv(project, command, network=box.network, env={**env, **box.env}))


async def run_gate(
    gate: str,
    *,
    project: Path,
    env: Mapping[str, str],
    box: GateBox,
    timeout: float | None = None,
    grace: float = 2.0,
    stop: trio.Event | None = None,
    on_output: Callable[[bytes], object] | None = None,
    marker: tuple[str, str] | None = None,
    die_with_parent: bool = False,
) -> GateRun:
    """Run ``gate`` in ``project`` as ``box`` says, bounded by ``timeout`` (``None``: none),
    its output collected (and handed to ``on_output`` as it comes). Never raises for the
    gate's own failures: a gate that cannot start or times out has ``exit_code`` ``None``.

    What is kept of the output is its head and tail
    (:class:`~forgeflare.platform._outputcap.HeadTail`): a gate printing 50 MB leaves about 2
    MB. ``marker`` (name, value) replaces the gate's own
    marker, for a caller that must find the gate again (a fleet resuming a landing);
    ``die_with_parent`` ends the gate when this process dies, even by ``kill -9``."""
    if box.refused:
        return GateRun(gate, None, box.refused)
    name, token = marker if marker is not None else (GATE_MARKER, secrets.token_hex(8))
    clean = {**child_environment(env), name: token}
    argv = await trio.to_thread.run_sync(gate_argv, gate, project, box, clean)
    out = HeadTail()

    def collect(chunk: bytes) -> None:
        out.extend(chunk)
        if on_output is not None:
            on_output(chunk)

    try:
        done = await run_child(
            argv,
            cwd=project,
            env=clean,
            stdin=None,
            on_output=collect,
            grace=grace,
            timeout=timeout or None,
            stop=stop,
            marker=(name, token),
            die_with_parent=die_with_parent,
        )
    except OSError as exc:
        return GateRun(gate, None, f"cannot run: {exc}")
    text = out.kept().decode(errors="replace")
    if done.timed_out:
        return GateRun(gate, None, text + f"\n(timed out after {timeout:g} s)")
    return GateRun(gate, done.exit_code, text)


async def run_project_gate(
    gate: str,
    *,
    project: Path,
    settings: BoxSettings,
    env: Mapping[str, str],
    timeout: float | None,
    **options: Any,
) -> GateRun:
    """Decide the box from the project's ``[security]`` ``settings`` and run ``gate`` in it:
    for callers that run one gate (the stop-hook, a fleet's landing). ``options`` go to
    :func:`run_gate` (``marker``, ``die_with_parent``)."""
    box = await gate_box(project, settings, env)
    return await run_gate(gate, project=project, env=env, box=box, timeout=timeout, **options)


def run_project_gate_blocking(gate: str, **options: Any) -> GateRun:
    """:func:`run_project_gate` for synchronous code outside trio."""
    return trio.run(functools.partial(run_project_gate, gate, **options))


def run_gate_blocking(gate: str, **options: Any) -> GateRun:
    """:func:`run_gate` for synchronous code outside trio."""
    return trio.run(functools.partial(run_gate, gate, **options))
