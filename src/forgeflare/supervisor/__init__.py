"""The loop supervisor (``forgeflare loop``): iterations, gates, finish rules and run records.

Errors of this part: ``ConfigError`` (a bad setting, names key and source) and
:class:`RecordError` (a run record cannot be written or read; a ``ForgeflareError``).
"""

from forgeflare.supervisor.agents._agentkey import KeyPlan
from forgeflare.supervisor.agents._agentkey import key_file
from forgeflare.supervisor.agents._agentkey import plan_agent_key
from forgeflare.supervisor.agents._agentproc import ChildResult
from forgeflare.supervisor.agents._agentproc import StopControl
from forgeflare.supervisor.agents._agentproc import exit_status
from forgeflare.supervisor.agents._agentproc import supervise
from forgeflare.supervisor.config._config import AgentProfile
from forgeflare.supervisor.agents._fallback import AgentSpec
from forgeflare.supervisor.agents._fallback import Choice
from forgeflare.supervisor.agents._fallback import Window
from forgeflare.supervisor.agents._fallback import choose_agent
from forgeflare.supervisor.agents._fallback import credit_line, credit_of, credit_window
from forgeflare.supervisor.agents._fallback import month_spend
from forgeflare.supervisor.agents._fallback import parse_agent_spec
from forgeflare.supervisor.run._switching import AgentSwitching
from forgeflare.supervisor.agents._windowstore import read_windows
from forgeflare.supervisor.agents._windowstore import record_window
from forgeflare.supervisor.agents._windowstore import window_store_path
from forgeflare.supervisor.config._config import AgentSection
from forgeflare.supervisor.config._config import CONFIG_RELPATH
from forgeflare.supervisor.config._config import FinishSection
from forgeflare.supervisor.config._config import FresherSection
from forgeflare.supervisor.config._config import HooksSection
from forgeflare.supervisor.config._config import LimitsSection
from forgeflare.supervisor.config._config import LoadedConfig
from forgeflare.supervisor.config._config import LoopConfig
from forgeflare.supervisor.config._config import NotifySection
from forgeflare.supervisor.config._config import PathsSection
from forgeflare.supervisor.config._config import SecuritySection
from forgeflare.supervisor.config._config import box_settings
from forgeflare.supervisor.config._config import default_config_toml
from forgeflare.supervisor.config._config import default_prompt
from forgeflare.supervisor.config._config import format_duration
from forgeflare.supervisor.config._config import load_config
from forgeflare.supervisor.config._config import parse_duration
from forgeflare.supervisor.records._display import SUMMARY_ROWS
from forgeflare.supervisor.config._config import BackendName
from forgeflare.supervisor.config._config import known_backend
from forgeflare.supervisor.records._display import AgentStatus
from forgeflare.supervisor.records._display import LoopDisplay
from forgeflare.supervisor.records._display import parse_agent_line
from forgeflare.supervisor.records._display import report_command
from forgeflare.supervisor.records._display import summary_lines
from forgeflare.supervisor.evidence._finish import Between
from forgeflare.supervisor.evidence._finish import ContinueLoop
from forgeflare.supervisor.evidence._finish import FINISH_EXIT_CODES
from forgeflare.supervisor.evidence._finish import Finish
from forgeflare.supervisor.evidence._finish import FinishDecision
from forgeflare.supervisor.evidence._finish import FinishType
from forgeflare.supervisor.evidence._finish import IterationFacts
from forgeflare.supervisor.evidence._finish import IterationOutcome
from forgeflare.supervisor.evidence._finish import Limits
from forgeflare.supervisor.evidence._finish import RunGate
from forgeflare.supervisor.evidence._finish import Skip
from forgeflare.supervisor.evidence._finish import Streaks
from forgeflare.supervisor.evidence._finish import Verdict
from forgeflare.supervisor.evidence._finish import agent_time
from forgeflare.supervisor.evidence._finish import before_iteration
from forgeflare.supervisor.evidence._finish import check_limits
from forgeflare.supervisor.evidence._finish import decide
from forgeflare.supervisor.evidence._finish import error_pause
from forgeflare.supervisor.evidence._finish import finish_rule
from forgeflare.supervisor.evidence._finish import hook_verdict
from forgeflare.supervisor.evidence._finish import is_error
from forgeflare.supervisor.evidence._git import GIT_TIMEOUT
from forgeflare.supervisor.evidence._git import NETWORK_TIMEOUT
from forgeflare.supervisor.evidence._git import SAFE_CONFIG
from forgeflare.supervisor.evidence._git import GitResult
from forgeflare.supervisor.evidence._git import git
from forgeflare.supervisor.evidence._git import git_argv
from forgeflare.supervisor.evidence._git import git_env
from forgeflare.supervisor.evidence._git import git_timeout
from forgeflare.supervisor.evidence._git import run_git
from forgeflare.supervisor.evidence._git import GitSnapshot
from forgeflare.supervisor.evidence._git import commits_and_tree
from forgeflare.supervisor.evidence._git import commits_between
from forgeflare.supervisor.evidence._git import git_snapshot
from forgeflare.supervisor.records._history import IterationRow
from forgeflare.supervisor.records._history import finish_reason
from forgeflare.supervisor.records._history import iteration_rows
from forgeflare.supervisor.records._history import runs_root
from forgeflare.supervisor.run._lifecycle import HookContext
from forgeflare.supervisor.run._lifecycle import HookName
from forgeflare.supervisor.run._lifecycle import HookStatus
from forgeflare.supervisor.run._lifecycle import LifecycleResult
from forgeflare.supervisor.run._lifecycle import classify_exit
from forgeflare.supervisor.run._lifecycle import hook_env
from forgeflare.supervisor.run._lifecycle import run_lifecycle_hook
from forgeflare.supervisor.run._lifecycle import hook_words
from forgeflare.supervisor.run._iteration import FileStamp
from forgeflare.supervisor.config._options import LoopOptions
from forgeflare.supervisor.run._loop import LoopResult
from forgeflare.supervisor.run._iteration import is_fresh
from forgeflare.supervisor.run._iteration import IterationRunner
from forgeflare.supervisor.run._checks import LoopChecks
from forgeflare.supervisor.run._checks import hook_record
from forgeflare.supervisor.run._proof import LoopProof
from forgeflare.supervisor.run._step import LoopStep
from forgeflare.supervisor.run._step import LoopParts
from forgeflare.supervisor.run._setup import LoopSetup
from forgeflare.supervisor.run._setup import loop_limits
from forgeflare.supervisor.run._runbook import RunBook
from forgeflare.supervisor.run._checkpoint import LoopDelivery
from forgeflare.supervisor.run._loop import run_loop
from forgeflare.supervisor.run._loop import watch_signals
from forgeflare.supervisor.records._notify import NOTIFY_EVENTS
from forgeflare.supervisor.records._notify import NOTIFY_URLS_ENV
from forgeflare.supervisor.records._notify import Notifier
from forgeflare.supervisor.records._notify import notify_preflight
from forgeflare.supervisor.records._notify import notify_urls
from forgeflare.supervisor.records._notify import render_message
from forgeflare.supervisor.records._notify import should_notify
from forgeflare.supervisor.records._notify import NotifyEvent
from forgeflare.supervisor.run._preflight import LOCK_RELPATH
from forgeflare.supervisor.run._preflight import lock_holder
from forgeflare.supervisor.run._preflight import preflight
from forgeflare.supervisor.run._preflight import project_lock
from forgeflare.supervisor.records._records import HookRecord
from forgeflare.supervisor.records._records import finish_marker
from forgeflare.supervisor.records._records import read_finish_marker
from forgeflare.supervisor.records._records import InProgress
from forgeflare.supervisor.records._records import IterationRecord
from forgeflare.supervisor.records._records import RUN_MARKER
from forgeflare.supervisor.records._records import RecordError
from forgeflare.supervisor.records._records import RunRecord
from forgeflare.supervisor.records._records import RunStore
from forgeflare.supervisor.records._records import RunSettings
from forgeflare.supervisor.records._records import Totals
from forgeflare.supervisor.records._records import find_resumable
from forgeflare.supervisor.records._records import new_run_id
from forgeflare.supervisor.records._records import orphan_group
from forgeflare.supervisor.records._records import RunListing
from forgeflare.supervisor.records._records import SCHEMA_VERSION
from forgeflare.supervisor.records._records import WaitRecord
from forgeflare.supervisor.records._records import list_runs
from forgeflare.supervisor.records._records import newest_run
from forgeflare.supervisor.records._records import read_run
from forgeflare.supervisor.records._records import upgrade_row
from forgeflare.supervisor.run._resume import Resumed
from forgeflare.supervisor.run._resume import kept_settings
from forgeflare.supervisor.run._resume import killed_iteration
from forgeflare.supervisor.run._resume import open_resumable
from forgeflare.supervisor.run._stop import STOP_RELPATH
from forgeflare.supervisor.run._stop import clear_stop
from forgeflare.supervisor.run._stop import request_stop
from forgeflare.supervisor.run._stop import stop_request_age
from forgeflare.supervisor.run._stop import stop_requested
from forgeflare.supervisor.config._trust import hooks_modules
from forgeflare.supervisor.config._trust import loop_trust_items
from forgeflare.supervisor.config._trust import security_defaults
from forgeflare.supervisor.config._trust import trusted_backends
from forgeflare.supervisor.evidence._waits import Decide
from forgeflare.supervisor.evidence._waits import FinishNow
from forgeflare.supervisor.evidence._waits import WaitFor
from forgeflare.supervisor.evidence._waits import WaitSettings
from forgeflare.supervisor.evidence._waits import WaitStreaks
from forgeflare.supervisor.evidence._waits import after_iteration
from forgeflare.supervisor.evidence._waits import budget_exhausted
from forgeflare.supervisor.evidence._waits import limit_backoff
from forgeflare.supervisor.evidence._waits import outage_backoff

from forgeflare.supervisor.run._waiting import LoopWaits
from forgeflare.supervisor.records._blocked import ANSWER_FILE
from forgeflare.supervisor.records._blocked import answer_preamble
from forgeflare.supervisor.config._config import parse_on_blocked
from forgeflare.supervisor.records._blocked import read_answer
from forgeflare.supervisor.records._blocked import take_answer
from forgeflare.supervisor.records._blocked import waiting_run
from forgeflare.supervisor.records._blocked import write_answer
from forgeflare.supervisor.records._records import QuestionAnswer
from forgeflare.supervisor.evidence._finish import claimed
from forgeflare.supervisor.evidence._git import tree_of
from forgeflare.supervisor.records._records import ClaimRecord
from forgeflare.supervisor.records._records import ProgressRecord
from forgeflare.supervisor.records._records import ReviewRecord
from forgeflare.supervisor.evidence._reviewer import VERDICT_TOOL
from forgeflare.supervisor.evidence._reviewer import ReviewInput
from forgeflare.supervisor.evidence._reviewer import ReviewVerdict
from forgeflare.supervisor.evidence._reviewer import review_prompt
from forgeflare.supervisor.evidence._reviewer import run_review
from forgeflare.supervisor.evidence._reviewer import verdict_of

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
