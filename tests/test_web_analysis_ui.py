"""'Analyse this game' in Chromium, on the game page and on the history page, and axe-core on
the match, resign and analysis screens."""

from __future__ import annotations

import pytest

from tests.test_web_browser import (  # noqa: F401  (fixtures)
    browser, click_turn_on_board, ctx, press, serve_seeded, start, state)
from tests.test_web_ui import AXE


pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def url():
    from models.loader import load_evaluator

    yield from serve_seeded(load_evaluator("pubeval"), 500, 8)


def moves_played(st) -> list[str]:
    return [e["move"] for e in st["log"] if e.get("steps") is not None and not e.get("undone")]


def play_then_resign(pg, level: str = "Medium", moves: int = 6) -> dict:
    start(pg, level)
    while len(moves_played(state(pg))) < moves or not state(pg)["can_resign"] or state(pg)["phase"] == "move" \
            and state(pg)["steps_taken"]:
        click_turn_on_board(pg)
    pg.locator("#btn-resign").click()
    press(pg, "Resign a single game", pg.locator("#resign-dialog"))
    st = state(pg)
    assert st["phase"] == "over" and st["result"]["resigned"]
    return st


def test_analyse_this_game_shows_every_decision_and_both_players(ctx, url):
    pg = ctx.new_page()
    pg.goto(url + "/")
    assert not pg.locator("#btn-analyse").is_visible()
    st = play_then_resign(pg)
    moves = moves_played(st)
    pg.get_by_role("button", name="Analyse this game").click()
    rows = pg.locator("#analysis table.analysis-decisions tbody tr")
    rows.first.wait_for(timeout=60_000)
    assert rows.count() == len(moves)
    assert [r.locator("td").nth(3).inner_text() for r in rows.all()] == moves
    players = pg.locator("#analysis table.analysis-players")
    assert players.locator("thead th").all_inner_texts()[1:] == ["White", "tdgammon_medium"]
    assert players.get_by_role("rowheader", name="Rating").is_visible()
    assert "Analysis done" in pg.locator("#analysis [role=status]").inner_text()
    link = pg.get_by_role("link", name="Download the game as .mat")
    assert link.get_attribute("href") == f"/api/games/{st['game_id']}/mat"
    # the history page: the same game's row analyses it too (read back from the store)
    pg.goto(url + "/history")
    row = pg.locator("#history tbody tr").first
    row.get_by_role("button", name="Analyse").click()
    pg.locator("#analysis table.analysis-decisions tbody tr").first.wait_for(timeout=60_000)
    assert pg.locator("#analysis table.analysis-decisions tbody tr").count() == len(moves)


def test_a_game_in_progress_has_no_analyse_button_and_the_api_refuses(ctx, url):
    pg = ctx.new_page()
    pg.goto(url + "/")
    st = start(pg, "Easy")
    assert not pg.locator("#btn-analyse").is_visible()
    res = pg.evaluate(f"fetch('/api/games/{st['game_id']}/analysis').then(async r => [r.status, await r.json()])")
    assert res[0] == 409 and "over" in res[1]["error"]


@pytest.mark.skipif(not AXE.is_file(), reason="axe-core not found: npm install axe-core (or set TDGAMMON_AXE_CORE)")
def test_axe_on_the_match_resign_and_analysis_screens(ctx, url):
    pg = ctx.new_page()

    def check(name):
        pg.add_script_tag(path=str(AXE))
        found = pg.evaluate("axe.run(document).then(r => r.violations.map(v => [v.id, v.impact, "
                            "v.nodes.map(n => n.target.join(' ')).slice(0, 3)]))")
        return [(name, *v) for v in found if v[1] in ("serious", "critical")]

    pg.goto(url + "/")
    pg.get_by_label("Match").select_option("3")
    start(pg, "Medium")
    while len(moves_played(state(pg))) < 2 or state(pg)["steps_taken"] or not state(pg)["can_resign"]:
        click_turn_on_board(pg)
    bad = check("a match")
    pg.locator("#btn-resign").click()
    pg.locator("#resign-dialog").wait_for(state="visible")
    bad += check("the resign dialog in a match")
    press(pg, "Resign a single game", pg.locator("#resign-dialog"))
    assert state(pg)["match"]["results"]
    pg.get_by_role("button", name="Analyse the games played").click()
    pg.locator("#analysis table.analysis-decisions tbody tr").first.wait_for(timeout=60_000)
    bad += check("a match's analysis")
    pg.goto(url + "/history")
    pg.wait_for_load_state("networkidle")
    if pg.locator("#history tbody tr").count():
        pg.locator("#history tbody tr").first.get_by_role("button", name="Analyse").click()
        pg.locator("#analysis table").first.wait_for(timeout=60_000)
    bad += check("history with an analysis")
    assert not bad, bad
