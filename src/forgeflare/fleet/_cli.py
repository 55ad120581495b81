"""``forgeflare fleet``: many loops from one fleet file."""

from __future__ import annotations

from pathlib import Path

import typer

from forgeflare._errors import ConfigError

__all__ = ["register"]

_HELP = """Many loops at once, from one fleet file (FLEET.toml).

A fleet file has a [fleet] table (name, parallel, max_cost, gate, land) and one [[loop]] per
loop (name, repo, base, mode, prompt, plan, max_iterations, max_runtime, max_cost, backend,
model). See the README section "Many loops".
"""

_K8S_HELP = """Write the fleet as a Kubernetes Indexed Job (one index per loop).

Writes configmap.yaml (each loop's settings and task, and the pod's script), job.yaml (the
Indexed Job: parallelism from the fleet, activeDeadlineSeconds from the longest max_runtime,
a podFailurePolicy from forgeflare's exit codes, secrets from a Secret named
forgeflare-<fleet>), a Containerfile for the image and a README, into --out (default k8s/),
and lists them. Nothing is applied to a cluster.
"""


def register(app: typer.Typer) -> None:
    """Add ``fleet`` and its subcommands."""
    fleet = typer.Typer(help=_HELP, no_args_is_help=True, add_completion=False)

    @fleet.command("k8s", help=_K8S_HELP)
    def k8s_cmd(
        fleet_file: Path = typer.Argument(..., help="The fleet file."),
        out: Path = typer.Option(Path("k8s"), "--out", help="Directory to write into."),
    ) -> None:
        from forgeflare.fleet._config import load_fleet_file
        from forgeflare.fleet._k8s import k8s_files
        from forgeflare.supervisor._finish import FINISH_EXIT_CODES

        spec = load_fleet_file(fleet_file)
        files = k8s_files(spec, {str(k): v for k, v in FINISH_EXIT_CODES.items()})
        try:
            out.mkdir(parents=True, exist_ok=True)
            for name, text in files.items():
                (out / name).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"--out {out}: cannot write: {exc.strerror}") from exc
        for name in files:
            typer.echo(f"wrote {out / name}")

    app.add_typer(fleet, name="fleet")
