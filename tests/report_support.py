"""Run records for the report tests: iteration rows and a record as 0.2 wrote it."""

from __future__ import annotations

from typing import Any

from forgeflare.supervisor.records import RunRecord


def row(n: int, outcome: str = "ok", **extra: Any) -> dict[str, Any]:
    return {
        "number": n,
        "started_at": f"2026-11-24T01:0{n}:00Z",
        "duration": 30.0 * n,
        "outcome": outcome,
        "tokens": {"input": 100, "output": 10, "cache_read": 1000, "cache_write": 0},
        "cost_usd": 0.5,
        "commits": 1,
        **extra,
    }


def run(finish: str | None, rows: list[dict[str, Any]], **extra: Any) -> RunRecord:
    """A record as 0.2 wrote it (no schema_version): read through the one upgrader."""
    return RunRecord.model_validate(
        {
            "run_id": "20261124-010000-abcd",
            "mode": "building",
            "project_dir": "/p",
            "started_at": "2026-11-24T01:00:00Z",
            "finished_at": "2026-11-24T02:00:00Z" if finish else None,
            "finish_type": finish,
            "iterations": rows,
            **extra,
        }
    )
