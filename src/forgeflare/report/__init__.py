"""The morning after: run summaries, the report, watching a loop, notifications."""

from forgeflare.report._collect import (
    collect_digest,
    find_run,
    list_runs,
    load_run,
    runs_root,
)
from forgeflare.report._digest import (
    Commit,
    Digest,
    IterationRow,
    RunSummary,
    Wait,
    build_digest,
    finish_reason,
    iteration_rows,
    parse_time,
    summarize,
)
from forgeflare.report._html import (
    OUTCOME_COLOURS,
    render_html,
)
from forgeflare.report._notify import (
    NOTIFY_EVENTS,
    NOTIFY_URLS_ENV,
    Notifier,
    notify_urls,
    render_message,
    should_notify,
)
from forgeflare.report._text import (
    format_cost,
    format_duration,
    format_tokens,
    render_runs,
    render_text,
)
from forgeflare.report._watch import (
    WatchState,
    current_tool,
    fold_events,
    render_line,
    render_status,
    state_from_run,
    watch,
)

__all__ = [
    "NOTIFY_EVENTS",
    "NOTIFY_URLS_ENV",
    "OUTCOME_COLOURS",
    "Commit",
    "Digest",
    "IterationRow",
    "Notifier",
    "RunSummary",
    "Wait",
    "WatchState",
    "build_digest",
    "collect_digest",
    "current_tool",
    "find_run",
    "finish_reason",
    "fold_events",
    "format_cost",
    "format_duration",
    "format_tokens",
    "iteration_rows",
    "list_runs",
    "load_run",
    "notify_urls",
    "parse_time",
    "render_html",
    "render_line",
    "render_message",
    "render_runs",
    "render_status",
    "render_text",
    "runs_root",
    "should_notify",
    "state_from_run",
    "summarize",
    "watch",
]
