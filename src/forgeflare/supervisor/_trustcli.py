"""``forgeflare trust``: review what a project would run, and trust it (or list, or revoke)."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from forgeflare._clock import utc_timestamp
from forgeflare._errors import ConfigError
from forgeflare.hooks._trust import (
    TrustStore,
    check_trust,
    default_trust_file,
    python_module_items,
)
from forgeflare.supervisor._config import load_config
from forgeflare.supervisor._trust import describe_items, loop_trust_items

__all__ = ["register"]

_HELP = """Review and trust what a project would run.

A project's hooks (.forgeflare/hooks.toml and the scripts it runs, Python hook modules,
.fresher/hooks/*), its agent and notify commands, and with Claude Code as the agent its
.claude/settings.json hooks and .mcp.json, run only once you have trusted their exact
content. `forgeflare run` and `forgeflare loop` refuse (exit 2) while anything is new or
changed. This command shows each item (event, command, each file's hash and first lines) and
records it in your config directory (never in the project). FORGEFLARE_TRUST=1 or
--trust-project trusts every project (containers, CI).
"""


def register(app: typer.Typer) -> None:
    """Add ``forgeflare trust``."""

    @app.command("trust", help=_HELP)
    def trust_cmd(
        directory: Path = typer.Argument(Path("."), help="Project directory."),
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
        env = dict(os.environ)
        store = TrustStore(default_trust_file(env))
        if list_:
            records = store.load()
            if not records:
                typer.echo("no trusted projects")
            for path, record in sorted(records.items()):
                count = len(record.items)
                typer.echo(f"{path}  {count} item(s)  trusted {record.trusted_at}")
            return
        if not directory.is_dir():
            raise ConfigError(f"{directory}: not a directory")
        real = directory.resolve()
        if revoke:
            if store.revoke(str(real)):
                typer.echo(f"revoked trust for {real}")
            else:
                typer.echo(f"{real} was not trusted")
            return
        config = load_config(directory, env=env).config
        items = loop_trust_items(directory, config)
        items += python_module_items(hooks_module, directory)
        if not items:
            typer.echo(f"{real}: nothing to run from this project (no hooks, no commands)")
            return
        check = check_trust(items, store.load(), str(real))
        for line in describe_items(items, directory):
            typer.echo(line)
        if check.trusted:
            typer.echo(f"already trusted ({check.reason})")
            return
        for label, keys in (("new", check.new), ("changed", check.changed)):
            if keys:
                typer.echo(f"{label}: {', '.join(keys)}")
        if show:
            raise typer.Exit(1)
        store.trust(str(real), items, utc_timestamp())
        typer.echo(f"trusted {len(items)} item(s) of {real} (recorded in {store.path})")
