#!/usr/bin/env python3
"""Stop hook: appends the end of each agent session to .forgeflare/sessions.log.

Tab-separated fields: UTC time, reason=... (end_turn, convergence_signal, api_error, ...),
tool_iterations=..., total_tokens=... Stop hooks only observe; the output is
{"action": "continue"}. Standard library only (any Python 3.7+).
"""

from __future__ import annotations

import json
import os
import sys
import time


def main() -> None:
    event = json.load(sys.stdin)
    fields = [time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())]
    fields += [f"{key}={event.get(key, '?')}" for key in ("reason", "tool_iterations")]
    fields.append(f"total_tokens={event.get('total_tokens', '?')}")
    log = os.path.join(event.get("cwd") or os.getcwd(), ".forgeflare", "sessions.log")
    try:
        os.makedirs(os.path.dirname(log), exist_ok=True)
        with open(log, "a", encoding="utf-8") as fh:
            fh.write("\t".join(fields) + "\n")
    except OSError as exc:
        # A full disk or a read-only folder: one line, never a traceback; the agent goes on.
        print(f"session-end: cannot write {log}: {exc.strerror or exc}", file=sys.stderr)
    print(json.dumps({"action": "continue"}))


if __name__ == "__main__":
    main()
