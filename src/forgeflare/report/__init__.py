"""The morning after: run summaries, the report, watching a loop (it reads what the loop wrote)."""

from forgeflare.report._collect import collect_digest
from forgeflare.report._collect import find_run
from forgeflare.report._collect import list_runs
from forgeflare.report._collect import load_run
from forgeflare.report._collect import runs_root
from forgeflare.report._collect import run_facts
from forgeflare.report._collect import supervisor_alive
from forgeflare.report._digest import DEAD_REASON
from forgeflare.report._collect import skipped_line
from forgeflare.report._digest import Commit
from forgeflare.report._digest import Digest
from forgeflare.report._digest import RunSummary
from forgeflare.report._digest import Wait
from forgeflare.report._digest import build_digest
from forgeflare.report._digest import spend_by_agent
from forgeflare.report._digest import summarize
from forgeflare.report._html import OUTCOME_COLOURS
from forgeflare.report._html import render_html
from forgeflare.report._html import write_html
from forgeflare.report._html import LOG_TAILS
from forgeflare.report._html import LOG_TAIL_LINES
from forgeflare.report._html import cumulative_series
from forgeflare.report._html import plotly_loader
from forgeflare.report._text import format_cost
from forgeflare.report._text import format_duration
from forgeflare.report._text import headline
from forgeflare.report._text import render_runs
from forgeflare.report._text import Section
from forgeflare.report._text import render_text
from forgeflare.report._text import sections
from forgeflare.report._watch import WatchState
from forgeflare.report._watch import current_tool
from forgeflare.report._watch import fold_events
from forgeflare.report._watch import render_line
from forgeflare.report._watch import render_status
from forgeflare.report._watch import state_from_run
from forgeflare.report._watch import watch
from forgeflare.report._html import todo_html
from forgeflare.report._todo import NOTHING
from forgeflare.report._todo import Todo
from forgeflare.report._todo import RunFacts
from forgeflare.report._todo import checkpoint_failures
from forgeflare.report._todo import fleet_needs_you
from forgeflare.report._todo import land_command
from forgeflare.report._todo import needs_you
from forgeflare.report._todo import render_todo_lines
from forgeflare.report._todo import session_question
from forgeflare.report._todo import todo_section
from forgeflare.report._taskcost import TaskCost
from forgeflare.report._taskcost import TaskCosts
from forgeflare.report._taskcost import checked_between
from forgeflare.report._taskcost import task_costs
from forgeflare.report._text import task_cost_lines

__all__ = [
    "DEAD_REASON",
    "LOG_TAILS",
    "LOG_TAIL_LINES",
    "NOTHING",
    "OUTCOME_COLOURS",
    "Commit",
    "Digest",
    "RunFacts",
    "RunSummary",
    "Section",
    "TaskCost",
    "TaskCosts",
    "Todo",
    "Wait",
    "WatchState",
    "build_digest",
    "checked_between",
    "checkpoint_failures",
    "collect_digest",
    "cumulative_series",
    "current_tool",
    "find_run",
    "fleet_needs_you",
    "fold_events",
    "format_cost",
    "format_duration",
    "headline",
    "land_command",
    "list_runs",
    "load_run",
    "needs_you",
    "plotly_loader",
    "render_html",
    "render_line",
    "render_runs",
    "render_status",
    "render_text",
    "render_todo_lines",
    "run_facts",
    "runs_root",
    "sections",
    "session_question",
    "skipped_line",
    "spend_by_agent",
    "state_from_run",
    "summarize",
    "supervisor_alive",
    "task_cost_lines",
    "task_costs",
    "todo_html",
    "todo_section",
    "watch",
    "write_html",
]
