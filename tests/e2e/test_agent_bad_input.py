"""Bad input to ``forgeflare run``: one line, exit 2, nothing sent to the API."""

from __future__ import annotations

from pathlib import Path

from agent_support import run_agent, text_response
from mockapi_support import MockAPI


def test_a_hooks_file_that_does_not_exist_is_an_error(tmp_path: Path, mock_api: MockAPI) -> None:
    server = mock_api({"responses": [text_response("should not be asked")]})
    done = run_agent(tmp_path, server.url, "task", "--hooks", "missing-hooks.toml")
    assert done.returncode == 2
    assert done.stderr.strip() == "forgeflare: error: --hooks missing-hooks.toml: no such file"
    assert server.requests() == []
