"""``forgeflare stop-hook``: the stop-hook state machine for loops inside one agent session.

The pure core is :func:`transition` (with :func:`find_signal` for markdown-aware signal
detection); :func:`run_stop_hook` is the shell Claude Code's Stop hook runs.
"""

from forgeflare.stophook._check import GATE_TIMEOUT_S
from forgeflare.stophook._check import PLAN_FILE
from forgeflare.stophook._check import REVIEW_TIMEOUT_S
from forgeflare.stophook._check import Checked
from forgeflare.stophook._check import check_claim
from forgeflare.stophook._check import diff_since
from forgeflare.stophook._check import head_commit
from forgeflare.stophook._check import review_claim
from forgeflare.stophook._check import run_gate
from forgeflare.stophook._claims import REVIEWS_RELPATH
from forgeflare.stophook._claims import ClaimNote
from forgeflare.stophook._claims import ReviewNote
from forgeflare.stophook._claims import claim_from_json
from forgeflare.stophook._claims import claim_to_json
from forgeflare.stophook._claims import describe_claim
from forgeflare.stophook._claims import gate_refused
from forgeflare.stophook._claims import reviewer_refused
from forgeflare.stophook._answer import answer_loop
from forgeflare.stophook._answer import answer_text
from forgeflare.stophook._answer import parked_lines
from forgeflare.stophook._answer import waiting_question
from forgeflare.stophook._completion import RULE
from forgeflare.stophook._completion import completion_hint
from forgeflare.stophook._completion import judged_text
from forgeflare.stophook._errors import LoopStateError
from forgeflare.stophook._errors import SettingsFileError
from forgeflare.stophook._errors import StateLockTimeout
from forgeflare.stophook._errors import StopHookError
from forgeflare.stophook._errors import TranscriptError
from forgeflare.stophook._hook import DISABLE_ENV
from forgeflare.stophook._hook import DISABLE_FILE
from forgeflare.stophook._hook import StopHookOutcome
from forgeflare.stophook._hook import run_stop_hook
from forgeflare.stophook._install import DEFAULT_COMMAND
from forgeflare.stophook._install import HOOK_TIMEOUT_S
from forgeflare.stophook._install import PORTABLE_COMMAND
from forgeflare.stophook._install import PORTABLE_RELPATH
from forgeflare.stophook._install import PORTABLE_SCRIPT
from forgeflare.stophook._install import SETTINGS_RELPATH
from forgeflare.stophook._install import command_problem
from forgeflare.stophook._install import forgeflare_command
from forgeflare.stophook._install import hook_command
from forgeflare.stophook._install import install_hook
from forgeflare.stophook._install import is_stop_hook_command
from forgeflare.stophook._install import merge_stop_hook
from forgeflare.stophook._install import write_portable_wrapper
from forgeflare.stophook._loops import cancel_loops
from forgeflare.stophook._loops import describe_state
from forgeflare.stophook._loops import loop_status
from forgeflare.stophook._loops import start_loop
from forgeflare.stophook._machine import ANSWER_HOW
from forgeflare.stophook._machine import BLOCK_MESSAGE
from forgeflare.stophook._machine import Corrupt
from forgeflare.stophook._machine import Event
from forgeflare.stophook._machine import Frame
from forgeflare.stophook._machine import LoopRecord
from forgeflare.stophook._machine import Phase
from forgeflare.stophook._machine import Refusal
from forgeflare.stophook._machine import STALE_AFTER
from forgeflare.stophook._machine import StopDecision
from forgeflare.stophook._machine import StoredState
from forgeflare.stophook._machine import block_reason
from forgeflare.stophook._machine import claimed
from forgeflare.stophook._machine import push_frame
from forgeflare.stophook._machine import record_answer
from forgeflare.stophook._machine import transition
from forgeflare.stophook._plugin import LoopArgs
from forgeflare.stophook._plugin import PLUGIN_FILES
from forgeflare.stophook._plugin import default_plugin_dir
from forgeflare.stophook._plugin import install_plugin
from forgeflare.stophook._plugin import parse_loop_args
from forgeflare.stophook._plugin import plugin_files
from forgeflare.stophook._signals import Mode
from forgeflare.stophook._signals import SIGNALS
from forgeflare.stophook._signals import find_signal
from forgeflare.stophook._statefile import JSON_STATE_RELPATH
from forgeflare.stophook._statefile import LOCK_TIMEOUT_S
from forgeflare.stophook._statefile import MARKDOWN_STATE_RELPATH
from forgeflare.stophook._statefile import MarkdownLoop
from forgeflare.stophook._statefile import SCHEMA_VERSION
from forgeflare.stophook._statefile import StateSession
from forgeflare.stophook._statefile import any_state
from forgeflare.stophook._statefile import open_json_state
from forgeflare.stophook._statefile import open_state
from forgeflare.stophook._statefile import parse_json_state
from forgeflare.stophook._statefile import parse_markdown_state
from forgeflare.stophook._statefile import parse_timestamp
from forgeflare.stophook._statefile import render_json_state
from forgeflare.stophook._statefile import render_markdown_state
from forgeflare.stophook._statefile import state_lock
from forgeflare.stophook._statefile import state_paths
from forgeflare.stophook._transcript import FinalMessage
from forgeflare.stophook._transcript import assistant_text_of
from forgeflare.stophook._transcript import final_message
from forgeflare.stophook._transcript import final_message_if_written
from forgeflare.stophook._transcript import last_assistant_text

from forgeflare.stophook._lag import DEFAULT_WAIT_MS
from forgeflare.stophook._lag import WAIT_ENV
from forgeflare.stophook._lag import Reading
from forgeflare.stophook._lag import read_settled
from forgeflare.stophook._lag import settled
from forgeflare.stophook._lag import wait_seconds

__all__ = [
    "ANSWER_HOW",
    "BLOCK_MESSAGE",
    "DEFAULT_COMMAND",
    "DEFAULT_WAIT_MS",
    "DISABLE_ENV",
    "DISABLE_FILE",
    "GATE_TIMEOUT_S",
    "HOOK_TIMEOUT_S",
    "JSON_STATE_RELPATH",
    "LOCK_TIMEOUT_S",
    "MARKDOWN_STATE_RELPATH",
    "PLAN_FILE",
    "PLUGIN_FILES",
    "PORTABLE_COMMAND",
    "PORTABLE_RELPATH",
    "PORTABLE_SCRIPT",
    "REVIEWS_RELPATH",
    "REVIEW_TIMEOUT_S",
    "RULE",
    "SCHEMA_VERSION",
    "SETTINGS_RELPATH",
    "SIGNALS",
    "STALE_AFTER",
    "WAIT_ENV",
    "Checked",
    "ClaimNote",
    "Corrupt",
    "Event",
    "FinalMessage",
    "Frame",
    "LoopArgs",
    "LoopRecord",
    "LoopStateError",
    "MarkdownLoop",
    "Mode",
    "Phase",
    "Reading",
    "Refusal",
    "ReviewNote",
    "SettingsFileError",
    "StateLockTimeout",
    "StateSession",
    "StopDecision",
    "StopHookError",
    "StopHookOutcome",
    "StoredState",
    "TranscriptError",
    "answer_loop",
    "answer_text",
    "any_state",
    "assistant_text_of",
    "block_reason",
    "cancel_loops",
    "check_claim",
    "claim_from_json",
    "claim_to_json",
    "claimed",
    "command_problem",
    "completion_hint",
    "default_plugin_dir",
    "describe_claim",
    "describe_state",
    "diff_since",
    "final_message",
    "final_message_if_written",
    "find_signal",
    "forgeflare_command",
    "gate_refused",
    "head_commit",
    "hook_command",
    "install_hook",
    "install_plugin",
    "is_stop_hook_command",
    "judged_text",
    "last_assistant_text",
    "loop_status",
    "merge_stop_hook",
    "open_json_state",
    "open_state",
    "parked_lines",
    "parse_json_state",
    "parse_loop_args",
    "parse_markdown_state",
    "parse_timestamp",
    "plugin_files",
    "push_frame",
    "read_settled",
    "record_answer",
    "render_json_state",
    "render_markdown_state",
    "review_claim",
    "reviewer_refused",
    "run_gate",
    "run_stop_hook",
    "settled",
    "start_loop",
    "state_lock",
    "state_paths",
    "transition",
    "wait_seconds",
    "waiting_question",
    "write_portable_wrapper",
]
