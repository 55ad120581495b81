"""Prompt caching: the input cost of a 30-request session with and without cache breakpoints.

The real agent (``forgeflare run``) talks to ``forgeflare mock-api``, which counts cache reads
and writes from the ``cache_control`` prefixes it has seen (as the API does). The same scripted
session (29 tool calls on a project with a long instructions file, then an answer) runs twice:
with the agent's breakpoints (tools, system prompt, conversation tail), and with
``FORGEFLARE_PROMPT_CACHE=0``. Prints the input-side cost of each at claude-opus-4-6 list
prices ($5/M input, $0.50/M cache read, $6.25/M cache write) and their ratio.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from mockapi_support import start_mock_server  # noqa: E402

PRICES = {"input": 5.0, "cache_read": 0.5, "cache_write": 6.25}  # USD per million tokens


def session(cache: bool) -> dict[str, int]:
    calls = [
        {
            "content": [
                {"type": "text", "text": f"Looking at file {i}."},
                {"type": "tool_use", "name": "Read", "input": {"file_path": f"f{i % 5}.txt"}},
            ],
            "stop_reason": "tool_use",
        }
        for i in range(29)
    ]
    script = {"responses": [*calls, {"content": [{"type": "text", "text": "Done."}]}]}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project = root / "project"
        project.mkdir()
        (project / "AGENTS.md").write_text("Project rules. " * 2000)
        for i in range(5):
            (project / f"f{i}.txt").write_text(f"file {i}\n" * 200)
        server = start_mock_server(script, directory=root)
        try:
            env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
            env.update(
                ANTHROPIC_API_URL=server.url,
                ANTHROPIC_API_KEY="bench",
                FORGEFLARE_PROMPT_CACHE="1" if cache else "0",
                FORGEFLARE_TRUST="1",
            )
            done = subprocess.run(
                [sys.executable, "-m", "forgeflare", "run", "--model", "claude-opus-4-6"],
                cwd=project,
                input="Read the files.",
                capture_output=True,
                text=True,
                env=env,
                check=False,
            )
            if done.returncode != 0:
                raise SystemExit(f"agent failed: {done.stderr[-2000:]}")
            final = json.loads((project / ".forgeflare" / "convergence.json").read_text())
            return dict(final["final"]["tokens"]) | {"requests": final["final"]["requests"]}
        finally:
            server.stop()


def input_cost(tokens: dict[str, int]) -> float:
    return sum(tokens[k] * price for k, price in PRICES.items()) / 1e6


def main() -> None:
    cached, plain = session(True), session(False)
    c, p = input_cost(cached), input_cost(plain)
    print(f"requests: {cached['requests']} (with caching), {plain['requests']} (without)")
    for name, tokens in (("with caching", cached), ("without", plain)):
        print(
            f"{name:>13}: input {tokens['input']:>8}  cache read {tokens['cache_read']:>8}  "
            f"cache write {tokens['cache_write']:>7}  input cost ${input_cost(tokens):.4f}"
        )
    print(f"input cost ratio (cached / uncached): {c / p:.2f}  (target: well under 0.5)")


if __name__ == "__main__":
    main()
