"""``forgeflare stop``'s request file: written, seen, aged by its file's time, forgotten."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from forgeflare.supervisor.run import request_stop, stop_requested
from forgeflare.supervisor.run._stop import STOP_RELPATH, clear_stop, stop_request_age


def test_a_request_is_seen_then_forgotten(tmp_path: Path) -> None:
    assert not stop_requested(tmp_path)
    path = request_stop(tmp_path)  # makes .fresher/ when the project has none yet
    assert path == tmp_path / STOP_RELPATH
    assert stop_requested(tmp_path)
    assert json.loads(path.read_text())["requested_at"].endswith("Z")
    clear_stop(tmp_path)
    assert not stop_requested(tmp_path)
    clear_stop(tmp_path)  # nothing to forget is no error


def test_a_second_request_replaces_the_first(tmp_path: Path) -> None:
    request_stop(tmp_path)
    request_stop(tmp_path)
    assert [p.name for p in (tmp_path / ".fresher").iterdir()] == ["stop-request"]


def test_the_age_is_the_files_and_never_negative(tmp_path: Path) -> None:
    assert stop_request_age(tmp_path) is None
    path = request_stop(tmp_path)
    hour_ago = time.time() - 3600
    os.utime(path, (hour_ago, hour_ago))
    age = stop_request_age(tmp_path)
    assert age is not None
    assert age >= 3600
    tomorrow = time.time() + 86400  # a clock set back since the request
    os.utime(path, (tomorrow, tomorrow))
    assert stop_request_age(tmp_path) == 0.0
