"""The in-process hook layer: shell hooks from hooks.toml and Python hooks on one pipeline."""

from forgeflare.hooks._convergence import (
    ConvergenceError,
    ConvergenceState,
    Final,
    Observation,
    append_observations,
    clear_convergence,
    convergence_path,
    read_convergence,
    write_final,
)
from forgeflare.hooks._types import (
    EXIT_CODES,
    Allow,
    Block,
    Continue,
    ExitReason,
    HookPipeline,
    NoHooks,
    PostToolResult,
    PreToolResult,
    Signal,
)

__all__ = [
    "EXIT_CODES",
    "Allow",
    "Block",
    "Continue",
    "ConvergenceError",
    "ConvergenceState",
    "ExitReason",
    "Final",
    "HookPipeline",
    "NoHooks",
    "Observation",
    "PostToolResult",
    "PreToolResult",
    "Signal",
    "append_observations",
    "clear_convergence",
    "convergence_path",
    "read_convergence",
    "write_final",
]
