"""A gate that prints many MB leaves at most a few MB of logs per iteration (issue 40: two
iterations of a 50 MB gate left 210 MB), with its head, its tail and the size of the cut.

The loops run in the test process (``Project.arun``; the gate, the hook and the agent are real
children): the point is what the loop keeps of their output, not the loop's process. The sizes
are a few times the cap (1 MB head + 1 MB tail), enough that logs without the cap break every
size bound below, and the cap trims its tail many times over."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from supervisor_agents.project import Project, base_env

# 12 MB of lines (the cap keeps 2 MB; two iterations uncapped pass the folder's 10 MB bound),
# then the failure the next prompt needs (the tail is kept).
LOUD_GATE = (
    "echo FIRST; yes 'all work and no play' | head -c 12000000; echo; "
    "echo 'FAILED tests/test_x.py::test_y'; exit 3"
)
AGENT = "import pathlib, sys; sys.stdin.read(); pathlib.Path('PLAN.md').write_text('- [x] one')"


async def test_a_gate_printing_12_mb_keeps_a_few_mb_per_iteration(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.write("PLAN.md", "- [ ] one\n")
    project.write(
        ".fresher/config.toml",
        f'[paths]\nplan_file = "PLAN.md"\n[limits]\ngate = {LOUD_GATE!r}\nstall_after = 0\n',
    )
    done = await project.arun(
        "--agent-cmd",
        shlex.join([sys.executable, "-c", AGENT]),
        "--max-iterations",
        "2",
        env=base_env(),
    )
    assert done.code == 10, done.stdout + done.stderr
    (run_dir,) = project.run_dirs()
    logs = sorted(run_dir.glob("gate-*.log"))
    assert len(logs) == 2
    for log in logs:
        text = log.read_text()
        assert log.stat().st_size < 3 << 20
        assert text.startswith("FIRST\n")
        assert "MB of output cut here]" in text
        assert text.rstrip().endswith("FAILED tests/test_x.py::test_y")
    folder = sum(p.stat().st_size for p in run_dir.iterdir() if p.is_file())
    assert folder < 2 * (5 << 20), folder


async def test_a_hook_printing_2_mb_keeps_its_head_and_tail_in_hooks_log(tmp_path: Path) -> None:
    project = Project(tmp_path)
    # 200,000 short lines: hooks.log, at ~50 bytes a logged line, would hold 10 MB without the
    # cap (the bound below is 5 MB); the cap keeps 1 MB of head and 1 MB of tail.
    project.hook("started", "echo FIRST; yes 'hook line' | head -c 2000000; echo LAST")
    # A hook timeout far above what this takes on a busy machine (the default 30 s cut a 10 MB
    # hook before its last line when both cores were busy).
    done = await project.arun(
        "--agent-cmd",
        "true",
        "--mode",
        "planning",
        "--max-iterations",
        "1",
        env=base_env(FRESHER_HOOK_TIMEOUT="300"),
    )
    assert done.code == 10, done.stdout + done.stderr
    (run_dir,) = project.run_dirs()
    hooks_log = run_dir / "hooks.log"
    assert hooks_log.stat().st_size < 5 << 20
    lines = hooks_log.read_text().splitlines()
    assert lines[0].endswith("[started] FIRST")
    assert any("MB of output cut here]" in line for line in lines)
    assert lines[-1].endswith("[started] LAST")
