#!/usr/bin/env python3
"""PreToolUse observer: appends one line per tool call to .forgeflare/audit.log.

Runs for every tool, after the guards, and sees their verdict. Tab-separated fields:
UTC time, tool, "allowed" or "BLOCKED", what it acted on, and for a block who and why:

    2026-02-13T19:30:00Z  Bash  allowed  cargo test
    2026-02-13T19:30:04Z  Bash  BLOCKED  rm -rf build  blocked by ...: destructive command: ...

Observers cannot block and their output is ignored; a failure here never stops the agent.
Standard library only (any Python 3.7+).
"""

from __future__ import annotations

import json
import os
import sys
import time

SUMMARY_KEYS = ("command", "file_path", "pattern", "path")


def one_line(text: object, limit: int = 200) -> str:
    """``text`` on one line (tabs and newlines become spaces), at most ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def main() -> None:
    event = json.load(sys.stdin)
    tool_input = event.get("input") or {}
    summary = next((tool_input[k] for k in SUMMARY_KEYS if tool_input.get(k)), "")
    fields = [
        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        one_line(event.get("tool", "?")),
        "BLOCKED" if event.get("blocked") else "allowed",
        one_line(summary),
    ]
    if event.get("blocked"):
        who, why = event.get("blocked_by", "?"), event.get("block_reason", "")
        fields.append(one_line(f"blocked by {who}: {why}", 400))
    log = os.path.join(event.get("cwd") or os.getcwd(), ".forgeflare", "audit.log")
    try:
        os.makedirs(os.path.dirname(log), exist_ok=True)
        # One write of one short line in append mode: lines of concurrent hooks do not mix.
        with open(log, "a", encoding="utf-8") as fh:
            fh.write("\t".join(fields) + "\n")
    except OSError as exc:
        # A full disk or a read-only folder: one line, never a traceback; the agent goes on.
        print(f"audit-log: cannot write {log}: {exc.strerror or exc}", file=sys.stderr)
    print(json.dumps({"action": "continue"}))


if __name__ == "__main__":
    main()
