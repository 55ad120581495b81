"""The report's shell: finding a run folder, the paths git says changed (outside forgeflare's own
files), whether a run's supervisor still runs; on real folders and real git."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from forgeflare._errors import ConfigError
from forgeflare.report._collect import (
    dirty_paths,
    find_run,
    load_run,
    porcelain_paths,
    skipped_line,
    supervisor_alive,
)
from forgeflare.supervisor import RunRecord
from project_support import committed_repo


def _record(**fields: object) -> RunRecord:
    return RunRecord.model_validate(
        {"run_id": "r", "mode": "building", "project_dir": "/p", **fields}
    )


def _write_run(root: Path, run_id: str, started: str) -> Path:
    folder = root / run_id
    folder.mkdir(parents=True)
    record = _record(run_id=run_id, started_at=started)
    (folder / "run.json").write_text(record.model_dump_json())
    return folder


def test_porcelain_paths() -> None:
    out = " M a.py\0?? new file.txt\0R  b.py\0old b.py\0"
    assert porcelain_paths(out) == ("a.py", "new file.txt", "b.py")
    assert porcelain_paths("") == ()


def test_a_rename_is_named_by_its_new_path_and_its_origin_skipped() -> None:
    assert porcelain_paths("C  c.py\0orig.py\0?? x\0") == ("c.py", "x")
    assert porcelain_paths(" M a\0") == ("a",)


def test_find_run_by_id_by_path_or_the_newest(tmp_path: Path) -> None:
    root = tmp_path / ".fresher" / "runs"
    old = _write_run(root, "20261101-000000-aaaa", "2026-11-01T00:00:00Z")
    new = _write_run(root, "20261102-000000-bbbb", "2026-11-02T00:00:00Z")
    env: dict[str, str] = {}
    assert find_run(tmp_path, None, env) == new
    assert find_run(tmp_path, old.name, env) == old
    assert find_run(tmp_path, str(old), env) == old
    with pytest.raises(ConfigError, match=r"no run 'nope' in .*runs$"):
        find_run(tmp_path, "nope", env)


def test_damaged_runs_are_passed_over_with_a_warning(tmp_path: Path) -> None:
    root = tmp_path / ".fresher" / "runs"
    good = _write_run(root, "20261101-000000-aaaa", "2026-11-01T00:00:00Z")
    (root / "20261103-000000-cccc").mkdir()
    (root / "20261103-000000-cccc" / "run.json").write_text("{not json")
    warnings: list[str] = []
    assert find_run(tmp_path, None, {}, warn=warnings.append) == good
    assert len(warnings) == 1
    assert warnings[0].startswith(skipped_line(""))
    assert "20261103-000000-cccc" in warnings[0]
    good.joinpath("run.json").unlink()
    with pytest.raises(ConfigError, match=r"no runs in .* \(skipped 1 damaged\): start one"):
        find_run(tmp_path, None, {})


def test_a_damaged_record_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text("[]")
    with pytest.raises(ConfigError) as info:
        load_run(tmp_path)
    assert "\n" not in str(info.value)


def test_dirty_paths_leave_out_forgeflare_s_own_files_and_the_records(tmp_path: Path) -> None:
    project = committed_repo(tmp_path / "p", {"a.py": "a\n"})
    runs = project / ".fresher" / "runs" / "r1"
    runs.mkdir(parents=True)
    (runs / "run.json").write_text("{}")
    (project / ".forgeflare").mkdir()
    (project / ".forgeflare" / "audit.log").write_text("a line\n")
    (project / ".claude").mkdir()
    (project / ".claude" / "idle-loop.local.md").write_text("state\n")
    assert dirty_paths(project, runs) == ()
    (project / "a.py").write_text("changed\n")
    (project / "new file.txt").write_text("n\n")
    assert sorted(dirty_paths(project, runs)) == ["a.py", "new file.txt"]
    assert dirty_paths(tmp_path / "not-git", runs) == ()


@pytest.mark.parametrize(
    ("fields", "alive"),
    [
        ({"finished_at": "2026-11-24T02:00:00Z", "supervisor_pid": os.getpid()}, None),
        ({}, None),
        ({"supervisor_pid": os.getpid()}, True),
    ],
)
def test_whether_the_supervisor_still_runs(fields: dict[str, object], alive: bool | None) -> None:
    assert supervisor_alive(_record(started_at="2026-11-24T01:00:00Z", **fields)) is alive
