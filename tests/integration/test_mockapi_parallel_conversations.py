"""A multi-conversation script served by a real ``forgeflare mock-api`` to parallel clients."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import httpx

from mockapi_support import MockAPI

HEADERS = {"x-api-key": "test-key", "anthropic-version": "2023-06-01"}

_CLIENT = """
import sys, httpx
url, task, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with httpx.Client(timeout=10) as c:
    for i in range(n):
        body = {"model": "m", "max_tokens": 10, "tools": [{"name": "Bash", "input_schema": {}}],
                "messages": [{"role": "user", "content": f"Task: {task}. Go."}]}
        r = c.post(url + "/v1/messages", json=body, headers={"x-api-key": "k"})
        print(r.json()["content"][0]["text"])
"""


def text(t: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": t}]}


def test_parallel_clients_each_get_their_conversation(mock_api: MockAPI) -> None:
    n = 8
    server = mock_api(
        {
            "conversations": [
                {"match": name, "responses": [text(f"{name}{i}") for i in range(n)]}
                for name in ("parser", "lexer")
            ]
        }
    )
    clients = {
        name: subprocess.Popen(
            [sys.executable, "-c", _CLIENT, server.url, name, str(n)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in ("parser", "lexer")
    }
    for name, proc in clients.items():
        out = proc.communicate(timeout=60)[0].split()
        assert proc.returncode == 0
        assert out == [f"{name}{i}" for i in range(n)]
    recorded = server.requests()
    assert sorted(r["conversation"] for r in recorded) == [0] * n + [1] * n
    # an unmatched request gets a 500 that names it, and uses up nothing
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "docs"}]}
    resp = httpx.post(f"{server.url}/v1/messages", json=body, headers=HEADERS, timeout=10)
    assert resp.status_code == 500
    assert "no conversation matches the request 'docs'" in resp.json()["error"]["message"]
    assert resp.headers["x-should-retry"] == "false"
