"""``forgeflare trust``: review what a project would run, and trust it (or list, or revoke).

It lives with the loop, not in :mod:`forgeflare.trust`: what a project would run is read from
the loop's config, and trust/ stands below the supervisor."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import typer

from forgeflare._cliopts import OldDir, ProjectDir, Yes, project_dir
from forgeflare._clock import utc_timestamp
from forgeflare._errors import ConfigError
from forgeflare._termtext import for_terminal

__all__ = ["register"]

_HELP = """Review and trust what a project would run.

Everything a project supplies that runs code, moves a secret or loosens a limit is a trust
item: its hooks (.forgeflare/hooks.toml and every file beside the scripts it runs, Python hook
modules with their packages and .pyc, .fresher/hooks/*), the agent, gate and notify commands,
[agent] extra_args, [security] keys that loosen, and with Claude Code as the agent every
.claude/settings*.json key that runs or redirects, .mcp.json and --settings files.
`forgeflare run`, `loop`, `hooks test` and `fleet run` refuse (exit 2) while anything is new
or changed. This command shows each item with what it means for you (new and changed ones
marked, what its fingerprint cannot see), then each file they run once (hash and first lines),
and asks y/N on a terminal; --yes answers for scripts. Without a terminal and without --yes it
exits 2 and names the command. Trust is recorded in your config directory (never in the
project). FORGEFLARE_TRUST=1 or --trust-project trusts every project (containers, CI).
"""


def register(app: typer.Typer) -> None:
    """Add ``forgeflare trust``."""

    @app.command("trust", help=_HELP)
    def trust_cmd(
        old_dir: OldDir = None,
        project: ProjectDir = Path("."),
        yes: Yes = False,
        list_: bool = typer.Option(False, "--list", help="List trusted projects and exit."),
        revoke: bool = typer.Option(False, "--revoke", help="Forget the project's trust."),
        show: bool = typer.Option(
            False,
            "--show",
            help="Only show what would run and whether it is trusted: exit 0 when all of it "
            "is, 1 when something is new or changed.",
        ),
        hooks_module: list[str] = typer.Option(
            [], "--hooks-module", help="Also a Python hooks module you pass to run (repeatable)."
        ),
    ) -> None:
        from forgeflare.trust import TrustStore, default_trust_file

        directory = project_dir(project, old_dir, "trust")
        store = TrustStore(default_trust_file(os.environ))
        if list_:
            records = store.load()
            if not records:
                typer.echo("no trusted projects")
            for path, record in sorted(records.items()):
                count = len(record.items)
                typer.echo(for_terminal(f"{path}  {count} item(s)  trusted {record.trusted_at}"))
            return
        if revoke:
            real = directory.resolve()
            if store.revoke(str(real)):
                typer.echo(for_terminal(f"revoked trust for {real}"))
            else:
                typer.echo(for_terminal(f"{real} was not trusted"))
            return
        _review(directory, yes=yes, show=show, hooks_module=hooks_module)


def _review(directory: Path, *, yes: bool, show: bool, hooks_module: list[str]) -> None:
    """Show what ``directory`` would run and, when asked (or ``yes``), trust it."""
    from forgeflare.supervisor.config._config import load_config
    from forgeflare.supervisor.config._trust import loop_trust_items
    from forgeflare.trust import (
        TrustStore,
        check_trust,
        default_trust_file,
        fleet_files,
        fleet_items,
        python_module_items,
        review_lines,
        trust_command,
    )

    env = dict(os.environ)
    store = TrustStore(default_trust_file(env))
    real = directory.resolve()
    loaded = load_config(directory, env=env).config
    items = loop_trust_items(directory, loaded, every_backend=True)
    items += python_module_items(hooks_module, directory)
    for fleet_file in fleet_files(directory):
        items += fleet_items(fleet_file, directory)
    if not items:
        typer.echo(
            for_terminal(f"{real}: nothing to run from this project (no hooks, no commands)")
        )
        return
    check = check_trust(items, store.load(), str(real))
    typer.echo(for_terminal(f"{real} would run or loosen:"))
    for line in review_lines(
        items,
        check,
        functools.partial(_head, real),
        hooks_dir=str(loaded.paths.hooks_dir),
    ):
        typer.echo(for_terminal(line))
    if check.trusted:
        typer.echo(f"already trusted ({check.reason})")
        return
    marked = len(check.new) + len(check.changed)
    if show:
        typer.echo(f"not trusted: {marked} new or changed item(s)")
        raise typer.Exit(1)
    again = trust_command(real, Path.cwd().resolve()) + (
        "".join(f" --hooks-module {m}" for m in hooks_module)
    )
    if not yes:
        if not sys.stdin.isatty():
            raise ConfigError(
                f"trust: no terminal to ask on; after reviewing the above, run `{again} --yes`"
            )
        if not _ask(f"Trust these {len(items)} item(s) ({marked} new or changed)? [y/N] "):
            typer.echo(for_terminal(f"not trusted: nothing recorded (review again with `{again}`)"))
            raise typer.Exit(1)
    store.trust(str(real), items, utc_timestamp())
    typer.echo(for_terminal(f"trusted {len(items)} item(s) of {real} (recorded in {store.path})"))


def _ask(question: str) -> bool:
    """y/N on the terminal: only y or yes trusts; anything else (Enter, EOF) does not."""
    typer.echo(question, nl=False)
    try:
        answer = input()
    except EOFError:
        typer.echo()
        return False
    return answer.strip().lower() in {"y", "yes"}


def _head(project: Path, rel: str, lines: int = 3) -> list[str]:
    """The first lines of a covered file (the review shows what a script starts with)."""
    try:
        with (project / rel).open(encoding="utf-8", errors="replace") as fh:
            return [fh.readline().rstrip("\n") for _ in range(lines)]
    except OSError:
        return []
