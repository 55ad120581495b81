"""The pi backend: its exit status leaves the outcome to the stream (recorded by the real CLI in
``tests/fixtures/pi``), and its offline check names the models file a local endpoint needs."""

from __future__ import annotations

import json
from pathlib import Path

from forgeflare.supervisor.backends import ChildEnd, PiBackend, PiStreamReader
from forgeflare.supervisor.backends._pi import pi_problem

PI = Path(__file__).resolve().parent.parent / "fixtures" / "pi" / "0.73.1"


def test_pi_exits_0_on_failure_and_the_stream_decides() -> None:
    reader = PiStreamReader()
    for line in (PI / "auth.jsonl").read_text(encoding="utf-8").splitlines():
        reader.feed(line)
    report = PiBackend().report(reader, ChildEnd(exit_code=0), None, None)
    assert report.outcome == "agent_error"
    assert "authentication_error" in (report.detail or "")


def test_pi_names_the_models_file_a_local_endpoint_needs(tmp_path: Path) -> None:
    env = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080", "PI_CODING_AGENT_DIR": str(tmp_path)}
    assert str(tmp_path / "models.json") in (pi_problem(env) or "")
    (problem,) = PiBackend().problems({**env, "PATH": "/bin:/usr/bin"}, ["sh"], root=False)
    assert "models.json" in problem
    models = {"providers": {"anthropic": {"baseUrl": "http://127.0.0.1:8080"}}}
    (tmp_path / "models.json").write_text(json.dumps(models))
    assert pi_problem(env) is None
    assert pi_problem({}) is None
