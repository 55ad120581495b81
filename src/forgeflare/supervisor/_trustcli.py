"""``forgeflare trust``: review what a project would run, and trust it (or list, or revoke).

It lives with the loop, not in :mod:`forgeflare.trust`: what a project would run is read from
the loop's config, and trust/ stands below the supervisor."""

from __future__ import annotations

import os
from pathlib import Path

import typer

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
or changed. This command shows each item (its files' hashes and first lines, and what its
fingerprint cannot see) and records it in your config directory (never in the project).
FORGEFLARE_TRUST=1 or --trust-project trusts every project (containers, CI).
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
        from forgeflare.supervisor._config import load_config
        from forgeflare.supervisor._trust import describe_items, loop_trust_items
        from forgeflare.trust import (
            TrustStore,
            check_trust,
            default_trust_file,
            fleet_files,
            fleet_items,
            python_module_items,
        )

        env = dict(os.environ)
        store = TrustStore(default_trust_file(env))
        if list_:
            records = store.load()
            if not records:
                typer.echo("no trusted projects")
            for path, record in sorted(records.items()):
                count = len(record.items)
                typer.echo(for_terminal(f"{path}  {count} item(s)  trusted {record.trusted_at}"))
            return
        if not directory.is_dir():
            what = "no such directory" if not directory.exists() else "not a directory"
            raise ConfigError(f"{directory}: {what}")
        real = directory.resolve()
        if revoke:
            if store.revoke(str(real)):
                typer.echo(for_terminal(f"revoked trust for {real}"))
            else:
                typer.echo(for_terminal(f"{real} was not trusted"))
            return
        config = load_config(directory, env=env).config
        items = loop_trust_items(directory, config, every_backend=True)
        items += python_module_items(hooks_module, directory)
        for fleet_file in fleet_files(directory):
            items += fleet_items(fleet_file, directory)
        if not items:
            typer.echo(
                for_terminal(f"{real}: nothing to run from this project (no hooks, no commands)")
            )
            return
        check = check_trust(items, store.load(), str(real))
        for line in describe_items(items, directory):
            typer.echo(for_terminal(line))
        if check.trusted:
            typer.echo(f"already trusted ({check.reason})")
            return
        for label, keys in (("new", check.new), ("changed", check.changed)):
            if keys:
                typer.echo(for_terminal(f"{label}: {', '.join(keys)}"))
        if show:
            raise typer.Exit(1)
        store.trust(str(real), items, utc_timestamp())
        typer.echo(
            for_terminal(f"trusted {len(items)} item(s) of {real} (recorded in {store.path})")
        )
