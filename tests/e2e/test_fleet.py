"""Fleets of real ``forgeflare loop`` processes against ``forgeflare mock-api``.

Each loop's task names it, so one multi-conversation script serves loops that run in parallel.
Waits are real but scaled down with ``FORGEFLARE_TIME_SCALE``; every loop runs 1-2 iterations.
The loops are always real ``forgeflare loop`` processes; ``fleet run`` is one where a signal,
a kill or a budget stop is the point, and runs in the test process where it is not.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from agent_support import text_response, tool_response
from cli_inprocess import run_cli
from mockapi_support import MockAPI
from project_support import git, run_text
from supervisor_agents.project import alive, base_env, env_for, wait_for


def make_repo(root: Path, *loops: str) -> Path:
    """A repository on ``main`` with a one-task plan file per loop (``PLAN-<loop>.md``)."""
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Test")
    git(repo, "config", "user.email", "test@example.invalid")
    git(repo, "config", "commit.gpgsign", "false")
    (repo / ".gitignore").write_text(".fresher/\n")
    (repo / "README.md").write_text("base\n")
    for name in loops:
        (repo / f"PLAN-{name}.md").write_text(f"- [ ] {name}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    return repo


def commit_command(loop: str, name: str, text: str) -> str:
    """Shell: write ``name``, check off the loop's plan and commit."""
    return (
        f"printf '{text}\\n' > {name} && sed -i 's/- \\[ \\]/- [x]/' PLAN-{loop}.md"
        f" && git add {name} PLAN-{loop}.md && git commit -qm 'write {name}'"
    )


def commit_file(loop: str, name: str, text: str) -> dict[str, Any]:
    """A scripted turn: the agent writes ``name``, checks off its plan and commits."""
    return tool_response(("Bash", {"command": commit_command(loop, name, text)}))


def shell_agent(command: str) -> dict[str, Any]:
    """A loop's agent that is the shell ``command`` (backend ``command``): for fleet tests
    about landing, where the own agent and a mock API would only run the same command."""
    return {"backend": "command", "agent_command": f"sh -c {shlex.quote(command)}"}


def completing_agent(loop: str, name: str, text: str) -> dict[str, Any]:
    """A shell agent whose one iteration commits ``name`` and checks off the loop's plan."""
    return shell_agent(commit_command(loop, name, text))


def commits_command(name: str) -> str:
    """Shell: commit ``<name>.txt`` (work, but the plan stays open)."""
    return f"echo 1 > {name}.txt && git add {name}.txt && git commit -qm {name}"


def commits(name: str) -> dict[str, Any]:
    """A scripted turn: the agent commits ``<name>.txt`` (work, but the plan stays open)."""
    return tool_response(("Bash", {"command": commits_command(name)}))


def completes_with(loop: str, name: str, text: str) -> list[dict[str, Any]]:
    """One iteration that commits ``name`` and checks off the loop's plan (so it completes)."""
    return [commit_file(loop, name, text), text_response("Done.")]


def fleet_file(
    root: Path, fleet: str, loops: list[dict[str, Any]], *, repo: str = "repo", **settings: Any
) -> Path:
    lines = ["[fleet]", f'name = "{fleet}"']
    lines += [f"{k} = {json.dumps(v)}" for k, v in settings.items()]
    for loop in loops:
        lines += ["", "[[loop]]", f"repo = {json.dumps(repo)}"]
        lines += [f"{k} = {json.dumps(v)}" for k, v in loop.items()]
    path = root / "fleet.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def loop(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "prompt": f"Task {name}: do it.",
        "plan": f"PLAN-{name}.md",
        "max_iterations": 2,
        **extra,
    }


def conv(name: str, responses: list[dict[str, Any]]) -> dict[str, Any]:
    return {"match": f"Task {name}:", "responses": responses}


def started_fleet(
    path: Path, env: dict[str, str], output: int = subprocess.PIPE
) -> subprocess.Popen[str]:
    """``forgeflare fleet run PATH`` started in the background, its output captured (or sent
    to ``output``: DEVNULL for one the test kills, whose pipes nobody would drain)."""
    return subprocess.Popen(
        [sys.executable, "-m", "forgeflare", "fleet", "run", str(path)],
        env=env,
        stdout=output,
        stderr=output,
        text=True,
    )


def fleet(
    *args: str, env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return run_text([sys.executable, "-m", "forgeflare", "fleet", *args], env=env, timeout=timeout)


def fleet_here(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``forgeflare fleet ARGS`` in the test process, for a command whose process is not the
    point (``status``, ``report``, a refusal, a fleet whose records, landing or pull request
    are): each keeps tests that start it as a process; the loops are processes either way."""
    return run_cli(["fleet", *args], cwd=Path.cwd(), env=env)


def state(path: Path, name: str) -> dict[str, Any]:
    data = json.loads((path.parent / ".forgeflare-fleet" / name / "fleet.json").read_text())
    return {"fleet": data, **{loop["name"]: loop for loop in data["loops"]}}


def run_records(worktree: Path, runs: str = ".fresher/runs") -> list[dict[str, Any]]:
    root = worktree / runs
    return [json.loads((d / "run.json").read_text()) for d in sorted(root.iterdir())]


def marked_processes(marker: str) -> list[int]:
    """Processes of this user whose command line or environment mentions ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            text = (entry / "cmdline").read_bytes() + (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker.encode() in text and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def test_three_loops_two_land_one_conflicts(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "one", "two", "three")
    loops = [
        loop("one", **completing_agent("one", "shared.txt", "one")),
        loop("two", **completing_agent("two", "two.txt", "two")),
        loop("three", **completing_agent("three", "shared.txt", "three")),
    ]
    # as in the README: the fleet file in the repository, repo = "."
    path = fleet_file(
        repo,
        "night",
        loops,
        repo=".",
        parallel=2,
        gate="test -s shared.txt || test -s two.txt",
    )
    git(repo, "add", "fleet.toml")
    git(repo, "commit", "-qm", "fleet")
    done = fleet("run", str(path), env=base_env())
    assert done.returncode == 1, done.stderr  # one loop did not land
    rec = state(path, "night")
    assert rec["two"]["status"] == "landed"
    # one and three both write shared.txt: whichever lands second conflicts
    statuses = sorted(rec[n]["status"] for n in ("one", "three"))
    assert statuses == ["conflict", "landed"], rec
    loser = next(n for n in ("one", "three") if rec[n]["status"] == "conflict")
    winner = "three" if loser == "one" else "one"
    assert "conflicts in shared.txt" in rec[loser]["reason"]
    for name in ("one", "two", "three"):
        assert rec[name]["finish_type"] == "complete"
        assert rec[name]["commits"] == 1
    # fast-forwards only: main is init + two commits, in a line
    log = git(repo, "log", "--format=%s", "main").splitlines()
    assert sorted(log) == ["fleet", "init", "write shared.txt", "write two.txt"]
    assert git(repo, "rev-list", "--merges", "--count", "main") == "0"
    assert (repo / "shared.txt").read_text() == f"{winner}\n"  # the user's tree moved too
    # the conflicting work stays on its branch
    assert git(repo, "show", f"forgeflare/night/{loser}:shared.txt") == loser
    status = fleet_here("status", str(path), env=base_env())
    assert status.returncode == 0
    (line,) = [x for x in status.stdout.splitlines() if x.split()[0] == loser]
    assert line.split()[1] == "conflict"
    report = fleet_here("report", str(path), env=base_env())
    assert report.returncode == 0, report.stderr
    assert "landed" in report.stdout
    assert "rebase onto main conflicts in shared.txt" in report.stdout
    assert "landed: 2 of 3 loop(s)" in report.stdout
    for name in ("one", "two", "three"):
        assert f"== {name} (forgeflare/night/{name}) ==" in report.stdout
    assert git(repo, "status", "--porcelain") == ""  # the fleet's state is ignored
    page = tmp_path / "fleet.html"
    written = fleet_here("report", str(path), "--html", str(page), env=base_env())
    assert written.stdout.strip() == f"report: {page}"
    text = page.read_text()
    assert "<h1>forgeflare fleet night</h1>" in text
    assert all(f"id='loop-{name}'" in text for name in ("one", "two", "three"))
    if "timeline-one" in text:  # with plotly (the report extra): its JavaScript once per page
        assert text.count("DecompressionStream") == 1
        assert all(f'id="timeline-{name}"' in text for name in ("one", "two", "three"))
        assert len(text) < 2_500_000, len(text)  # three loops: was 14.5 MB


def test_agents_that_add_everything_still_both_land(tmp_path: Path) -> None:
    """Agents that commit with ``git add -A`` in a repository whose .gitignore does not list
    forgeflare's files: no loop commits a lock or a record, so the second lands too."""
    repo = make_repo(tmp_path, "one", "two")
    git(repo, "rm", "-q", ".gitignore")
    git(repo, "commit", "-qm", "no ignore file")

    def adds_all(loop: str) -> dict[str, Any]:
        return shell_agent(
            f"echo {loop} > {loop}.txt && sed -i 's/- \\[ \\]/- [x]/' PLAN-{loop}.md"
            f" && git add -A && git commit -qm 'write {loop}'"
        )

    loops = [loop("one", **adds_all("one")), loop("two", **adds_all("two"))]
    path = fleet_file(tmp_path, "all", loops, parallel=2)
    done = fleet_here("run", str(path), env=base_env())
    rec = state(path, "all")
    assert done.returncode == 0, (done.stderr, rec)
    assert (rec["one"]["status"], rec["two"]["status"]) == ("landed", "landed")
    tracked = git(repo, "ls-files").splitlines()
    assert not [f for f in tracked if f.startswith((".fresher/", ".forgeflare/", ".entire/"))]


def test_a_finished_fleet_says_so_and_again_starts_a_new_run(tmp_path: Path) -> None:
    make_repo(tmp_path, "one")
    path = fleet_file(tmp_path, "f", [loop("one", **completing_agent("one", "one.txt", "one"))])
    env = base_env()
    assert fleet_here("run", str(path), env=env).returncode == 0  # records: its loop is a process
    record = path.parent / ".forgeflare-fleet" / "f" / "fleet.json"
    first = record.read_text()
    again = fleet_here("run", str(path), env=env)
    assert again.returncode == 0, again.stderr
    assert "fleet f has finished: nothing to run" in again.stdout
    assert f"forgeflare fleet run --again {path}" in again.stdout
    assert record.read_text() == first  # nothing re-ran, nothing was overwritten
    # --again: a new run with its own records; here its loop cannot start (preflight, exit 2)
    text = re.sub(
        r"(?m)^agent_command = .*$", 'agent_command = "no-such-agent-here"', path.read_text()
    )
    path.write_text(text)
    done = fleet_here("run", "--again", str(path), env=env)
    assert done.returncode == 1, done.stderr
    rec = state(path, "f")
    assert rec["fleet"]["attempt"] == 2
    assert (rec["one"]["status"], rec["one"]["exit_code"]) == ("failed", 2)
    assert rec["one"]["finish_type"] is None
    assert rec["one"]["branch"] == "forgeflare/f/one-2"
    kept = json.loads((record.parent / "fleet.1.json").read_text())
    assert kept == json.loads(first)
    assert kept["loops"][0]["status"] == "landed"


def spends(loop: str, first: str = "true") -> dict[str, Any]:
    """A shell agent whose iterations (after the shell ``first``) commit and report $5 spent
    (a million input tokens) in its report file: the fleet budget reads the loops' records,
    whichever agent wrote them (the own agent's spend is the last test's)."""
    report = json.dumps({"outcome": "ok", "tokens": {"input": 1_000_000}, "cost_usd": 5.0})
    return shell_agent(
        f"{first} && {commits_command(loop)}"
        f' && printf %s {shlex.quote(report)} > "$FORGEFLARE_REPORT"'
    )


def runs_in_night_logs(repo: Path) -> None:
    """The repository's loops keep their runs in ``night-logs`` (``[paths] log_dir``)."""
    (repo / ".fresher").mkdir()
    (repo / ".fresher" / "config.toml").write_text('[paths]\nlog_dir = "night-logs"\n')
    (repo / ".gitignore").write_text(".fresher/\nnight-logs/\n")
    git(repo, "add", "-f", ".fresher/config.toml", ".gitignore")
    git(repo, "commit", "-qm", "runs in night-logs")


def test_the_fleet_budget_stops_the_remaining_loops(tmp_path: Path) -> None:
    """The fleet reads each loop's spend where its runs are, ``[paths] log_dir`` too: here the
    loops keep them in ``night-logs`` (the loop still running below keeps them where they are
    by default)."""
    runs_in_night_logs(make_repo(tmp_path, "a", "b"))
    loops = [loop(n, **spends(n)) for n in ("a", "b")]
    path = fleet_file(tmp_path, "budget", loops, parallel=1, max_cost=4)
    done = fleet("run", str(path), env=base_env())
    assert done.returncode == 1, done.stderr
    rec = state(path, "budget")
    assert rec["fleet"]["budget_hit"] is True
    assert 5.0 <= rec["fleet"]["spent_usd"] < 5.01
    # whichever loop ran first spent $5 in its first iteration and finished budget ...
    ran, other = sorted((rec["a"], rec["b"]), key=lambda r: r["runs"] == [])
    assert ran["finish_type"] == "budget"
    assert ran["status"] == "stopped"
    assert ran["reason"] == "the fleet budget was spent (the loop finished budget)"
    assert ran["cost_usd"] == rec["fleet"]["spent_usd"]
    worktree = tmp_path / ".forgeflare-fleet/budget/worktrees" / ran["name"]
    assert {p.parent.parent.relative_to(worktree) for p in worktree.rglob("run.json")} == {
        Path("night-logs")
    }
    (record,) = run_records(worktree, "night-logs")
    assert len(record["iterations"]) == 1
    # ... and the other never started
    assert other["status"] == "stopped"
    assert other["reason"] == "the fleet budget was spent first"
    assert other["runs"] == []
    assert "budget spent" in fleet_here("status", str(path), env=base_env()).stdout


def test_the_fleet_budget_stops_a_running_loop(tmp_path: Path) -> None:
    """A loop still running when another's spend stops the fleet is ended, its record kept
    (``[paths] log_dir`` is the test above)."""
    make_repo(tmp_path, "a", "b")
    # b is a loop still running (its agent a shell that hangs) when a's spend stops the fleet:
    # a spends once b's agent runs (a shell agent spends at once, before b's loop is up)
    running = tmp_path / "b-running"
    waits = f"while [ ! -e {running} ]; do sleep 0.05; done"
    loops = [
        loop("a", **spends("a", waits)),
        loop("b", **shell_agent(f"touch {running}; sleep 120")),
    ]
    path = fleet_file(tmp_path, "budget2", loops, parallel=2, max_cost=4)
    done = fleet("run", str(path), env=base_env())
    assert done.returncode == 1, done.stderr
    assert "fleet budget $4 spent: stopping the loops" in done.stderr
    rec = state(path, "budget2")
    assert 5.0 <= rec["fleet"]["spent_usd"] < 5.01
    assert rec["a"]["finish_type"] == "budget"
    assert rec["b"]["status"] == "stopped"
    assert rec["b"]["reason"].startswith("the fleet budget was spent (the loop finished ")
    worktree = tmp_path / ".forgeflare-fleet/budget2/worktrees/a"
    assert {p.parent.parent.relative_to(worktree) for p in worktree.rglob("run.json")} == {
        Path(".fresher/runs")
    }
    (b_run,) = run_records(tmp_path / ".forgeflare-fleet/budget2/worktrees/b")
    assert b_run["finished_at"] is not None
    assert marked_processes(str(tmp_path / ".forgeflare-fleet")) == []


def test_a_usage_limit_in_one_loop_makes_the_others_wait(tmp_path: Path, mock_api: MockAPI) -> None:
    make_repo(tmp_path, "a", "b")
    limit = {
        "error": {"status": 429, "type": "rate_limit_error", "headers": {"retry-after": "1000"}}
    }
    # b's first iteration is still running when a meets the limit: it holds until the test has
    # seen a's window (1000 s at time scale 0.01: 10 s) in the machine's window store; b then
    # waits before its second, having read that window from the store
    trees = tmp_path / ".forgeflare-fleet/limits/worktrees"
    go = trees / "b" / ".fresher" / "go"  # in b's worktree: its box sees it
    holds = tool_response(
        ("Bash", {"command": f"{commits_command('b1')} && until [ -e {go} ]; do sleep 0.05; done"})
    )
    server = mock_api(
        {
            "conversations": [
                conv("a", [limit, *completes_with("a", "a.txt", "a")]),
                conv(
                    "b",
                    [
                        holds,
                        text_response("Half way."),
                        *completes_with("b", "b.txt", "b"),
                    ],
                ),
            ]
        }
    )
    path = fleet_file(tmp_path, "limits", [loop("a"), loop("b")], parallel=2)
    env = {**env_for(server), "XDG_STATE_HOME": str(tmp_path / "state")}
    windows = tmp_path / "state/forgeflare/windows.json"
    supervisor = started_fleet(path, env)
    wait_for(lambda: windows.exists() and "forgeflare@" in windows.read_text())
    go.parent.mkdir(parents=True, exist_ok=True)  # b's loop made it already
    go.touch()
    _, err = supervisor.communicate(timeout=300)
    assert supervisor.returncode == 0, err
    assert "usage limit reported: every loop waits until" in err
    assert not (tmp_path / ".forgeflare-fleet/limits/window.json").exists()
    rec = state(path, "limits")
    assert rec["a"]["status"] == rec["b"]["status"] == "landed"
    (a_run,) = run_records(trees / "a")
    (b_run,) = run_records(trees / "b")
    assert a_run["iterations"][0]["outcome"] == "rate_limited"
    store = json.loads(windows.read_text())
    ((key, row),) = store["windows"].items()
    assert key.startswith("forgeflare@")
    window = row["until"]
    assert rec["fleet"]["window_until"] == window
    status = fleet_here("status", str(path), env=env).stdout
    assert f"usage window until {window}" in status.splitlines()[0]
    # b never met the limit itself, yet it waited for the same window
    assert all(row["outcome"] == "ok" for row in b_run["iterations"])
    assert {"kind": "limit_wait", "until": window}.items() <= b_run["waits"][0].items()


def test_kill_9_then_resume_leaves_no_process_and_loses_no_record(tmp_path: Path) -> None:
    make_repo(tmp_path, "a", "b")

    def hangs_then_completes(name: str) -> dict[str, Any]:
        """The first iteration hangs (its marker says it started), the next one completes."""
        hung = tmp_path / f"hung-{name}"
        complete = commit_command(name, f"{name}.txt", name)
        return shell_agent(f"if [ -e {hung} ]; then {complete}; else touch {hung}; sleep 120; fi")

    loops = [loop(n, **hangs_then_completes(n)) for n in "ab"]
    path = fleet_file(tmp_path, "crash", loops, parallel=2)
    sdir = tmp_path / ".forgeflare-fleet" / "crash"
    env = base_env()
    supervisor = started_fleet(path, env, subprocess.DEVNULL)

    def both_waiting() -> bool:
        hung = all((tmp_path / f"hung-{n}").exists() for n in "ab")
        if not hung or not (sdir / "fleet.json").exists():
            return False
        rec = state(path, "crash")
        return all(rec[n]["status"] == "running" and rec[n]["runs"] for n in "ab")

    wait_for(both_waiting)
    status = fleet_here("status", str(path), env=env)
    assert status.stdout.startswith("fleet crash: running")
    before = state(path, "crash")
    loop_pids = [before[n]["pid"] for n in "ab"]
    supervisor.send_signal(signal.SIGKILL)
    supervisor.wait(timeout=60)
    assert all(alive(pid) for pid in loop_pids)  # orphaned, still running
    dead = fleet("status", str(path), env=env)
    assert dead.stdout.startswith("fleet crash: dead — forgeflare fleet run --resume"), dead.stdout
    refused = fleet_here("run", str(path), env=env)
    assert refused.returncode == 2
    assert "fleet run --resume" in refused.stderr
    done = fleet("run", "--resume", str(path), env=env)
    assert done.returncode == 0, done.stderr
    assert "ended 2 loop process(es) the dead fleet left running" in done.stderr
    assert marked_processes(str(sdir)) == []
    rec = state(path, "crash")
    for name in "ab":
        assert rec[name]["status"] == "landed"
        first, second = run_records(sdir / "worktrees" / name)
        assert [first["run_id"], second["run_id"]] == rec[name]["runs"]
        assert first["run_id"] == before[name]["runs"][0]
        assert first["finished_at"] is not None  # the ended loop wrote its record
        assert second["finish_type"] == "complete"


def test_sigterm_ends_the_loops_and_leaves_the_fleet_resumable(tmp_path: Path) -> None:
    make_repo(tmp_path, "a", "b")
    loops = [loop(n, **shell_agent(f"touch {tmp_path}/hung-{n}; sleep 120")) for n in "ab"]
    path = fleet_file(tmp_path, "term", loops, parallel=2)
    sdir = tmp_path / ".forgeflare-fleet" / "term"
    supervisor = started_fleet(path, base_env())
    wait_for(lambda: all((tmp_path / f"hung-{n}").exists() for n in "ab"))
    supervisor.send_signal(signal.SIGTERM)
    _, err = supervisor.communicate(timeout=60)
    assert supervisor.returncode == 130, err
    assert (
        err.strip()
        .splitlines()[-1]
        .endswith(
            "SIGTERM: the fleet's loops were ended; continue with `forgeflare fleet run --resume`"
        )
    )
    assert marked_processes(str(sdir)) == []
    rec = state(path, "term")
    assert rec["fleet"]["finished_at"] is None
    for name in "ab":
        assert rec[name]["status"] == "pending"
        (run,) = run_records(sdir / "worktrees" / name)
        assert run["finished_at"] is not None  # each loop ended cleanly and wrote its record


def test_fleet_stop_ends_the_running_loop_and_starts_no_other(tmp_path: Path) -> None:
    make_repo(tmp_path, "a", "b")
    started, go = tmp_path / "started", tmp_path / "go"

    def works(name: str) -> dict[str, Any]:
        """An iteration that commits (work, the plan stays open), then waits for ``go``."""
        return shell_agent(
            f"echo {name} >> {started} && echo 1 > {name}.txt && git add {name}.txt"
            f" && git commit -qm {name} && while [ ! -e {go} ]; do sleep 0.05; done"
        )

    path = fleet_file(tmp_path, "stopme", [loop(n, **works(n)) for n in "ab"], parallel=1)
    env = base_env()
    supervisor = started_fleet(path, env)
    wait_for(started.exists)  # the first loop's iteration is under way
    asked = fleet("stop", str(path), env=env)
    assert asked.returncode == 0
    assert asked.stdout.strip() == "asked 1 running loop(s) to stop after their iteration"
    go.touch()  # the iteration ends
    _, err = supervisor.communicate(timeout=60)
    assert supervisor.returncode == 1, err
    rec = state(path, "stopme")
    ran, other = sorted((rec["a"], rec["b"]), key=lambda r: r["runs"] == [])
    assert ran["finish_type"] == "stopped"
    assert ran["status"] == "not_landed"
    assert other["status"] == "stopped"
    assert other["reason"] == "the fleet was stopped (fleet stop)"
    assert other["runs"] == []
    assert started.read_text().split() == [ran["name"]]  # one iteration in all


def test_land_pr_pushes_and_opens_a_pull_request_with_the_report(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "a")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "gh").write_text(
        '#!/bin/sh\nprintf \'%s\\n\' "$@" > "$GH_LOG.argv"\ncat > "$GH_LOG.stdin"\n'
        "echo https://github.example/o/r/pull/1\n"
    )
    (bindir / "gh").chmod(0o755)
    path = fleet_file(
        tmp_path, "prs", [loop("a", **completing_agent("a", "a.txt", "a"))], land="pr"
    )
    env = base_env()
    env.update(PATH=f"{bindir}:{env['PATH']}", GH_LOG=str(tmp_path / "gh"))
    done = fleet_here("run", str(path), env=env)
    assert done.returncode == 0, done.stderr
    rec = state(path, "prs")
    assert rec["a"]["status"] == "pr_opened"
    assert rec["a"]["reason"] == "pushed to origin; pull request https://github.example/o/r/pull/1"
    branch = "forgeflare/prs/a"
    assert git(remote, "rev-parse", branch) == git(repo, "rev-parse", branch)
    assert git(repo, "rev-list", "--count", "main") == "1"  # nothing merged locally
    argv = (tmp_path / "gh.argv").read_text().splitlines()
    assert argv[argv.index("--title") + 1] == "prs/a: Task a: do it."
    (run,) = run_records(tmp_path / ".forgeflare-fleet/prs/worktrees/a")
    body = (tmp_path / "gh.stdin").read_text()
    assert "> Task a: do it." in body
    assert f"run {run['run_id']}" in body
    report = fleet_here("report", str(path), env=env)
    assert "landed: 1 of 1 loop(s)" in report.stdout
    assert f"run {run['run_id']}" in report.stdout


def test_every_view_of_an_iteration_prints_the_same_total_and_cost(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    """One iteration of the own agent with cache tokens: the agent's ``[usage]`` line, the
    status line (what it reads from that line), the iteration line, ``run.json``, ``report``,
    ``watch`` and ``fleet report`` agree on its total (every kind of token) and its cost."""
    from forgeflare._units import format_cost
    from forgeflare.supervisor.records import AgentStatus, parse_agent_line

    make_repo(tmp_path, "a")
    first = {
        **commit_file("a", "a.txt", "a"),
        "usage": {
            "input_tokens": 100,
            "output_tokens": 20,
            "cache_read_input_tokens": 300,
            "cache_creation_input_tokens": 50,
        },
    }
    last = {
        **text_response("Done."),
        "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 400},
    }
    total = 100 + 20 + 300 + 50 + 10 + 5 + 400
    server = mock_api({"conversations": [conv("a", [first, last])]})
    path = fleet_file(tmp_path, "same", [loop("a", model="claude-opus-4-6")])
    done = fleet_here("run", str(path), env=env_for(server))
    assert done.returncode == 0, done.stderr
    worktree = tmp_path / ".forgeflare-fleet/same/worktrees/a"
    (run_dir,) = sorted((worktree / ".fresher" / "runs").iterdir())
    record = json.loads((run_dir / "run.json").read_text())
    (row,) = record["iterations"]
    assert sum(row["tokens"].values()) == total
    assert record["totals"]["tokens"] == total
    cost = format_cost(row["cost_usd"])
    assert cost.startswith("$0.00")  # priced, and small enough to need four digits
    # the agent's [usage] line, and the status line that reads it
    usage = [
        ln for ln in (run_dir / "iteration-001.log").read_text().splitlines() if "[usage]" in ln
    ]
    assert usage[-1].endswith(f"total={total}")
    status = AgentStatus()
    for line in usage:
        status = parse_agent_line(line, status)
    assert status.tokens == total
    # the iteration line
    loop_log = (run_dir / "loop.log").read_text()
    assert "iteration 1: ok, exit 0, stop end_turn, " in loop_log
    assert f"tokens {total}, {cost}, commits 1" in loop_log
    # report, watch and the fleet report
    report = run_cli(["report", "--dir", worktree], cwd=tmp_path, env=env_for(server))
    assert report.returncode == 0, report.stderr
    assert f"{total} tokens · {cost}" in report.stdout
    assert f"{total} tok {cost}" in report.stdout
    watch = run_cli(["watch", "--wait", "0", "--dir", worktree], cwd=tmp_path, env=env_for(server))
    assert watch.returncode == 0, watch.stderr
    assert f"tokens {total} · {cost}" in watch.stdout
    fleet_report = fleet_here("report", str(path), env=env_for(server)).stdout
    assert f"{total} tokens · {cost}" in fleet_report
    assert f"{total} tok {cost}" in fleet_report
    assert f"· {cost} · 1 run(s)" in fleet_report
