"""The ConfigMap's ``run-loop.sh`` run as a pod runs it: an index, the env file and the task
from the ConfigMap, a ``file://`` remote. The loop's agent is the one configured
(``agent_command``), and a SIGTERM (an eviction, the deadline) still pushes the branch."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from forgeflare.fleet import k8s_files, parse_fleet_text
from forgeflare.fleet._k8s import _MOUNT
from forgeflare.supervisor.evidence import FINISH_EXIT_CODES
from project_support import git
from supervisor_agents.project import wait_for

# The agent commits once, says so, then works on until it is stopped.
AGENT = (
    "sh -c 'echo work > work.txt && git add work.txt && git commit -qm agent-work && "
    'touch "$POD_MARKERS/agent-ran"; while :; do sleep 0.1; done\''
)


def test_the_pod_script_runs_the_configured_agent_and_pushes_on_sigterm(tmp_path: Path) -> None:
    origin = tmp_path / "origin.git"
    seed = tmp_path / "seed"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    git(tmp_path, "init", "-q", "-b", "main", str(seed))
    (seed / "README.md").write_text("hi\n")
    git(seed, "add", "-A")
    git(seed, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "seed")
    git(seed, "push", "-q", str(origin), "main")
    fleet = parse_fleet_text(
        '[fleet]\nname = "night"\n\n[[loop]]\nname = "one"\nprompt = "Do the work."\n'
        f"max_iterations = 3\nagent_command = {json.dumps(AGENT)}\n",
        tmp_path / "FLEET.toml",
    )
    files = k8s_files(fleet, FINISH_EXIT_CODES, {"one": f"file://{origin}"}, version="0")
    import yaml

    data = yaml.safe_load(files["configmap.yaml"])["data"]
    mount = tmp_path / "mount"  # stands in for the ConfigMap's mount point
    mount.mkdir()
    for name, text in data.items():
        (mount / name).write_text(text.replace(_MOUNT, str(mount)))
    home, markers = tmp_path / "home", tmp_path / "markers"
    home.mkdir()
    markers.mkdir()
    env = {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
        "HOME": str(home),
        "JOB_COMPLETION_INDEX": "0",
        "POD_MARKERS": str(markers),
        "FRESHER_SMART_TERMINATION": "false",
        "FRESHER_AGENT_KILL_GRACE": "2",
    }
    pod = subprocess.Popen(
        ["/bin/sh", str(mount / "run-loop.sh")],
        cwd=home,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for(lambda: (markers / "agent-ran").exists() or pod.poll() is not None, timeout=120)
    assert (markers / "agent-ran").exists(), pod.communicate()  # agent_command, not `run`
    pod.send_signal(signal.SIGTERM)
    _, err = pod.communicate(timeout=120)
    assert pod.returncode != 0  # stopped, not complete
    branch = yaml.safe_load(files["configmap.yaml"])["data"]["loop-0.env"]
    name = next(line.split("=", 1)[1] for line in branch.splitlines() if line.startswith("BRANCH="))
    name = name.strip("'")
    log = git(origin, "log", "--format=%s", name)
    assert "agent-work" in log.splitlines(), err  # the commit reached the remote
