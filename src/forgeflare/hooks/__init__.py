"""The in-process hook layer: shell hooks from hooks.toml and Python hooks on one pipeline.

The turn loop calls a :class:`HookPipeline`; :func:`build_pipeline` makes one from
``.forgeflare/hooks.toml`` and Python hooks (:class:`NoHooks` when there are none). Shell hooks
run in declaration order, Python hooks after them.

Errors (below ``forgeflare.ForgeflareError``)::

    ForgeflareError
    ├── ConfigError
    │   ├── HookConfigError          hooks.toml is malformed (syntax, event, phase, key,
    │   │                            timeout, command); the message names file, entry, problem
    │   └── HookRegistrationError    a Python hook, hooks module or entry point is invalid
    └── ConvergenceError             convergence.json exists but cannot be read or parsed

A hook that fails while running never raises: guards block (fail-closed), observers log.
"""

from forgeflare.hooks._api import (
    ENTRY_POINT_GROUP,
    EVENT_ARGUMENTS,
    Decision,
    Hook,
    HookEvent,
    HookOutcome,
    HookRegistrationError,
    HookRegistry,
    Matcher,
    collect_hooks,
    hook,
    load_entry_point_hooks,
    load_hooks_module,
    make_hook,
)
from forgeflare.hooks._config import (
    HookConfig,
    HookConfigError,
    HooksFile,
    load_hooks_file,
)
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
from forgeflare.hooks._pipeline import HookDispatcher, build_pipeline
from forgeflare.hooks._protocol import truncate_result
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
    "ENTRY_POINT_GROUP",
    "EVENT_ARGUMENTS",
    "EXIT_CODES",
    "Allow",
    "Block",
    "Continue",
    "ConvergenceError",
    "ConvergenceState",
    "Decision",
    "ExitReason",
    "Final",
    "Hook",
    "HookConfig",
    "HookConfigError",
    "HookDispatcher",
    "HookEvent",
    "HookOutcome",
    "HookPipeline",
    "HookRegistrationError",
    "HookRegistry",
    "HooksFile",
    "Matcher",
    "NoHooks",
    "Observation",
    "PostToolResult",
    "PreToolResult",
    "Signal",
    "append_observations",
    "build_pipeline",
    "clear_convergence",
    "collect_hooks",
    "convergence_path",
    "hook",
    "load_entry_point_hooks",
    "load_hooks_file",
    "load_hooks_module",
    "make_hook",
    "read_convergence",
    "truncate_result",
    "write_final",
]
