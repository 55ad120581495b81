"""The fleet digest's head: what landed, what stayed and why, and the spend."""

from __future__ import annotations

from pathlib import Path

from forgeflare.fleet import FleetRecord, LoopRecord, fleet_spent
from forgeflare.fleet._report import fleet_report_html, fleet_report_text, landing_html

RECORD = FleetRecord(
    name="night",
    fleet_file="/x/fleet.toml",
    started_at="2026-11-24T01:00:00Z",
    finished_at="2026-11-24T05:00:00Z",
    spent_usd=12.5,
    budget_hit=True,
    loops=[
        LoopRecord(
            name="parser",
            status="landed",
            branch="forgeflare/night/parser",
            finish_type="complete",
            commits=3,
            cost_usd=7.25,
            runs=["r1"],
            reason="3 commit(s) fast-forwarded into main",
        ),
        LoopRecord(
            name="lexer",
            status="conflict",
            branch="forgeflare/night/lexer",
            finish_type="complete",
            commits=1,
            cost_usd=5.25,
            runs=["r2"],
            reason="rebase onto main conflicts in lexer.py",
        ),
        LoopRecord(name="docs", status="stopped", reason="the fleet budget was spent first"),
    ],
)


def test_text_head_and_sections() -> None:
    text = fleet_report_text(RECORD, 12)
    todo, lines = text.split("\n\n", 1)[0].splitlines(), text.split("\n\n", 1)[1].splitlines()
    assert todo == [
        "What needs you",
        "  [lexer] branch forgeflare/night/lexer not landed (conflict): rebase onto main "
        "conflicts in lexer.py  →  forgeflare fleet land /x/fleet.toml lexer",
        "  [docs] not run (stopped): the fleet budget was spent first  →  forgeflare fleet run "
        + RECORD.fleet_file,
    ]
    assert lines[:7] == [
        "fleet night: started 2026-11-24T01:00:00Z, finished 2026-11-24T05:00:00Z",
        "spent $12.50 of $12 · the budget was spent: the remaining loops stopped",
        "landed: 1 of 3 loop(s)",
        "  parser (forgeflare/night/parser): 3 commit(s) fast-forwarded into main",
        "not landed:",
        "  lexer (forgeflare/night/lexer): conflict · rebase onto main conflicts in lexer.py",
        "  docs (): stopped · the fleet budget was spent first",
    ]
    assert "== lexer (forgeflare/night/lexer) ==" in lines
    assert "conflict · finished complete · 1 commit(s) · $5.25 · 1 run(s)" in lines
    assert text.count("(no run)") == 3  # no worktrees here


def test_html_escapes_and_has_a_section_per_loop(tmp_path: Path) -> None:
    record = RECORD.model_copy(
        update={"loops": [LoopRecord(name="x", status="failed", reason="<exit 1>")]}
    )
    page = fleet_report_html(record, tmp_path / "out.html")
    assert "&lt;exit 1&gt;" in page
    assert "<exit 1>" not in page
    assert "id='loop-x'" in page


def test_a_fleet_without_prices_says_cost_unknown_not_zero() -> None:
    unpriced = [LoopRecord(name="a", tokens=1200), LoopRecord(name="b", tokens=300)]
    assert fleet_spent(unpriced) is None
    assert fleet_spent([*unpriced, LoopRecord(name="c", cost_usd=0.5, tokens=10)]) == 0.5
    assert fleet_spent([LoopRecord(name="idle")]) == 0.0  # nothing ran: nothing spent
    record = RECORD.model_copy(update={"spent_usd": None, "budget_hit": False})
    text = fleet_report_text(record)
    head = text[text.index("\nfleet night") :].splitlines()[2]
    assert head == "cost unknown"


def test_the_landing_section_splits_landed_from_not_landed() -> None:
    running = LoopRecord(name="late", status="running", branch="forgeflare/night/late")
    record = RECORD.model_copy(update={"loops": [*RECORD.loops, running]})
    section = landing_html(record)
    landed, rest = section.split("<h2 class='not-landed'>")
    assert "Landed: 1 of 4 loop(s)" in landed
    assert "<b>parser</b>" in landed
    assert "<b>lexer</b>" not in landed
    assert rest.startswith("Not landed: 3</h2>")
    assert "to land: <code>forgeflare fleet land /x/fleet.toml lexer</code>" in rest
    assert "to land: <code>forgeflare fleet run /x/fleet.toml</code>" in rest  # never started
    assert "<b>late</b> <code>forgeflare/night/late</code>: running<br>under way" in rest
    nothing = RECORD.model_copy(update={"loops": [RECORD.loops[0]]})
    assert "Not landed: 0</h2><p class='muted'>none</p>" in landing_html(nothing)
