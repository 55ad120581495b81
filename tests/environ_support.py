"""A script that reads every ``/proc/*/environ`` it can and reports which hold given values
(run by hooks and Bash commands in the secrets tests), a project whose hooks run it, and its
findings read back."""

import subprocess
from pathlib import Path

__all__ = ["SCAN", "scanning_project", "scans"]

SCAN = """\
import os, sys
values = [v.encode() for v in open(sys.argv[1]).read().split()]
read, leaks = 0, []
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            data = f.read()
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\\0", b" ").decode(errors="replace")[:120]
    except OSError:
        continue
    read += 1
    leaks += [f"{pid} {cmd}" for v in values if v in data]
with open(sys.argv[2], "a") as out:
    out.write(f"{sys.argv[3]} read={read} leaks={leaks!r}\\n")
"""


def scanning_project(root: Path, values_file: Path, out: Path) -> Path:
    """A git project under ``root`` whose lifecycle hooks and agent shell hook run the scan."""
    project = root / "p"
    (project / ".forgeflare").mkdir(parents=True)
    (project / "scan.py").write_text(SCAN)
    scan = f"python3 scan.py {values_file} {out}"
    (project / ".forgeflare" / "hooks.toml").write_text(
        f'[[hooks]]\nevent = "PreToolUse"\nphase = "observe"\ncommand = "{scan} shell-hook"\n'
    )
    for name in ("started", "next_iteration", "finished"):
        hook = project / ".fresher" / "hooks" / name
        hook.parent.mkdir(parents=True, exist_ok=True)
        hook.write_text(f"#!/bin/sh\n{scan} {name}\n")
        hook.chmod(0o755)
    (project / ".gitignore").write_text(".fresher/runs/\n")
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-qm", "scan"],
    ):
        subprocess.run(["git", *args], cwd=project, check=True)
    return project


def scans(out: Path) -> dict[str, tuple[int, str]]:
    """Each scan's label: (how many environments it read, the leaks it found)."""
    found = {}
    for line in out.read_text().splitlines():
        label, read, leaks = line.split(" ", 2)
        found[label] = (int(read.removeprefix("read=")), leaks.removeprefix("leaks="))
    return found
