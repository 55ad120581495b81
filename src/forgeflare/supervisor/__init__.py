"""The loop supervisor (``forgeflare loop``): iterations, gates, finish rules and run records.

Errors of this part: ``ConfigError`` (a bad setting, names key and source) and
:class:`RecordError` (a run record cannot be written or read; a ``ForgeflareError``).
"""

from forgeflare.supervisor._agentkey import KeyPlan
from forgeflare.supervisor._agentkey import key_file
from forgeflare.supervisor._agentkey import plan_agent_key
from forgeflare.supervisor._agentproc import ChildResult
from forgeflare.supervisor._agentproc import StopControl
from forgeflare.supervisor._agentproc import exit_status
from forgeflare.supervisor._agentproc import supervise
from forgeflare.supervisor._config import AgentProfile
from forgeflare.supervisor._fallback import AgentSpec
from forgeflare.supervisor._fallback import Choice
from forgeflare.supervisor._fallback import Window
from forgeflare.supervisor._fallback import choose_agent
from forgeflare.supervisor._fallback import credit_line, credit_of, credit_window
from forgeflare.supervisor._fallback import month_spend
from forgeflare.supervisor._fallback import parse_agent_spec
from forgeflare.supervisor._switching import AgentSwitching
from forgeflare.supervisor._windowstore import read_windows
from forgeflare.supervisor._windowstore import record_window
from forgeflare.supervisor._windowstore import window_store_path
from forgeflare.supervisor._config import AgentSection
from forgeflare.supervisor._config import CONFIG_RELPATH
from forgeflare.supervisor._config import FinishSection
from forgeflare.supervisor._config import FresherSection
from forgeflare.supervisor._config import HooksSection
from forgeflare.supervisor._config import LimitsSection
from forgeflare.supervisor._config import LoadedConfig
from forgeflare.supervisor._config import LoopConfig
from forgeflare.supervisor._config import NotifySection
from forgeflare.supervisor._config import PathsSection
from forgeflare.supervisor._config import SecuritySection
from forgeflare.supervisor._config import box_settings
from forgeflare.supervisor._config import default_config_toml
from forgeflare.supervisor._config import default_prompt
from forgeflare.supervisor._config import format_duration
from forgeflare.supervisor._config import load_config
from forgeflare.supervisor._config import parse_duration
from forgeflare.supervisor._display import SUMMARY_ROWS
from forgeflare.supervisor._config import BackendName
from forgeflare.supervisor._config import known_backend
from forgeflare.supervisor._display import AgentStatus
from forgeflare.supervisor._display import LoopDisplay
from forgeflare.supervisor._display import parse_agent_line
from forgeflare.supervisor._display import report_command
from forgeflare.supervisor._display import summary_lines
from forgeflare.supervisor._finish import Between
from forgeflare.supervisor._finish import ContinueLoop
from forgeflare.supervisor._finish import FINISH_EXIT_CODES
from forgeflare.supervisor._finish import Finish
from forgeflare.supervisor._finish import FinishDecision
from forgeflare.supervisor._finish import FinishType
from forgeflare.supervisor._finish import IterationFacts
from forgeflare.supervisor._finish import IterationOutcome
from forgeflare.supervisor._finish import Limits
from forgeflare.supervisor._finish import RunGate
from forgeflare.supervisor._finish import Skip
from forgeflare.supervisor._finish import Streaks
from forgeflare.supervisor._finish import Verdict
from forgeflare.supervisor._finish import agent_time
from forgeflare.supervisor._finish import before_iteration
from forgeflare.supervisor._finish import check_limits
from forgeflare.supervisor._finish import decide
from forgeflare.supervisor._finish import error_pause
from forgeflare.supervisor._finish import finish_rule
from forgeflare.supervisor._finish import hook_verdict
from forgeflare.supervisor._finish import is_error
from forgeflare.supervisor._git import GIT_TIMEOUT
from forgeflare.supervisor._git import NETWORK_TIMEOUT
from forgeflare.supervisor._git import SAFE_CONFIG
from forgeflare.supervisor._git import GitResult
from forgeflare.supervisor._git import git
from forgeflare.supervisor._git import git_argv
from forgeflare.supervisor._git import git_env
from forgeflare.supervisor._git import git_timeout
from forgeflare.supervisor._git import run_git
from forgeflare.supervisor._git import GitSnapshot
from forgeflare.supervisor._git import commits_and_tree
from forgeflare.supervisor._git import commits_between
from forgeflare.supervisor._git import git_snapshot
from forgeflare.supervisor._history import IterationRow
from forgeflare.supervisor._history import finish_reason
from forgeflare.supervisor._history import iteration_rows
from forgeflare.supervisor._history import runs_root
from forgeflare.supervisor._lifecycle import HookContext
from forgeflare.supervisor._lifecycle import HookName
from forgeflare.supervisor._lifecycle import HookStatus
from forgeflare.supervisor._lifecycle import LifecycleResult
from forgeflare.supervisor._lifecycle import classify_exit
from forgeflare.supervisor._lifecycle import hook_env
from forgeflare.supervisor._lifecycle import run_lifecycle_hook
from forgeflare.supervisor._lifecycle import hook_words
from forgeflare.supervisor._iteration import FileStamp
from forgeflare.supervisor._options import LoopOptions
from forgeflare.supervisor._loop import LoopResult
from forgeflare.supervisor._iteration import is_fresh
from forgeflare.supervisor._iteration import IterationRunner
from forgeflare.supervisor._checks import LoopChecks
from forgeflare.supervisor._checks import hook_record
from forgeflare.supervisor._proof import LoopProof
from forgeflare.supervisor._step import LoopStep
from forgeflare.supervisor._step import LoopParts
from forgeflare.supervisor._setup import LoopSetup
from forgeflare.supervisor._setup import loop_limits
from forgeflare.supervisor._runbook import RunBook
from forgeflare.supervisor._checkpoint import LoopDelivery
from forgeflare.supervisor._loop import run_loop
from forgeflare.supervisor._loop import watch_signals
from forgeflare.supervisor._notify import NOTIFY_EVENTS
from forgeflare.supervisor._notify import NOTIFY_URLS_ENV
from forgeflare.supervisor._notify import Notifier
from forgeflare.supervisor._notify import notify_preflight
from forgeflare.supervisor._notify import notify_urls
from forgeflare.supervisor._notify import render_message
from forgeflare.supervisor._notify import should_notify
from forgeflare.supervisor._notify import NotifyEvent
from forgeflare.supervisor._preflight import LOCK_RELPATH
from forgeflare.supervisor._preflight import lock_holder
from forgeflare.supervisor._preflight import preflight
from forgeflare.supervisor._preflight import project_lock
from forgeflare.supervisor._records import HookRecord
from forgeflare.supervisor._records import finish_marker
from forgeflare.supervisor._records import read_finish_marker
from forgeflare.supervisor._records import InProgress
from forgeflare.supervisor._records import IterationRecord
from forgeflare.supervisor._records import RUN_MARKER
from forgeflare.supervisor._records import RecordError
from forgeflare.supervisor._records import RunRecord
from forgeflare.supervisor._records import RunStore
from forgeflare.supervisor._records import RunSettings
from forgeflare.supervisor._records import Totals
from forgeflare.supervisor._records import find_resumable
from forgeflare.supervisor._records import new_run_id
from forgeflare.supervisor._records import orphan_group
from forgeflare.supervisor._records import RunListing
from forgeflare.supervisor._records import SCHEMA_VERSION
from forgeflare.supervisor._records import WaitRecord
from forgeflare.supervisor._records import list_runs
from forgeflare.supervisor._records import newest_run
from forgeflare.supervisor._records import read_run
from forgeflare.supervisor._records import upgrade_row
from forgeflare.supervisor._resume import Resumed
from forgeflare.supervisor._resume import kept_settings
from forgeflare.supervisor._resume import killed_iteration
from forgeflare.supervisor._resume import open_resumable
from forgeflare.supervisor._stop import STOP_RELPATH
from forgeflare.supervisor._stop import clear_stop
from forgeflare.supervisor._stop import request_stop
from forgeflare.supervisor._stop import stop_request_age
from forgeflare.supervisor._stop import stop_requested
from forgeflare.supervisor._trust import hooks_modules
from forgeflare.supervisor._trust import loop_trust_items
from forgeflare.supervisor._trust import security_defaults
from forgeflare.supervisor._trust import trusted_backends
from forgeflare.supervisor._waits import Decide
from forgeflare.supervisor._waits import FinishNow
from forgeflare.supervisor._waits import WaitFor
from forgeflare.supervisor._waits import WaitSettings
from forgeflare.supervisor._waits import WaitStreaks
from forgeflare.supervisor._waits import after_iteration
from forgeflare.supervisor._waits import budget_exhausted
from forgeflare.supervisor._waits import limit_backoff
from forgeflare.supervisor._waits import outage_backoff

from forgeflare.supervisor._waiting import LoopWaits
from forgeflare.supervisor._blocked import ANSWER_FILE
from forgeflare.supervisor._blocked import answer_preamble
from forgeflare.supervisor._config import parse_on_blocked
from forgeflare.supervisor._blocked import read_answer
from forgeflare.supervisor._blocked import take_answer
from forgeflare.supervisor._blocked import waiting_run
from forgeflare.supervisor._blocked import write_answer
from forgeflare.supervisor._records import QuestionAnswer
from forgeflare.supervisor._finish import claimed
from forgeflare.supervisor._git import tree_of
from forgeflare.supervisor._records import ClaimRecord
from forgeflare.supervisor._records import ProgressRecord
from forgeflare.supervisor._records import ReviewRecord
from forgeflare.supervisor._reviewer import VERDICT_TOOL
from forgeflare.supervisor._reviewer import ReviewInput
from forgeflare.supervisor._reviewer import ReviewVerdict
from forgeflare.supervisor._reviewer import review_prompt
from forgeflare.supervisor._reviewer import run_review
from forgeflare.supervisor._reviewer import verdict_of

__all__ = [
    "ANSWER_FILE",
    "CONFIG_RELPATH",
    "FINISH_EXIT_CODES",
    "GIT_TIMEOUT",
    "LOCK_RELPATH",
    "NETWORK_TIMEOUT",
    "NOTIFY_EVENTS",
    "NOTIFY_URLS_ENV",
    "RUN_MARKER",
    "SAFE_CONFIG",
    "SCHEMA_VERSION",
    "STOP_RELPATH",
    "SUMMARY_ROWS",
    "VERDICT_TOOL",
    "AgentProfile",
    "AgentSection",
    "AgentSpec",
    "AgentStatus",
    "AgentSwitching",
    "BackendName",
    "Between",
    "ChildResult",
    "Choice",
    "ClaimRecord",
    "ContinueLoop",
    "Decide",
    "FileStamp",
    "Finish",
    "FinishDecision",
    "FinishNow",
    "FinishSection",
    "FinishType",
    "FresherSection",
    "GitResult",
    "GitSnapshot",
    "HookContext",
    "HookName",
    "HookRecord",
    "HookStatus",
    "HooksSection",
    "InProgress",
    "IterationFacts",
    "IterationOutcome",
    "IterationRecord",
    "IterationRow",
    "IterationRunner",
    "KeyPlan",
    "LifecycleResult",
    "Limits",
    "LimitsSection",
    "LoadedConfig",
    "LoopChecks",
    "LoopConfig",
    "LoopDelivery",
    "LoopDisplay",
    "LoopOptions",
    "LoopParts",
    "LoopProof",
    "LoopResult",
    "LoopSetup",
    "LoopStep",
    "LoopWaits",
    "Notifier",
    "NotifyEvent",
    "NotifySection",
    "PathsSection",
    "ProgressRecord",
    "QuestionAnswer",
    "RecordError",
    "Resumed",
    "ReviewInput",
    "ReviewRecord",
    "ReviewVerdict",
    "RunBook",
    "RunGate",
    "RunListing",
    "RunRecord",
    "RunSettings",
    "RunStore",
    "SecuritySection",
    "Skip",
    "StopControl",
    "Streaks",
    "Totals",
    "Verdict",
    "WaitFor",
    "WaitRecord",
    "WaitSettings",
    "WaitStreaks",
    "Window",
    "after_iteration",
    "agent_time",
    "answer_preamble",
    "before_iteration",
    "box_settings",
    "budget_exhausted",
    "check_limits",
    "choose_agent",
    "claimed",
    "classify_exit",
    "clear_stop",
    "commits_and_tree",
    "commits_between",
    "credit_line",
    "credit_of",
    "credit_window",
    "decide",
    "default_config_toml",
    "default_prompt",
    "error_pause",
    "exit_status",
    "find_resumable",
    "finish_marker",
    "finish_reason",
    "finish_rule",
    "format_duration",
    "git",
    "git_argv",
    "git_env",
    "git_snapshot",
    "git_timeout",
    "hook_env",
    "hook_record",
    "hook_verdict",
    "hook_words",
    "hooks_modules",
    "is_error",
    "is_fresh",
    "iteration_rows",
    "kept_settings",
    "key_file",
    "killed_iteration",
    "known_backend",
    "limit_backoff",
    "list_runs",
    "load_config",
    "lock_holder",
    "loop_limits",
    "loop_trust_items",
    "month_spend",
    "new_run_id",
    "newest_run",
    "notify_preflight",
    "notify_urls",
    "open_resumable",
    "orphan_group",
    "outage_backoff",
    "parse_agent_line",
    "parse_agent_spec",
    "parse_duration",
    "parse_on_blocked",
    "plan_agent_key",
    "preflight",
    "project_lock",
    "read_answer",
    "read_finish_marker",
    "read_run",
    "read_windows",
    "record_window",
    "render_message",
    "report_command",
    "request_stop",
    "review_prompt",
    "run_git",
    "run_lifecycle_hook",
    "run_loop",
    "run_review",
    "runs_root",
    "security_defaults",
    "should_notify",
    "stop_request_age",
    "stop_requested",
    "summary_lines",
    "supervise",
    "take_answer",
    "tree_of",
    "trusted_backends",
    "upgrade_row",
    "verdict_of",
    "waiting_run",
    "watch_signals",
    "window_store_path",
    "write_answer",
]
