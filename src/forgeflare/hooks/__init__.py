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

from forgeflare.hooks._api import DEFAULT_CONTINUE_PROMPT
from forgeflare.hooks._api import Decision
from forgeflare.hooks._api import ENTRY_POINT_GROUP
from forgeflare.hooks._api import EVENT_ARGUMENTS
from forgeflare.hooks._api import Hook
from forgeflare.hooks._api import HookEvent
from forgeflare.hooks._api import HookOutcome
from forgeflare.hooks._api import HookRegistrationError
from forgeflare.hooks._api import HookRegistry
from forgeflare.hooks._api import Matcher
from forgeflare.hooks._api import collect_hooks
from forgeflare.hooks._api import hook
from forgeflare.hooks._api import load_entry_point_hooks
from forgeflare.hooks._api import load_hooks_module
from forgeflare.hooks._api import make_hook
from forgeflare.hooks._api import python_verdict
from forgeflare.hooks._config import DEFAULT_STOP_TIMEOUT_MS
from forgeflare.hooks._config import DEFAULT_TIMEOUT_MS
from forgeflare.hooks._config import HOOKS_RELPATH
from forgeflare.hooks._config import HookConfig
from forgeflare.hooks._config import HookConfigError
from forgeflare.hooks._config import HooksFile
from forgeflare.hooks._config import SHELL_EVENTS
from forgeflare.hooks._config import load_hooks_file
from forgeflare.hooks._config import parse_hooks_text
from forgeflare.hooks._config import unknown_tool
from forgeflare.hooks._pipeline import AgentHooks
from forgeflare.hooks._pipeline import AuditSink
from forgeflare.hooks._pipeline import CONVERGENCE_RECORDER
from forgeflare.hooks._pipeline import HookDispatcher
from forgeflare.hooks._pipeline import ShellHook
from forgeflare.hooks._pipeline import build_pipeline
from forgeflare.hooks._pipeline import collect_agent_hooks
from forgeflare.hooks._pipeline import convergence_recorder
from forgeflare.hooks._protocol import FailureKind
from forgeflare.hooks._protocol import HookFailure
from forgeflare.hooks._protocol import Outcome
from forgeflare.hooks._protocol import ProcessOutcome
from forgeflare.hooks._protocol import RESULT_CAP_BYTES
from forgeflare.hooks._protocol import Verdict
from forgeflare.hooks._protocol import block_message
from forgeflare.hooks._protocol import cap_for_model
from forgeflare.hooks._protocol import failure_text
from forgeflare.hooks._protocol import floor_char_boundary
from forgeflare.hooks._protocol import interpret_guard
from forgeflare.hooks._protocol import interpret_observe
from forgeflare.hooks._protocol import interpret_post
from forgeflare.hooks._protocol import interpret_stop
from forgeflare.hooks._protocol import post_tool_payload
from forgeflare.hooks._protocol import pre_tool_payload
from forgeflare.hooks._protocol import stop_payload
from forgeflare.hooks._protocol import truncate_result
from forgeflare.hooks._shell import MAX_STDOUT_BYTES
from forgeflare.hooks._shell import run_hook_process
from forgeflare.hooks._types import ANSWERS
from forgeflare.hooks._types import Allow
from forgeflare.hooks._types import Block
from forgeflare.hooks._types import Blocked
from forgeflare.hooks._types import Continue
from forgeflare.hooks._types import EXIT_CODES
from forgeflare.hooks._types import ExitReason
from forgeflare.hooks._types import HookAnswer
from forgeflare.hooks._types import HookPipeline
from forgeflare.hooks._types import NoHooks
from forgeflare.hooks._types import PostToolResult
from forgeflare.hooks._types import PreToolResult
from forgeflare.hooks._types import Signal
from forgeflare.hooks._types import Stop
from forgeflare.hooks._types import TurnFailure

__all__ = [
    "ANSWERS",
    "CONVERGENCE_RECORDER",
    "DEFAULT_CONTINUE_PROMPT",
    "DEFAULT_STOP_TIMEOUT_MS",
    "DEFAULT_TIMEOUT_MS",
    "ENTRY_POINT_GROUP",
    "EVENT_ARGUMENTS",
    "EXIT_CODES",
    "HOOKS_RELPATH",
    "MAX_STDOUT_BYTES",
    "RESULT_CAP_BYTES",
    "SHELL_EVENTS",
    "AgentHooks",
    "Allow",
    "AuditSink",
    "Block",
    "Blocked",
    "Continue",
    "Decision",
    "ExitReason",
    "FailureKind",
    "Hook",
    "HookAnswer",
    "HookConfig",
    "HookConfigError",
    "HookDispatcher",
    "HookEvent",
    "HookFailure",
    "HookOutcome",
    "HookPipeline",
    "HookRegistrationError",
    "HookRegistry",
    "HooksFile",
    "Matcher",
    "NoHooks",
    "Outcome",
    "PostToolResult",
    "PreToolResult",
    "ProcessOutcome",
    "ShellHook",
    "Signal",
    "Stop",
    "TurnFailure",
    "Verdict",
    "block_message",
    "build_pipeline",
    "cap_for_model",
    "collect_agent_hooks",
    "collect_hooks",
    "convergence_recorder",
    "failure_text",
    "floor_char_boundary",
    "hook",
    "interpret_guard",
    "interpret_observe",
    "interpret_post",
    "interpret_stop",
    "load_entry_point_hooks",
    "load_hooks_file",
    "load_hooks_module",
    "make_hook",
    "parse_hooks_text",
    "post_tool_payload",
    "pre_tool_payload",
    "python_verdict",
    "run_hook_process",
    "stop_payload",
    "truncate_result",
    "unknown_tool",
]
