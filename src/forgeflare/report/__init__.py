"""The morning after: run summaries, the report, watching a loop, notifications."""

from forgeflare.report._collect import collect_digest, find_run, list_runs, load_run, runs_root
from forgeflare.report._digest import (
    Commit,
    Digest,
    IterationRow,
    RunSummary,
    Wait,
    build_digest,
    finish_reason,
    iteration_rows,
    summarize,
)
from forgeflare.report._html import render_html
from forgeflare.report._notify import (
    NOTIFY_EVENTS,
    NOTIFY_URLS_ENV,
    Notifier,
    notify_urls,
    render_message,
    should_notify,
)
from forgeflare.report._text import render_runs, render_text

__all__ = [
    "NOTIFY_EVENTS",
    "NOTIFY_URLS_ENV",
    "Commit",
    "Digest",
    "IterationRow",
    "Notifier",
    "RunSummary",
    "Wait",
    "build_digest",
    "collect_digest",
    "find_run",
    "finish_reason",
    "iteration_rows",
    "list_runs",
    "load_run",
    "notify_urls",
    "render_html",
    "render_message",
    "render_runs",
    "render_text",
    "runs_root",
    "should_notify",
    "summarize",
]
