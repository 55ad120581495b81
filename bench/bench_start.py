"""What a ``forgeflare`` start costs: the common starts against ``python -c pass``.

The suite starts thousands of ``forgeflare`` processes (CLI commands, ``forgeflare run`` as
the loop's agent, the stop-hook), and on a 2-core machine their CPU is most of its time. Each
start below runs as a real process, round robin with a bare ``python -c pass`` (the same
interpreter) so every command meets the same load. Printed per start: the median CPU time
(user + sys of the child, from ``wait4``; a busy machine disturbs it far less than wall time)
and the median wall time, each also as a ratio to the bare interpreter's.

- ``run``: ``forgeflare run PROMPT`` in a fresh project against the mock API, which answers
  one plain ``end_turn`` text (the loop's own agent, its shortest iteration);
- ``stop-hook``: the Stop of a session where no loop runs (nearly every Stop);
- ``report``: ``forgeflare report`` in a project without runs (exit 1: nothing to show);
- ``windows``: ``forgeflare windows`` (the machine's usage windows: settings, not the loop);
- ``mock-api``: ``forgeflare mock-api`` from its start until it listens, then its Ctrl+C
  (the suite starts one for nearly every test that runs an agent);
- the help of ``loop`` and the root, ``--version``.

Run::

    .venv/bin/python bench/bench_start.py [--repeats N]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import forgeflare
from forgeflare.mockapi import start_mock_api, stop_mock_api


def measure(
    argv: list[str], *, cwd: Path, env: dict[str, str], stdin: bytes
) -> tuple[float, float]:
    """(CPU ms, wall ms) of one run of ``argv`` (its own and its children's CPU)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0  # reaped above: Popen must not wait for it again
    wall = (time.perf_counter() - start) * 1000
    return (usage.ru_utime + usage.ru_stime) * 1000, wall


def measure_server(argv: list[str], *, cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(CPU ms, wall ms) of a server started with ``argv`` that listens, then takes Ctrl+C."""
    port_file = cwd / "bench.port"
    port_file.unlink(missing_ok=True)
    start = time.perf_counter()
    proc = subprocess.Popen(
        [*argv, "--port-file", str(port_file)],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while not port_file.exists():
        if proc.poll() is not None:  # reaped by poll: wait4 below would find no child
            raise SystemExit(f"{' '.join(argv)}: exited {proc.returncode} before listening")
        time.sleep(0.002)  # a benchmark, not a test: the poll's cost is the parent's
    proc.send_signal(signal.SIGINT)
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0  # reaped above: Popen must not wait for it again
    wall = (time.perf_counter() - start) * 1000
    return (usage.ru_utime + usage.ru_stime) * 1000, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    # An installed package has its bytecode (pip compiles it); a checkout run with
    # PYTHONDONTWRITEBYTECODE would compile every module on every run instead.
    compileall.compile_dir(Path(forgeflare.__file__).parent, quiet=1)
    script = str(Path(sys.executable).parent / "forgeflare")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "script.json").write_text(
            json.dumps({"responses": [], "when_exhausted": "end_turn"})
        )
        server, port = start_mock_api(
            root / "script.json", port_file=root / "port", stderr_path=root / "mock.err"
        )
        try:
            project = root / "project"
            project.mkdir()
            subprocess.run(["git", "init", "-q", str(project)], check=True)
            env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
            env.update(
                ANTHROPIC_API_URL=f"http://127.0.0.1:{port}",
                ANTHROPIC_API_KEY="bench-key",
                NO_COLOR="1",
                HOME=str(root / "home"),
            )
            hook_input = json.dumps(
                {
                    "session_id": "bench",
                    "transcript_path": str(root / "none.jsonl"),
                    "cwd": str(project),
                }
            ).encode()
            starts: dict[str, tuple[list[str], bytes]] = {
                "python -c pass": ([sys.executable, "-c", "pass"], b""),
                "forgeflare --version": ([script, "--version"], b""),
                "forgeflare --help": ([script, "--help"], b""),
                "forgeflare loop --help": ([script, "loop", "--help"], b""),
                "forgeflare report": ([script, "report"], b""),
                "forgeflare stop-hook": ([script, "stop-hook"], hook_input),
                "forgeflare run PROMPT": ([script, "run", "say hi"], b""),
                "forgeflare windows": ([script, "windows"], b""),
                "forgeflare mock-api": (
                    [script, "mock-api", "--script", str(root / "script.json")],
                    b"",
                ),
            }
            servers = {"forgeflare mock-api"}  # measured from start until listening
            cpu: dict[str, list[float]] = {name: [] for name in starts}
            wall: dict[str, list[float]] = {name: [] for name in starts}
            for _ in range(args.repeats):
                for name, (argv, stdin) in starts.items():
                    if name in servers:
                        c, w = measure_server(argv, cwd=root, env=env)
                    else:
                        c, w = measure(argv, cwd=project, env=env, stdin=stdin)
                    cpu[name].append(c)
                    wall[name].append(w)
        finally:
            stop_mock_api(server)
    base_cpu = statistics.median(cpu["python -c pass"])
    base_wall = statistics.median(wall["python -c pass"])
    print(f"load average {os.getloadavg()[0]:.1f}, {args.repeats} repeats, medians")
    print(f"{'start':<26} {'CPU ms':>8} {'x pass':>7} {'wall ms':>8} {'x pass':>7}")
    for name in starts:
        c, w = statistics.median(cpu[name]), statistics.median(wall[name])
        print(f"{name:<26} {c:8.0f} {c / base_cpu:7.1f} {w:8.0f} {w / base_wall:7.1f}")


if __name__ == "__main__":
    main()
