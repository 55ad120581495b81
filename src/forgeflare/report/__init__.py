"""The morning after: run summaries, the report, watching a loop (it reads what the loop wrote)."""

from forgeflare.report._collect import collect_digest, find_run, list_runs, load_run, runs_root
from forgeflare.report._digest import Commit, Digest, RunSummary, Wait, build_digest, summarize
from forgeflare.report._html import OUTCOME_COLOURS, render_html, write_html
from forgeflare.report._text import format_cost, format_duration, render_runs, render_text
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
    "OUTCOME_COLOURS",
    "Commit",
    "Digest",
    "RunSummary",
    "Wait",
    "WatchState",
    "build_digest",
    "collect_digest",
    "current_tool",
    "find_run",
    "fold_events",
    "format_cost",
    "format_duration",
    "list_runs",
    "load_run",
    "render_html",
    "render_line",
    "render_runs",
    "render_status",
    "render_text",
    "runs_root",
    "state_from_run",
    "summarize",
    "watch",
    "write_html",
]
