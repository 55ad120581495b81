"""``forgeflare fleet``: many loops from one fleet file."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

import typer

from forgeflare._errors import ConfigError
from forgeflare._termtext import for_terminal
from forgeflare._units import format_cost
from forgeflare.fleet._config import FleetLoop, FleetSettings
from forgeflare.security import scrub_environment

__all__ = ["register"]

_HELP = f"""Many loops at once, from one fleet file (FLEET.toml).

A fleet file has a [fleet] table ({", ".join(FleetSettings.model_fields)}) and one [[loop]] per
loop ({", ".join(FleetLoop.model_fields)}). See the docs page "Many loops" (docs/many-loops.md).
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

    fleet.command("k8s", help=_K8S_HELP)(_k8s_cmd)
    fleet.command("run", help=_RUN_HELP)(_run_cmd)
    fleet.command("status", help="Show each loop of a fleet: status, runs, spend, landing.")(
        _status_cmd
    )
    fleet.command(
        "stop", help="Stop a fleet: running loops end after their iteration; no new one starts."
    )(_stop_cmd)
    fleet.command("report", help=_REPORT_HELP)(_report_cmd)
    fleet.command("land", help=_LAND_HELP)(_land_cmd)
    app.add_typer(fleet, name="fleet")


_RUN_HELP = """Run every loop of a fleet file, `parallel` at a time, each in its own worktree.

Each loop is a normal `forgeflare loop` in a git worktree on the branch
forgeflare/<fleet>/<loop>, with its own records. The fleet's max_cost is shared by all loops;
a usage limit one loop reports makes the others wait too. A loop that finishes complete with
commits is landed: rebased onto its base branch, the gate run, then fast-forwarded (never a
force, never a loop that did not complete or made no commit); with land = "pr" the branch is
pushed instead and `gh pr create` opens a pull request with the loop's report. State is in
.forgeflare-fleet/<name>/fleet.json beside the fleet file; after a crash, --resume ends what
was left running and goes on. Exit 0 when every loop landed (land = none: completed), else 1.
"""


_REPORT_HELP = """One digest of every loop of the fleet: what landed (and where), what stayed on
its branch and why, the fleet's spend against its max_cost, then each loop's report page (the
newest run of `forgeflare report` in its worktree). --html FILE writes it as one HTML page.
"""


_LAND_HELP = """Retry one loop's landing: the step `fleet run` takes when a loop finishes.

For a loop left on its branch (a gate that failed at landing, a conflict you resolved, a base
branch that was dirty, or a loop you ran on in its worktree until it completed): how its newest
run finished is read again, then it is rebased onto its base, the fleet's gate is run, and the
base is fast-forwarded (land = "pr": pushed and a pull request opened). Prints one line:
NAME: OUTCOME: why. Exit 0 when it landed (or had landed), 1 when it did not, 2 for an unknown
NAME, a fleet that has not run or still runs, land = "none", or a loop that has not finished.
"""


def _log(line: str) -> None:
    import sys
    from datetime import UTC, datetime

    stamp = datetime.now(UTC).strftime("%H:%M:%S")
    print(f"{stamp} [fleet] {for_terminal(line)}", file=sys.stderr, flush=True)


def _clone_urls(spec: Any, fleet_file: Path, clone_url: str = "") -> dict[str, str]:
    """Each loop's repository as a pod can clone it: a local path becomes ``clone_url``, else
    its remote's URL (``origin``, else the only remote), said in one line; one without a
    remote is refused."""
    import subprocess

    from forgeflare.fleet._k8s import is_git_url
    from forgeflare.fleet._land import pr_remote

    if clone_url and not is_git_url(clone_url):
        raise ConfigError(f"--clone-url {clone_url}: not a git URL (https://… or git@…)")
    urls: dict[str, str] = {}
    for loop in spec.loop:
        if is_git_url(loop.repo):
            continue
        if clone_url:
            urls[loop.name] = clone_url
            continue
        path = (fleet_file.resolve().parent / loop.repo).resolve()
        remote = pr_remote(path) if path.is_dir() else None
        url = ""
        if remote is not None:
            done = subprocess.run(
                ["git", "remote", "get-url", remote],
                cwd=path,
                capture_output=True,
                text=True,
                check=False,
            )
            url = _without_credentials(done.stdout.strip())
        if not url or not is_git_url(url):
            raise ConfigError(
                f"loop {loop.name}: repo {loop.repo!r} is a path on this machine, which a pod "
                "cannot clone, and it has no remote with a URL: give --clone-url URL or set repo "
                "to a git URL"
            )
        typer.echo(f"loop {loop.name}: repo {loop.repo!r} is cloned in the pod from {url}")
        urls[loop.name] = url
    return urls


def _without_credentials(url: str) -> str:
    """``https://user:token@host/r.git`` -> ``https://host/r.git``: a manifest holds no secret."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    host, slash, path = rest.partition("/")
    return f"{scheme}://{host.rpartition('@')[2]}{slash}{path}"


def _fine(spec: Any, loop: Any) -> bool:
    """Landed, or completed with ``land = none``: anything else makes ``fleet run`` exit 1."""
    if loop.status in ("landed", "pr_opened"):
        return True
    return bool(spec.fleet.land == "none" and loop.finish_type == "complete")


def _trusted(fleet_file: Path, trust_project: bool) -> tuple[Any, dict[str, str]]:
    """The fleet file, once trusted (a fleet file from a repository is the project's: its
    loops, gate and hooks run only then), and the environment its children get; this
    process's own environment is scrubbed, so git and the gate inherit no secret."""
    from forgeflare.fleet._config import load_fleet_file
    from forgeflare.trust import fleet_items, require_trust

    spec = load_fleet_file(fleet_file)
    here = fleet_file.resolve().parent
    require_trust(here, fleet_items(fleet_file, here), os.environ, flag=trust_project)
    if trust_project:
        os.environ["FORGEFLARE_TRUST"] = "1"  # the loops check their projects themselves
    env = dict(os.environ)
    scrub_environment(os.environ)
    return spec, env


def _record(fleet_file: Path) -> Any:
    from forgeflare.fleet._config import load_fleet_file
    from forgeflare.fleet._state import load_record, state_dir

    spec = load_fleet_file(fleet_file)
    record = load_record(state_dir(fleet_file, spec.fleet.name) / "fleet.json")
    if record is None:
        raise ConfigError(f"fleet {spec.fleet.name} has not run yet: forgeflare fleet run")
    return record


def _status_lines(record: Any) -> list[str]:
    from forgeflare.platform import is_alive

    # A fleet or loop recorded as running whose process is gone (kill -9, a reboot) is dead.
    fleet_dead = record.finished_at is None and not is_alive(record.pid, record.pid_started)
    if record.finished_at is not None:
        state = f"finished {record.finished_at}"
    else:
        state = "dead — forgeflare fleet run --resume" if fleet_dead else "running"
    lines = [
        f"fleet {record.name}: {state}"
        + (
            f" · spent ${record.spent_usd:.2f}"
            if record.spent_usd is not None
            else " · cost unknown"
        )
        + (" · budget spent" if record.budget_hit else "")
        + (f" · usage window until {record.window_until}" if record.window_until else "")
    ]
    for loop in record.loops:
        cost = format_cost(loop.cost_usd)
        dead = loop.status == "running" and not is_alive(loop.pid, loop.pid_started)
        status = "dead" if dead else loop.status
        reason = "dead — forgeflare fleet run --resume" if dead else loop.reason
        lines.append(
            f"  {loop.name:<16} {status:<12} {loop.finish_type or '-':<14} "
            f"{loop.commits} commit{'' if loop.commits == 1 else 's'} · {cost} · "
            f"{len(loop.runs)} run(s)" + (f" · {reason}" if reason else "")
        )
        if loop.question:
            asked = loop.question.strip().splitlines()[0] if loop.question.strip() else "?"
            lines.append(f"    asks: {asked}")
            lines.append(f'    answer: forgeflare answer --dir {shlex.quote(loop.worktree)} "…"')
    return lines


def _k8s_cmd(
    fleet_file: Path = typer.Argument(..., help="The fleet file."),
    out: Path = typer.Option(Path("k8s"), "--out", help="Directory to write into."),
    clone_url: str = typer.Option(
        "",
        "--clone-url",
        metavar="URL",
        help="Where pods clone a loop's local repo from (default: its git remote).",
    ),
) -> None:
    from forgeflare import __version__
    from forgeflare.fleet._config import load_fleet_file
    from forgeflare.fleet._k8s import k8s_files
    from forgeflare.supervisor import FINISH_EXIT_CODES

    spec = load_fleet_file(fleet_file)
    repos = _clone_urls(spec, fleet_file, clone_url)
    codes = {str(k): v for k, v in FINISH_EXIT_CODES.items()}
    files = k8s_files(spec, codes, repos, version=__version__)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (out / name).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"--out {out}: cannot write: {exc.strerror}") from exc
    for name in files:
        typer.echo(f"wrote {out / name}")
    typer.echo(
        "note: the pod is the boundary: no bubblewrap in it, so the agent's Bash commands run "
        "unconfined inside the pod"
    )
    if spec.fleet.max_cost:
        typer.echo(
            f"note: [fleet] max_cost ${spec.fleet.max_cost:g} caps each pod; the budget "
            "across pods is not enforced on Kubernetes"
        )


def _run_cmd(
    fleet_file: Path = typer.Argument(..., help="The fleet file."),
    resume: bool = typer.Option(
        False, "--resume", help="Continue a fleet whose supervisor died (ends what it left)."
    ),
    again: bool = typer.Option(
        False,
        "--again",
        help="Run a finished fleet again: new branches and worktrees, the old records kept.",
    ),
    no_sandbox: bool = typer.Option(
        False, "--no-sandbox", help="Every loop runs its Bash commands unconfined."
    ),
    trust_project: bool = typer.Option(
        False, "--trust-project", help="Run the fleet file's commands without review."
    ),
) -> None:
    import functools

    import trio

    from forgeflare.fleet._run import FleetOptions, finished_fleet, run_fleet

    spec, env = _trusted(fleet_file, trust_project)
    opts = FleetOptions(
        fleet_file=fleet_file,
        fleet=spec,
        resume=resume,
        again=again,
        log=_log,
        env=env,
        no_sandbox=no_sandbox,
    )
    old = None if again else finished_fleet(opts)
    if old is not None:
        for line in _status_lines(old):
            typer.echo(for_terminal(line))
        typer.echo(
            f"fleet {old.name} has finished: nothing to run. `forgeflare fleet report "
            f"{fleet_file}` shows it; `forgeflare fleet run --again {fleet_file}` starts a "
            "new run (this one's records are kept)."
        )
        raise typer.Exit(0 if all(_fine(spec, loop) for loop in old.loops) else 1)
    record = trio.run(functools.partial(run_fleet, opts))
    for line in _status_lines(record):
        typer.echo(for_terminal(line))
    raise typer.Exit(0 if all(_fine(spec, loop) for loop in record.loops) else 1)


def _status_cmd(fleet_file: Path = typer.Argument(..., help="The fleet file.")) -> None:
    from forgeflare.platform import is_alive

    record = _record(fleet_file)
    if record.finished_at is None and not is_alive(record.pid, record.pid_started):
        # The fleet writes its finished record, then exits, perhaps just after the read
        # above: read once it is gone, the record is its last word.
        record = _record(fleet_file)
    for line in _status_lines(record):
        typer.echo(for_terminal(line))


def _stop_cmd(fleet_file: Path = typer.Argument(..., help="The fleet file.")) -> None:
    from forgeflare.supervisor import request_stop

    record = _record(fleet_file)
    asked = 0
    for loop in record.loops:
        if loop.status == "running" and loop.worktree:
            request_stop(Path(loop.worktree))
            asked += 1
    (Path(record.fleet_file).parent / ".forgeflare-fleet" / record.name / "stop").touch()
    typer.echo(f"asked {asked} running loop(s) to stop after their iteration")


def _report_cmd(
    fleet_file: Path = typer.Argument(..., help="The fleet file."),
    html_out: Path = typer.Option(None, "--html", metavar="FILE", help="Write HTML here."),
) -> None:
    from forgeflare.fleet._config import load_fleet_file
    from forgeflare.fleet._report import fleet_report_html, fleet_report_text
    from forgeflare.report import write_html

    record = _record(fleet_file)
    budget = load_fleet_file(fleet_file).fleet.max_cost
    if html_out is None:
        typer.echo(for_terminal(fleet_report_text(record, budget)), nl=False)
        return
    page = fleet_report_html(record, html_out, budget)
    write_html(html_out, page)
    typer.echo(f"report: {html_out}")


def _land_cmd(
    fleet_file: Path = typer.Argument(..., help="The fleet file."),
    name: str = typer.Argument(..., help="The loop to land (its [[loop]] name)."),
    trust_project: bool = typer.Option(
        False, "--trust-project", help="Run the fleet file's gate without review."
    ),
) -> None:
    from forgeflare.fleet._run import FleetOptions, land_one

    spec, env = _trusted(fleet_file, trust_project)
    opts = FleetOptions(fleet_file=fleet_file, fleet=spec, env=env, log=_log)
    loop = land_one(opts, name)
    typer.echo(f"{loop.name}: {loop.status}" + (f": {loop.reason}" if loop.reason else ""))
    raise typer.Exit(0 if loop.status in ("landed", "pr_opened") else 1)
