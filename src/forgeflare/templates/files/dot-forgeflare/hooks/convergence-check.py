#!/usr/bin/env python3
"""PostToolUse hook for Bash: signals `converged` when the work is done.

Done means all three: the command looks like a test run (pytest, python -m unittest, cargo
test, go test, npm test, make test, ...) and it succeeded (is_error false), the plan
(FRESHER_PLAN_FILE, else IMPLEMENTATION_PLAN.md) exists with no open task ('- [ ]') left, and
git has nothing uncommitted (tests that pass before the commit are not the end of the work).
The agent then ends its turn; the loop commits anything left, runs its gate on the committed
tree and finishes `complete`. Standard library only (any Python 3.7+).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

TEST_RUN = re.compile(
    r"\b(pytest|py\.test|unittest|tox|nox|cargo\s+(test|nextest)|go\s+test|"
    r"(npm|pnpm|yarn|bun)\s+(run\s+)?test|make\s+(test|check)|ctest|mvn\s+test|"
    r"gradlew?\s+test|rspec|jest|vitest|bats|mix\s+test|dotnet\s+test)\b"
)
OPEN_TASK = re.compile(r"^[ \t]*[-*+][ \t]+\[ \]", re.MULTILINE)


def open_tasks(plan: str) -> int | None:
    """Open tasks in the plan file, or None when it cannot be read."""
    try:
        with open(plan, encoding="utf-8", errors="replace") as fh:
            return len(OPEN_TASK.findall(fh.read()))
    except OSError:
        return None


def uncommitted(cwd: str) -> bool:
    """git shows changes not yet committed (False outside a repository or without git)."""
    try:
        done = subprocess.run(
            ["git", "-c", "core.fsmonitor=false", "status", "--porcelain"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and bool(done.stdout.strip())


def main() -> None:
    event = json.load(sys.stdin)
    command = " ".join(str((event.get("input") or {}).get("command") or "").split())
    answer: dict[str, str] = {"action": "continue"}
    if event.get("tool") == "Bash" and not event.get("is_error") and TEST_RUN.search(command):
        cwd = event.get("cwd") or os.getcwd()
        plan = os.path.join(cwd, os.environ.get("FRESHER_PLAN_FILE") or "IMPLEMENTATION_PLAN.md")
        if open_tasks(plan) == 0 and not uncommitted(cwd):
            answer = {
                "action": "signal",
                "signal": "converged",
                "reason": f"tests passed ({command[:80]}) and "
                f"{os.path.basename(plan)} has no open task",
            }
    print(json.dumps(answer))


if __name__ == "__main__":
    main()
