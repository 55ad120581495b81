"""``forgeflare runs`` and ``forgeflare report``: the morning after, from the run records."""

from __future__ import annotations

import json
import os
import webbrowser
from pathlib import Path

import typer

from forgeflare._cliopts import OldDir, ProjectDir, project_dir
from forgeflare._errors import ConfigError
from forgeflare._termtext import for_terminal

__all__ = ["register"]

_RUNS_HELP = """List a project's loop runs, newest first.

One line per run: id, start, duration, finish type, iterations, commits, plan tasks checked
off, tokens and cost; below it why the run ended, in words. --json prints the same as a list.
"""

_REPORT_HELP = """Show one run (default: the newest) as a report.

It opens with what needs you, each item with the command that acts on it: a question the
agent asks (a Claude Code loop's too, even in a project with no run yet), a run that died
(kill -9, a reboot: resume it), work not delivered (an undelivered finish, checkpoint
commits that failed, changes left in the tree), a refused claim, a budget or usage-limit
stop, a stall, failed hooks. In the terminal: then why it ended, the
commits with their diffstat, plan tasks checked off and still open, spend, waits, the slowest
iterations, hook failures and convergence signals.
--html FILE writes the same as one self-contained HTML page (no network needed to open it)
with a timeline plot and a table of iterations linking to their logs; --open opens it (with
no --html, the page is written as report.html in the run folder).
"""


_WATCH_HELP = """Watch a running loop from another terminal, until it ends.

Shows the iteration (N/MAX), how long it and the whole run have been going, the current tool,
tokens, cost, commits, open plan tasks, and whether the loop waits for a usage window or an
outage. Everything is read from the run's records. On a terminal one status block is redrawn;
piped or redirected, one timestamped line is printed per change.
Started with (or just before) `forgeflare loop`, it follows the run that loop opens: while no
loop holds .fresher/loop.lock it waits up to --wait for one to take it, saying so in one line.
Only when none does is the newest run shown (a finished one once, a dead one as dead).
"""


_WAIT = typer.Option(
    "30s",
    "--wait",
    metavar="DURATION",
    help="With no loop running: how long to wait for one to start (0: at once).",
)


def _warn(line: str) -> None:
    typer.echo(for_terminal(line), err=True)


def _watch(directory: Path, run: str | None, *, interval: float, wait: str) -> None:
    """``watch``: the run ``--run`` names, else the one a starting loop opens, else the newest."""
    from forgeflare.report._collect import find_run
    from forgeflare.report._watch import announced_run, watch
    from forgeflare.supervisor import parse_duration

    try:
        seconds = parse_duration(wait)
    except ValueError as exc:
        raise ConfigError(f"watch --wait {wait!r}: {exc}") from None
    run_dir = None
    if run is None:
        run_dir = announced_run(directory, os.environ, wait=seconds, poll=interval, say=_warn)
    watch(run_dir or find_run(directory, run, os.environ, warn=_warn), interval=interval)


def register(app: typer.Typer) -> None:
    """Add ``runs``, ``report`` and ``watch``."""

    @app.command("watch", help=_WATCH_HELP)
    def watch_cmd(
        old_dir: OldDir = None,
        project: ProjectDir = Path("."),
        run: str = typer.Option(None, "--run", help="Run id or folder (default: the newest)."),
        interval: float = typer.Option(0.5, "--interval", min=0.05, help="Seconds per poll."),
        wait: str = _WAIT,
    ) -> None:
        _watch(project_dir(project, old_dir, "watch"), run, interval=interval, wait=wait)

    @app.command("runs", help=_RUNS_HELP)
    def runs_cmd(
        old_dir: OldDir = None,
        project: ProjectDir = Path("."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON instead of lines."),
    ) -> None:
        from forgeflare.report._collect import list_runs, runs_root, settled_run, skipped_line
        from forgeflare.report._digest import summarize
        from forgeflare.report._text import render_runs

        directory = project_dir(project, old_dir, "runs")
        listing = list_runs(runs_root(directory, os.environ))
        for line in listing.skipped:
            _warn(skipped_line(line))
        for line in listing.damaged:
            _warn(f"forgeflare: warning: {line}")
        settled = [settled_run(run_dir, run) for run_dir, run in listing.runs]
        summaries = [summarize(run, alive=alive) for run, alive in settled]
        if as_json:
            typer.echo(json.dumps([s.as_json() for s in summaries], indent=2))
        else:
            typer.echo(for_terminal(render_runs(summaries)))

    @app.command("report", help=_REPORT_HELP)
    def report_cmd(
        run: str = typer.Argument(None, help="Run id or run folder (default: the newest run)."),
        directory: ProjectDir = Path("."),
        html_out: Path = typer.Option(None, "--html", metavar="FILE", help="Write HTML here."),
        open_it: bool = typer.Option(False, "--open", help="Open the HTML page in a browser."),
    ) -> None:
        from forgeflare.report._collect import collect_digest, find_run, session_todo
        from forgeflare.report._html import render_html, write_html
        from forgeflare.report._text import render_text
        from forgeflare.report._todo import Todo, todo_section

        if not directory.is_dir():
            raise ConfigError(f"--dir {directory}: not a directory")
        try:
            run_dir = find_run(directory, run, os.environ, warn=_warn)
        except ConfigError:
            # A project looped only in Claude Code has no run records, but may still need you.
            waiting: list[Todo] = session_todo(directory) if run is None and not html_out else []
            if not waiting:
                raise
            typer.echo(for_terminal("\n".join(todo_section(waiting))))
            return
        digest = collect_digest(directory, run_dir)
        if html_out is None and open_it:
            html_out = run_dir / "report.html"
        if html_out is None:
            typer.echo(for_terminal(render_text(digest)), nl=False)
            return
        page = render_html(digest, run_dir=run_dir.resolve(), out=html_out.resolve())
        write_html(html_out, page)
        typer.echo(for_terminal(f"report: {html_out}"))
        if open_it:
            webbrowser.open(html_out.resolve().as_uri())
