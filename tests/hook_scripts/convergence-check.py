#!/usr/bin/env python3
"""PostToolUse hook: signals $1 when the tool result contains "0 failed"."""

import json
import sys

event = json.load(sys.stdin)
if "0 failed" in event["result"] and not event["is_error"]:
    print(json.dumps({"action": "signal", "signal": sys.argv[1], "reason": "clean test run"}))
else:
    print(json.dumps({"action": "continue"}))
