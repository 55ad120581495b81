"""A script that reads every ``/proc/*/environ`` it can and reports which hold given values
(run by hooks and Bash commands in the secrets tests)."""

__all__ = ["SCAN"]

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
