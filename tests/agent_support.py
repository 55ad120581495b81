"""Run the real ``forgeflare run`` process against a mock server, for end-to-end tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["read_json", "run_agent", "text_response", "tool_response", "tool_results"]


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


def text_response(text: str, stop_reason: str = "end_turn") -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop_reason,
        "usage": {"input_tokens": 100, "output_tokens": 10},
    }


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
    return subprocess.run(
        [sys.executable, "-m", "forgeflare", "run", *args],
        cwd=project,
        input=prompt,
        capture_output=True,
        text=True,
        env=child_env,
        timeout=timeout,
        check=False,
    )


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of a recorded request's last message."""
    last = request["body"]["messages"][-1]
    content = last["content"]
    if isinstance(content, str):
        return []
    return [b for b in content if b.get("type") == "tool_result"]


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
