"""``forgeflare run`` ends the children that left its process group, as the loop does: a
guard hook's ``env -i setsid sleep &`` (no marker, own session) does not outlive the run."""

from __future__ import annotations

from pathlib import Path

import tomli_w

from agent_support import run_agent, text_response
from mockapi_support import MockAPI
from platform_support import sleep_token, sleeping


def test_a_hooks_setsid_child_does_not_outlive_run(tmp_path: Path, mock_api: MockAPI) -> None:
    token = sleep_token(600)
    escape = f"env -i setsid sleep {token} </dev/null >/dev/null 2>&1 & echo '{{}}'"
    (tmp_path / ".forgeflare").mkdir()
    (tmp_path / ".forgeflare" / "hooks.toml").write_text(
        tomli_w.dumps({"hooks": [{"event": "Stop", "command": escape}]})
    )
    server = mock_api({"responses": [text_response("done")]})
    try:
        done = run_agent(tmp_path, server.url, env={"FORGEFLARE_TRUST": "1"})
        assert done.returncode == 0, done.stderr
        assert sleeping(token) == []
    finally:
        for proc in sleeping(token):
            proc.kill()
