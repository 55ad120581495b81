"""Complete means delivered: the loop's checkpoint, the clean-tree claim and refusals, end to end.

Real ``git``, the real loop (in this process, ``Project.arun``, or as a process where it is
killed; a preflight refusal through the CLI's entry point in this process), real hook scripts
and small shell agents; the reviewer talks to ``forgeflare mock-api``.
Every case ends ``complete`` with all work committed and a clean tree, or with another finish
type and its reason on one line.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
import trio

from agent_support import verdict
from cli_inprocess import forgeflare_here
from mockapi_support import MockAPI, MockServer
from supervisor_agents.project import Project, base_env, env_for, wait_for

INIT_HOOKS = (
    Path(__file__).resolve().parents[2] / "src/forgeflare/templates/files/dot-fresher/hooks"
)

PLAN = "# Plan\n- [ ] fix the bug\n- [ ] write the docs\n"

# Does the work, checks every box, claims by a convergence signal; never commits.
CLAIM_WITHOUT_COMMIT = r"""
echo fixed > fix.txt
sed -i 's/- \[ \]/- [x]/g' IMPLEMENTATION_PLAN.md
mkdir -p .forgeflare
printf '{"observations":[],"final":{"reason":"convergence_signal"}}' > .forgeflare/convergence.json
"""


def agent(project: Project, body: str, name: str = "agent.sh") -> str:
    path = project.write(f".agents/{name}", "#!/bin/sh\nset -e\n" + body)
    path.chmod(0o755)
    return str(path)


def git(project: Project, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=project.dir, check=True, capture_output=True, text=True, env=env
    ).stdout


def clean(project: Project) -> bool:
    return git(project, "status", "--porcelain", "--untracked-files=all") == ""


@pytest.fixture
def project(tmp_path: Path) -> Project:
    p = Project(tmp_path / "proj")
    p.dir.mkdir()
    p.git_init()
    p.write(
        ".gitignore",
        ".fresher/runs/\n.fresher/loop.lock\nenv.*\n.forgeflare/convergence.json\n.agents/\n",
    )
    p.write("IMPLEMENTATION_PLAN.md", PLAN)
    git(p, "add", "-A")
    git(p, "commit", "-qm", "plan")
    return p


async def test_a_gate_passing_before_the_commit_completes_on_the_committed_tree(
    project: Project,
) -> None:
    """The issue's first scenario: the claim comes before the agent's commit. The loop commits
    the leftovers as a checkpoint, then runs the gate on the committed tree."""
    cmd = agent(project, CLAIM_WITHOUT_COMMIT)
    env = base_env(FRESHER_GATE="git show HEAD:fix.txt")  # passes only once it is committed
    done = await project.arun("--agent-cmd", cmd, env=env)
    assert done.code == 0, done.stderr
    rec = project.record()
    assert rec["finish_type"] == "complete"
    (row,) = rec["iterations"]
    head = git(project, "rev-parse", "HEAD").strip()
    assert row["checkpoint"]["sha"] == head
    assert row["commits"] == 1
    assert rec["totals"]["commits"] == 1
    assert row["claim"] == {"by": "signal", "accepted": True, "rejected_by": None, "why": ""}
    message = git(project, "log", "-1", "--format=%B")
    assert message.startswith("forgeflare: checkpoint after iteration 1\n")
    assert f"Forgeflare-Run: {rec['run_id']}" in message
    assert clean(project)
    assert "checkpoint" in done.stderr
    assert "committed 2 path(s)" in done.stderr


async def test_without_the_checkpoint_a_dirty_claim_is_undelivered(project: Project) -> None:
    cmd = agent(project, CLAIM_WITHOUT_COMMIT)
    env = base_env(FRESHER_CHECKPOINT="warn")
    done = await project.arun("--agent-cmd", cmd, env=env)
    assert done.code == 22, done.stderr
    rec = project.record()
    assert rec["finish_type"] == "undelivered"
    reason = rec["finish_reason"]
    assert reason.startswith("undelivered: uncommitted changes left (")
    assert "IMPLEMENTATION_PLAN.md" in reason
    assert "fix.txt" in reason
    assert f"`git -C {project.dir} status`" in reason
    assert "\n" not in reason
    assert rec["iterations"][0]["checkpoint"]["skipped"] == "checkpoint = warn"
    assert rec["iterations"][0]["claim"]["rejected_by"] == "delivery"
    assert reason in done.stderr


async def test_a_gate_that_changes_tracked_files_refuses_the_claim(project: Project) -> None:
    cmd = agent(project, CLAIM_WITHOUT_COMMIT)
    env = base_env(FRESHER_GATE="echo formatted >> IMPLEMENTATION_PLAN.md", FRESHER_STALL_AFTER="0")
    done = await project.arun("--agent-cmd", cmd, "--max-iterations", "2", env=env)
    assert done.code == 10, done.stderr
    rec = project.record()
    first = rec["iterations"][0]
    assert first["claim"]["accepted"] is False
    assert first["claim"]["why"] == "the gate changed tracked files: IMPLEMENTATION_PLAN.md"
    assert "the last claim was refused: the gate changed tracked files" in rec["finish_reason"]
    # what the gate changed is the next checkpoint's: nothing is left behind
    assert rec["iterations"][1]["checkpoint"]["sha"]


async def test_a_stale_index_lock_before_the_run_is_removed(project: Project) -> None:
    """``touch .git/index.lock``, then an agent that commits: the agent's commit fails, the
    loop removes the stale lock and commits what it left; never `complete` with 0 commits."""
    lock = project.dir / ".git" / "index.lock"
    lock.touch()
    os.utime(lock, (1_000_000_000, 1_000_000_000))
    cmd = agent(project, CLAIM_WITHOUT_COMMIT)
    done = await project.arun("--agent-cmd", cmd, env=base_env())
    assert done.code == 0, done.stderr
    assert not lock.exists()
    assert "removed a stale" in done.stderr
    assert "index.lock" in done.stderr
    assert project.record()["totals"]["commits"] == 1
    assert clean(project)


async def test_a_lock_left_during_the_iteration_is_removed_and_the_work_committed(
    project: Project,
) -> None:
    # A git commit killed mid-way leaves its index.lock: the agent's next commit would fail.
    body = CLAIM_WITHOUT_COMMIT + "touch .git/index.lock\n"
    cmd = agent(project, body)
    done = await project.arun("--agent-cmd", cmd, env=base_env())
    assert done.code == 0, done.stderr
    row = project.record()["iterations"][0]
    assert row["checkpoint"]["lock_removed"] == "index.lock"
    assert row["checkpoint"]["sha"]
    assert clean(project)


async def test_a_lock_a_live_git_holds_is_waited_for_then_the_claim_is_undelivered(
    project: Project, tmp_path: Path
) -> None:
    # A process named git working in the project holds the lock (a copy of sleep: harmless).
    fake = tmp_path / "bin" / "git"
    fake.parent.mkdir()
    sleep = shutil.which("sleep")
    assert sleep is not None
    shutil.copy(sleep, fake)
    holder = subprocess.Popen([str(fake), "60"], cwd=project.dir)  # noqa: ASYNC220
    try:
        # Bounded polling until the process table shows it as a git working here (a loaded
        # machine may show the new process late): then the loop must see it too.
        from forgeflare.supervisor.run._checkpoint import lock_holders

        for _ in range(600):
            if holder.pid in lock_holders(project.dir, project.dir / ".git"):
                break
            await trio.sleep(0.05)
        (project.dir / ".git" / "index.lock").touch()
        cmd = agent(project, CLAIM_WITHOUT_COMMIT)
        env = base_env(FORGEFLARE_TIME_SCALE="0.02")  # wait 0.2 s, not 10
        done = await project.arun("--agent-cmd", cmd, env=env)
    finally:
        holder.kill()
        holder.wait()
    assert done.code == 22, done.stderr
    rec = project.record()
    row = rec["iterations"][0]
    assert row["checkpoint"]["skipped"] == f"lock held by pid {holder.pid} (index.lock)"
    assert rec["finish_reason"].startswith("undelivered: uncommitted changes left")
    assert f"checkpoint skipped: lock held by pid {holder.pid}" in done.stderr


def _no_user_config(tmp_path: Path) -> dict[str, str]:
    """The loop's environment with no git identity but the repository's own config."""
    home = tmp_path / "home"
    home.mkdir()
    env = base_env(
        HOME=str(home), GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=str(home / "none"), EMAIL=""
    )
    for role in ("AUTHOR", "COMMITTER"):
        env.pop(f"GIT_{role}_NAME", None)
        env.pop(f"GIT_{role}_EMAIL", None)
    return env


async def test_no_git_identity_commits_as_forgeflare(project: Project, tmp_path: Path) -> None:
    git(project, "config", "--unset", "user.name")
    git(project, "config", "--unset", "user.email")
    env = _no_user_config(tmp_path)
    body = CLAIM_WITHOUT_COMMIT + 'echo "$GIT_AUTHOR_NAME <$GIT_AUTHOR_EMAIL>" > .agents/who\n'
    cmd = agent(project, body)
    done = await project.arun("--agent-cmd", cmd, env=env)
    assert done.code == 0, done.stderr
    assert "git has no identity here" in done.stderr
    assert "forgeflare <forgeflare@localhost>" in done.stderr
    assert git(project, "log", "-1", "--format=%an <%ae>").strip() == (
        "forgeflare <forgeflare@localhost>"
    )
    # the agent commits as the loop does
    assert (project.dir / ".agents" / "who").read_text().strip() == (
        "forgeflare <forgeflare@localhost>"
    )
    assert clean(project)


async def test_an_identity_without_email_gets_only_the_email(
    project: Project, tmp_path: Path
) -> None:
    git(project, "config", "--unset", "user.email")
    env = _no_user_config(tmp_path)
    done = await project.arun("--agent-cmd", agent(project, CLAIM_WITHOUT_COMMIT), env=env)
    assert done.code == 0, done.stderr
    assert "git has no user.email here: the loop and the agent commit with" in done.stderr
    assert git(project, "log", "-1", "--format=%an <%ae>").strip() == "Test <forgeflare@localhost>"


async def test_outside_git_the_checkpoint_is_skipped_and_said(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.write("IMPLEMENTATION_PLAN.md", PLAN)
    cmd = agent(project, CLAIM_WITHOUT_COMMIT.replace("sed -i", "sed -i.bak"))
    done = await project.arun("--agent-cmd", cmd, env=base_env())
    assert done.code == 0, done.stderr
    assert "no checkpoint outside git: complete means the agent's claim held" in done.stderr
    assert project.record()["iterations"][0]["checkpoint"] == {
        "sha": None,
        "skipped": "not a git repository",
        "failed": None,
        "left_out": [],
        "lock_removed": None,
    }


async def test_changes_present_at_start_are_reported_never_committed(project: Project) -> None:
    project.write("notes.md", "my own notes\n")
    project.write(".env", "TOKEN=secret\n")
    cmd = agent(project, CLAIM_WITHOUT_COMMIT + "echo KEY=1 > .env.local\n")
    done = await project.arun("--agent-cmd", cmd, env=base_env())
    assert "changed before the loop started (.env, notes.md)" in done.stderr
    rec = project.record()
    assert rec["dirty_at_start"] == [".env", "notes.md"]
    committed = git(project, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(committed) == ["IMPLEMENTATION_PLAN.md", "fix.txt"]
    row = rec["iterations"][0]
    assert ".env.local: secret-shaped name" in row["checkpoint"]["left_out"]
    # the secret-shaped file the agent left is not delivered work: said, not complete
    assert done.code == 22, done.stderr
    assert ".env.local" in rec["finish_reason"]


def test_kill_9_during_a_commit_then_resume(project: Project) -> None:
    """The supervisor and its agent are killed while the agent's git commit holds the index
    lock; --resume ends what is left, removes the stale lock, checkpoints the killed
    iteration's work on its ``killed`` row, and the next iteration completes."""
    body = r"""
if [ -e .agents/hung ]; then
  mkdir -p .forgeflare
  printf '{"observations":[],"final":{"reason":"convergence_signal"}}' \
    > .forgeflare/convergence.json
  exit 0
fi
echo fixed > fix.txt
sed -i 's/- \[ \]/- [x]/g' IMPLEMENTATION_PLAN.md
touch .git/index.lock .agents/hung
exec sleep 300
"""
    cmd = agent(project, body)
    proc = project.popen("--agent-cmd", cmd)
    try:
        wait_for(lambda: (project.dir / ".agents" / "hung").exists())
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    done = project.run("--resume", timeout=120)
    assert done.code == 0, done.stdout + done.stderr
    rec = project.record()
    killed, last = rec["iterations"]
    assert killed["decision"] == "killed"
    assert killed["checkpoint"]["sha"]
    assert killed["head_after"] == killed["checkpoint"]["sha"]  # the record names the commit
    assert killed["checkpoint"]["lock_removed"] == "index.lock"
    assert killed["commits"] == 1
    assert last["decision"] == "complete"
    assert rec["totals"]["commits"] == 1
    assert git(project, "show", "HEAD:fix.txt").strip() == "fixed"
    assert clean(project)


NO_README = verdict(False, ["there is no README"], ["a README"])

# Iteration 1 checks every box; a later one writes the README when it was asked for.
PLAN_THEN_README = r"""
if [ "$FRESHER_ITERATION" = 1 ]; then
  echo fixed > fix.txt
  sed -i 's/- \[ \]/- [x]/g' IMPLEMENTATION_PLAN.md
  git add -A && git commit -qm "work"
elif grep -q "there is no README" .agents/prompt-$FRESHER_ITERATION; then
  echo "# Project" > README.md
fi
"""


def _reviewer_project(project: Project, body: str) -> str:
    hook = project.write(
        ".fresher/hooks/next_iteration", (INIT_HOOKS / "next_iteration").read_text()
    )
    hook.chmod(0o755)
    project.write(
        ".fresher/config.toml",
        "[limits]\nstall_after = 0\n[finish]\nreviewer = 'claude-sonnet-4-5'\n",
    )
    return agent(project, 'cat > ".agents/prompt-$FRESHER_ITERATION"\n' + body)


def _verdict_requests(server: MockServer) -> int:
    tools = [r["body"].get("tools") or [{}] for r in server.requests()]
    return sum(1 for t in tools if t[0].get("name") == "verdict")


async def test_a_lenient_second_verdict_sees_the_readme_the_first_asked_for(
    project: Project, mock_api: MockAPI
) -> None:
    """The scaffolded next_iteration would skip (every box checked): after the refusal the
    agent runs, its prompt starts with the reviewer's reasons, and the claim on the changed
    diff is judged again."""
    cmd = _reviewer_project(project, PLAN_THEN_README)
    server = mock_api({"responses": [NO_README, verdict(True, ["all done"], [])]})
    done = await project.arun("--agent-cmd", cmd, "--max-iterations", "4", env=env_for(server))
    assert done.code == 0, done.stderr
    rec = project.record()
    assert rec["finish_type"] == "complete"
    assert [r["decision"] for r in rec["iterations"]] == ["continue", "complete"]
    assert rec["iterations"][0]["claim"]["rejected_by"] == "reviewer"
    assert rec["iterations"][1]["checkpoint"]["sha"]  # README.md: committed by the loop
    assert (project.dir / ".agents" / "prompt-2").read_text().startswith("# The last iteration")
    assert _verdict_requests(server) == 2
    assert git(project, "show", "HEAD:README.md").strip() == "# Project"
    assert clean(project)
    hooks = (project.run_dirs()[0] / "hooks.log").read_text()
    assert "The last claim was refused: running the agent to act on the reasons" in hooks
    assert "there is no README" in hooks  # the hook read FRESHER_LAST_CLAIM_REASON_FILE


async def test_a_strict_reviewer_is_not_asked_again_about_an_unchanged_diff(
    project: Project, mock_api: MockAPI
) -> None:
    # The agent ignores the reasons: the diff does not change, the verdict stands, and the
    # unchanged iteration after the refusal ends no_changes with the reviewer's reason.
    cmd = _reviewer_project(project, PLAN_THEN_README.replace("there is no README", "never"))
    server = mock_api({"responses": [NO_README, NO_README, NO_README]})
    done = await project.arun("--agent-cmd", cmd, "--max-iterations", "5", env=env_for(server))
    assert done.code == 11, done.stderr
    rec = project.record()
    assert rec["finish_type"] == "no_changes"
    assert rec["finish_reason"] == (
        "no_changes: nothing changed after the refused claim (there is no README)"
    )
    assert _verdict_requests(server) == 1
    assert "the diff is unchanged: its last verdict stands" in done.stderr
    assert json.loads(json.dumps(rec["iterations"][1]["review"]))["complete"] is False


@pytest.mark.slow
async def test_codex_under_workspace_write_is_delivered_by_the_checkpoint(
    project: Project, tmp_path: Path
) -> None:
    """The real Codex CLI in its ``workspace-write`` sandbox (``.git`` read-only there): its own
    ``git commit`` fails, the loop's checkpoint commits its work, and the loop completes on a
    clean tree with the work in a commit the record names."""
    from codex_support import codex_env, require_codex, write_codex_home
    from forgeflare.mockapi import ResponsesServer

    codex = require_codex()
    work = (
        "echo fixed > fix.txt && sed -i 's/- \\[ \\]/- [x]/g' IMPLEMENTATION_PLAN.md && "
        "git add -A && git commit -qm work"
    )
    with ResponsesServer() as server:
        url = server.script(
            "deliver", [{"exec": work}, {"text": "Done.\n<loop-done>COMPLETE</loop-done>"}]
        )
        home = write_codex_home(tmp_path / "codex-home", url)
        env = base_env(**codex_env(home, tmp_path / "tmp"))
        env.update(
            FRESHER_AGENT_BACKEND="codex",
            FRESHER_AGENT_COMMAND=str(require_codex()),
            FRESHER_MAX_ITERATIONS="3",
            FORGEFLARE_TIME_SCALE="0",
        )
        done = await project.arun(env=env)
        # What Codex's shell answered, as it reached the model (Codex does not always print
        # the command on its stream).
        outputs = json.dumps(
            [
                item.get("output")
                for body in server.requests("deliver")
                for item in body.get("input") or []
                if isinstance(item, dict) and item.get("type") == "function_call_output"
            ]
        )
    assert codex.exists()
    assert done.code == 0, done.stdout + done.stderr
    log = (project.run_dirs()[0] / "iteration-001.log").read_text()
    said = log + outputs
    assert "index.lock': Read-only file system" in said, said  # Codex could not commit
    rec = project.record()
    (row,) = rec["iterations"]
    assert row["backend"] == "codex"
    assert row["claim"]["by"] == "tag"
    assert row["checkpoint"]["sha"] == git(project, "rev-parse", "HEAD").strip()
    assert git(project, "show", "HEAD:fix.txt").strip() == "fixed"
    assert "- [ ]" not in git(project, "show", "HEAD:IMPLEMENTATION_PLAN.md")
    assert clean(project)


def test_warn_with_an_agent_that_cannot_commit_is_refused_before_anything_starts(
    project: Project,
) -> None:
    env = base_env(
        FRESHER_AGENT_BACKEND="codex",
        FRESHER_AGENT_COMMAND=shutil.which("true") or "true",
        FRESHER_CHECKPOINT="warn",
        OPENAI_API_KEY="test-key",
    )
    done = forgeflare_here(project.dir, "loop", "--dir", str(project.dir), env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "[fresher] checkpoint = 'warn': the codex agent cannot commit" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert project.run_dirs() == []


async def test_a_failed_checkpoint_commit_is_said_and_the_claim_undelivered(
    project: Project,
) -> None:
    git(project, "config", "user.name", ".")  # an identity git refuses to commit with
    cmd = agent(project, CLAIM_WITHOUT_COMMIT)
    done = await project.arun("--agent-cmd", cmd, env=base_env())
    assert done.code == 22, done.stderr
    rec = project.record()
    failed = rec["iterations"][0]["checkpoint"]["failed"]
    assert failed.startswith("fatal:")
    assert f"iteration 1: the checkpoint commit failed: {failed}" in done.stderr
    assert rec["finish_reason"] == (
        f"undelivered: the loop's checkpoint commit failed ({failed}); "
        f"see `git -C {project.dir} status`"
    )


async def test_two_failed_checkpoints_in_a_row_end_the_loop(project: Project) -> None:
    git(project, "config", "user.name", ".")
    cmd = agent(project, 'echo "$FRESHER_ITERATION" >> work.txt\n')
    done = await project.arun("--agent-cmd", cmd, "--max-iterations", "5", env=base_env())
    assert done.code == 22, done.stderr
    rec = project.record()
    assert len(rec["iterations"]) == 2
    assert rec["finish_reason"] == (
        f"undelivered: 2 checkpoint commits failed in a row; see `git -C {project.dir} status`"
    )


async def test_hooks_see_the_last_claim_and_its_reason(project: Project) -> None:
    project.dump_env_hooks()
    body = CLAIM_WITHOUT_COMMIT + '[ "$FRESHER_ITERATION" = 1 ] || echo ok > ok.txt\n'
    cmd = agent(project, body)
    env = base_env(FRESHER_GATE="test -f ok.txt", FRESHER_STALL_AFTER="0")
    done = await project.arun("--agent-cmd", cmd, "--max-iterations", "3", env=env)
    assert done.code == 0, done.stderr
    first, second = project.hook_env("next_iteration", 1), project.hook_env("next_iteration", 2)
    assert first["FRESHER_LAST_CLAIM"] == "none"
    assert second["FRESHER_LAST_CLAIM"] == "refused"
    reason = Path(second["FRESHER_LAST_CLAIM_REASON_FILE"])
    assert reason.parent == project.run_dirs()[0]
    assert project.hook_env("finished", 2)["FRESHER_LAST_CLAIM"] == "accepted"
    assert reason.read_text() == ""  # noqa: ASYNC240  (accepted: no reason left)
    assert project.record()["iterations"][0]["claim"]["why"] == "gate exit 1"
