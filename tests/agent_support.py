"""Run the real ``forgeflare run`` process against a mock server, for end-to-end tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from project_support import run_text

__all__ = [
    "read_json",
    "run_agent",
    "run_agent_here",
    "start_agent_in_bash",
    "text_response",
    "tick_response",
    "tool_response",
    "tool_results",
    "verdict",
    "with_one_call",
]


def tool_response(*calls: tuple[str, dict[str, Any]], text: str = "") -> dict[str, Any]:
    """A scripted response that calls tools (ids toolu_0, toolu_1, ...)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [
        {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": inp}
        for i, (name, inp) in enumerate(calls)
    ]
    return {
        "content": content,
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 100, "output_tokens": 20},
    }


def tick_response(box: str = "one", text: str = "") -> dict[str, Any]:
    """A scripted response whose Edit ticks ``- [ ] BOX`` in IMPLEMENTATION_PLAN.md."""
    plan = {
        "file_path": "IMPLEMENTATION_PLAN.md",
        "old_str": f"- [ ] {box}",
        "new_str": f"- [x] {box}",
    }
    return tool_response(("Edit", plan), text=text)


def verdict(complete: object, reasons: list[str], missing: list[str]) -> dict[str, Any]:
    """A scripted reviewer answer: its forced ``verdict`` tool call."""
    return {
        "content": [
            {
                "type": "tool_use",
                "name": "verdict",
                "input": {"complete": complete, "reasons": reasons, "missing": missing},
            }
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 1000, "output_tokens": 50},
    }


def text_response(*texts: str, stop_reason: str = "end_turn") -> dict[str, Any]:
    """A scripted response that says ``texts``, one text block each."""
    return {
        "content": [{"type": "text", "text": text} for text in texts],
        "stop_reason": stop_reason,
        "usage": {"input_tokens": 100, "output_tokens": 10},
    }


def with_one_call(tool: str, tool_input: dict[str, Any], then: str = "done") -> dict[str, Any]:
    """A mock script: a response that calls ``tool`` once, then one that says ``then``."""
    return {"responses": [tool_response((tool, tool_input)), text_response(then)]}


def run_agent(
    project: Path,
    url: str,
    prompt: str = "do the task",
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """``forgeflare run`` in ``project`` with the prompt on stdin, talking to ``url``."""
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    child_env.update({"ANTHROPIC_API_URL": url, "ANTHROPIC_API_KEY": "test-key", "NO_COLOR": "1"})
    child_env.update(env or {})
    return run_text(
        [sys.executable, "-m", "forgeflare", "run", *args],
        cwd=project,
        env=child_env,
        input=prompt,
        timeout=timeout,
    )


def run_agent_here(
    project: Path,
    url: str,
    prompt: str = "do the task",
    *args: str,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """:func:`run_agent` through the real entry point in the test process (no process start):
    for tests about what the agent does, not about its process. A ``--hooks-module`` the run
    imports from ``project`` is forgotten afterwards, as a new process would never have seen it.
    """
    from cli_inprocess import run_cli

    here = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    here.update({"ANTHROPIC_API_URL": url, "ANTHROPIC_API_KEY": "test-key", "NO_COLOR": "1"})
    here.update(env or {})
    before = set(sys.modules)
    try:
        return run_cli(["run", *args], cwd=project, env=here, stdin=prompt)
    finally:
        for name in set(sys.modules) - before:
            file = getattr(sys.modules[name], "__file__", None)
            if file and Path(file).resolve().is_relative_to(project.resolve()):
                del sys.modules[name]


def start_agent_in_bash(project: Path, url: str, *args: str) -> subprocess.Popen[str]:
    """``forgeflare run go ARGS`` in a process group of its own, talking to ``url``; returned
    once its scripted Bash command has touched ``started`` in ``project`` (and sleeps on)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update({"ANTHROPIC_API_URL": url, "ANTHROPIC_API_KEY": "k"})
    proc = subprocess.Popen(
        [sys.executable, "-m", "forgeflare", "run", "go", *args],
        cwd=project,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not (project / "started").exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            raise AssertionError(f"agent did not reach its Bash command: {proc.communicate()}")
        time.sleep(0.02)  # bounded polling for the marker file
    return proc


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of a recorded request's last message."""
    last = request["body"]["messages"][-1]
    content = last["content"]
    if isinstance(content, str):
        return []
    return [b for b in content if b.get("type") == "tool_result"]


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
