"""``forgeflare stop-hook``: the stop-hook state machine for loops inside one agent session.

The pure core is :func:`transition` (with :func:`find_signal` for markdown-aware signal
detection); :func:`run_stop_hook` is the shell Claude Code's Stop hook runs.
"""

from forgeflare.stophook._errors import (
    LoopStateError,
    SettingsFileError,
    StateLockTimeout,
    StopHookError,
    TranscriptError,
)
from forgeflare.stophook._hook import (
    DISABLE_ENV,
    DISABLE_FILE,
    StopHookOutcome,
    run_stop_hook,
)
from forgeflare.stophook._install import (
    DEFAULT_COMMAND,
    SETTINGS_RELPATH,
    install_hook,
    merge_stop_hook,
)
from forgeflare.stophook._loops import (
    cancel_loops,
    describe_state,
    loop_status,
    start_loop,
)
from forgeflare.stophook._machine import (
    BLOCK_MESSAGE,
    STALE_AFTER,
    Corrupt,
    Event,
    Frame,
    LoopRecord,
    Phase,
    StopDecision,
    StoredState,
    block_reason,
    push_frame,
    transition,
)
from forgeflare.stophook._signals import (
    SIGNALS,
    Mode,
    find_signal,
)
from forgeflare.stophook._statefile import (
    JSON_STATE_RELPATH,
    LOCK_TIMEOUT_S,
    MARKDOWN_STATE_RELPATH,
    SCHEMA_VERSION,
    MarkdownLoop,
    StateSession,
    any_state,
    open_json_state,
    open_state,
    parse_json_state,
    parse_markdown_state,
    parse_timestamp,
    render_json_state,
    render_markdown_state,
    state_lock,
    state_paths,
)
from forgeflare.stophook._transcript import (
    assistant_text_of,
    last_assistant_text,
)

__all__ = [
    "BLOCK_MESSAGE",
    "DEFAULT_COMMAND",
    "DISABLE_ENV",
    "DISABLE_FILE",
    "JSON_STATE_RELPATH",
    "LOCK_TIMEOUT_S",
    "MARKDOWN_STATE_RELPATH",
    "SCHEMA_VERSION",
    "SETTINGS_RELPATH",
    "SIGNALS",
    "STALE_AFTER",
    "Corrupt",
    "Event",
    "Frame",
    "LoopRecord",
    "LoopStateError",
    "MarkdownLoop",
    "Mode",
    "Phase",
    "SettingsFileError",
    "StateLockTimeout",
    "StateSession",
    "StopDecision",
    "StopHookError",
    "StopHookOutcome",
    "StoredState",
    "TranscriptError",
    "any_state",
    "assistant_text_of",
    "block_reason",
    "cancel_loops",
    "describe_state",
    "find_signal",
    "install_hook",
    "last_assistant_text",
    "loop_status",
    "merge_stop_hook",
    "open_json_state",
    "open_state",
    "parse_json_state",
    "parse_markdown_state",
    "parse_timestamp",
    "push_frame",
    "render_json_state",
    "render_markdown_state",
    "run_stop_hook",
    "start_loop",
    "state_lock",
    "state_paths",
    "transition",
]
