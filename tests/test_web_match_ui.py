"""Match play, resignations and undo limits in the page, in Chromium: a whole game against Hard
by clicks, a 3-point match with the cube (double taken, double passed, the Crawford game
shown), a friend answering a resignation, undo refused after an accepted double, and every
level for either colour chosen in the page."""

from __future__ import annotations

import pytest

from tests.test_web_browser import (  # noqa: F401  (fixtures)
    EvenEvaluator, browser, click_turn_on_board, ctx, press, serve_seeded, start, state, version,
    wait_newer)


pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def url():
    from models.loader import load_evaluator

    yield from serve_seeded(load_evaluator("pubeval"), 300, 4)


@pytest.fixture(scope="module")
def even_url():
    yield from serve_seeded(EvenEvaluator(), 700, 6)


def resign(pg, which: str) -> None:
    pg.locator("#btn-resign").click()
    press(pg, which)


@pytest.mark.slow
def test_a_whole_game_against_hard_played_by_clicks(ctx, url):
    pg = ctx.new_page()
    pg.goto(url + "/")
    st = start(pg, "Hard")
    assert st["level"] == "hard" and st["seats"]["black"]["kind"] == "computer" and st["you"] == ["white"]
    for _ in range(3000):
        if state(pg)["phase"] == "over":
            break
        click_turn_on_board(pg)                  # the dice, a checker, a destination, Confirm
    st = state(pg)
    assert st["phase"] == "over" and st["result"]["points"] in (1, 2, 3) and not st["result"]["resigned"]
    assert sum(1 for e in st["log"] if e["side"] == "black" and e["steps"] is not None) >= 5
    assert "wins" in pg.locator("#message").inner_text()


@pytest.mark.parametrize("level", ["Easy", "Medium", "Hard"])
def test_every_level_plays_black_chosen_in_the_page(ctx, url, level):
    pg = ctx.new_page()
    pg.goto(url + "/")
    pg.get_by_label("Your colour").select_option("black")
    st = start(pg, level)
    assert st["level"] == level.lower() and st["you"] == ["black"] and st["seats"]["white"]["kind"] == "computer"
    while sum(1 for e in state(pg)["log"] if e["side"] == "white" and e["steps"] is not None) < 2:
        click_turn_on_board(pg)
    assert state(pg)["turn"] == "black"


@pytest.mark.slow
def test_a_three_point_match_with_the_cube_in_hot_seat(ctx, even_url):
    pg = ctx.new_page()
    pg.goto(even_url + "/")
    pg.get_by_label("Match").select_option("3")
    st = start(pg, "2 players on this device")
    assert st["match"]["length"] == 3 and st["cube"]["enabled"]
    assert pg.locator("#match-score").inner_text() == "Match to 3: White 0, Black 0 · game 1"

    # Game 1: a double taken, then the redouble passed: the owner wins 2 points.
    while not state(pg)["can_double"]:
        click_turn_on_board(pg)
    doubler = state(pg)["turn"]
    taker = "black" if doubler == "white" else "white"
    press(pg, "Double", pg.locator("#actions"))
    press(pg, "Take", pg.locator("#actions"))
    st = state(pg)
    assert st["cube"]["value"] == 2 and st["cube"]["owner"] == taker
    while not state(pg)["can_double"]:
        click_turn_on_board(pg)
    assert state(pg)["turn"] == taker
    press(pg, "Double", pg.locator("#actions"))
    press(pg, "Pass", pg.locator("#actions"))
    st = state(pg)
    assert st["match"]["score"][taker] == 2 and st["match"]["crawford"] and st["phase"] == "opening"
    score = pg.locator("#match-score").inner_text()
    assert score.endswith("game 2 · Crawford game: no doubling") and f"{taker.capitalize()} 2" in score
    assert "Crawford game" in pg.locator("#message").inner_text()
    assert "Crawford game (no doubling)" in pg.locator("#cube-text").inner_text()

    # The Crawford game: no doubling at any roll; the leader resigns it; then single games resigned.
    click_turn_on_board(pg)                                    # the opening roll
    while state(pg)["match"]["game"] == 2:
        st = state(pg)
        if st["phase"] == "roll":
            assert pg.locator("#btn-double").is_disabled()
        if st["phase"] == "roll" and st["turn"] == taker:
            resign(pg, "Resign a single game")
        else:
            click_turn_on_board(pg)
    st = state(pg)
    assert st["match"]["score"] == {doubler: 1, taker: 2} and st["match"]["post_crawford"]
    assert "post-Crawford" in pg.locator("#match-score").inner_text()
    while state(pg)["phase"] != "over":
        st = state(pg)
        if st["phase"] == "opening":
            click_turn_on_board(pg)
        else:
            resign(pg, "Resign a single game")
    st = state(pg)
    winner = st["match"]["winner"]
    assert winner in ("white", "black") and st["match"]["score"][winner] == 3
    assert "wins the match" in pg.locator("#message").inner_text()
    assert "wins the match" in pg.locator("#match-score").inner_text()
    assert pg.locator("#btn-undo-move").is_disabled() and pg.locator("#btn-roll").is_disabled()
    mat = pg.request.get(f"{even_url}/api/games/{st['game_id']}/mat").text()
    assert mat.startswith(" 3 point match") and "Doubles => 2" in mat and "Doubles => 4" in mat and "Drops" in mat
    assert mat.count(" Game ") == len(st["match"]["results"]) >= 3


def test_a_friend_refuses_then_accepts_a_resignation(browser, even_url):
    host_ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    guest_ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        host = host_ctx.new_page()
        host.goto(even_url + "/")
        host.get_by_label("With cube (money play)").check()
        start(host, "Play a friend (send a link)")
        link = host.locator("#friend-link").input_value()
        guest = guest_ctx.new_page()
        guest.goto(link)
        guest.wait_for_function("window.tdg.state !== null")
        press(guest, "Join")
        host.wait_for_function("window.tdg.state.phase === 'opening'")
        click_turn_on_board(host)                              # the opening roll
        st = state(host)
        me = st["you"][0]
        if st["turn"] != me:                                   # the guest opened: play its turn
            while state(guest)["turn"] != me or state(guest)["phase"] != "roll":
                click_turn_on_board(guest)
            host.wait_for_function(f"window.tdg.state.turn === '{me}'")
        resign(host, "Resign a gammon")
        assert state(host)["phase"] == "resign" and "to accept or refuse" in host.locator("#message").inner_text()
        guest.wait_for_function("window.tdg.state.can_answer_resign")
        assert guest.get_by_role("button", name="Accept the resignation").is_visible()
        press(guest, "Refuse: play on")
        assert state(guest)["phase"] != "resign" and not guest.locator("#btn-accept-resign").is_visible()
        host.wait_for_function("window.tdg.state.phase !== 'resign'")
        assert "refuses the resignation of a gammon" in host.locator("#status").inner_text()
        resign(host, "Resign a gammon")
        guest.wait_for_function("window.tdg.state.can_answer_resign")
        press(guest, "Accept the resignation")
        st = state(guest)
        assert st["phase"] == "over" and st["result"]["kind"] == "gammon" and st["result"]["points"] == 2
        host.wait_for_function("window.tdg.state.phase === 'over'")
    finally:
        host_ctx.close()
        guest_ctx.close()


def test_undo_refused_after_an_accepted_double(ctx, even_url):
    pg = ctx.new_page()
    pg.goto(even_url + "/")
    pg.get_by_label("With cube (money play)").check()
    start(pg, "Medium")
    while not state(pg)["can_double"]:
        click_turn_on_board(pg)
    if not state(pg)["can_undo_move"]:                         # Black opened: play one turn of White's
        click_turn_on_board(pg)
        while not state(pg)["can_double"]:
            click_turn_on_board(pg)
    assert pg.locator("#btn-undo-move").is_enabled()          # a casual game: Undo move before the double
    press(pg, "Double", pg.locator("#actions"))
    st = state(pg)
    assert st["cube"]["value"] == 2 and st["cube"]["owner"] == "black"
    assert not st["can_undo_move"] and pg.locator("#btn-undo-move").is_disabled()
    res = pg.request.post(f"{even_url}/api/games/{st['game_id']}/undo-move",
                          data={"token": pg.evaluate("window.tdg.token")})
    assert res.status == 409 and "accepted double" in res.json()["error"]


class FavouriteEvaluator:
    """Every afterstate: the side that just moved wins 10% of the time, no gammons. So the side
    on roll is always a 90% favourite: at 3-away it doubles and the opponent passes."""

    name = "favourite"

    def evaluate(self, afterstates):
        import numpy as np

        out = np.zeros((len(afterstates), 5))
        out[:, 0] = 0.1
        return out


@pytest.mark.slow
def test_a_three_point_match_against_the_computer_with_its_match_cube(ctx):
    for url in serve_seeded(FavouriteEvaluator(), 40, 8):
        pg = ctx.new_page()
        pg.goto(url + "/")
        pg.get_by_label("Match").select_option("3")
        st = start(pg, "Medium")
        assert st["match"]["length"] == 3 and st["mode"] == "computer"
        seen, took = set(), 0
        for _ in range(600):
            st = state(pg)
            if st["phase"] == "over":
                break
            score = pg.locator("#match-score").inner_text()
            seen.add("Crawford" if "Crawford game" in score else "post" if "post-Crawford" in score else "")
            mine = [e for e in st["log"] if e.get("game") == st["match"]["game"] and e["side"] == "white"
                    and e["steps"] is not None and not e["undone"]]
            if st["can_take"]:
                took += 1
                press(pg, "Take" if took == 1 else "Pass", pg.locator("#actions"))
            elif st["can_double"]:
                press(pg, "Double", pg.locator("#actions"))
            elif st["phase"] == "move" and st["turn"] == "white" and len(mine) >= 2:
                resign(pg, "Resign a single game")      # a game the cube cannot end: the Crawford game
            else:
                click_turn_on_board(pg)
        st = state(pg)
        assert st["phase"] == "over" and st["match"]["winner"] in ("white", "black")
        assert st["match"]["score"][st["match"]["winner"]] == 3
        assert "Crawford" in seen
        texts = [e["text"] for e in st["log"]]
        assert any("Black doubles" in t for t in texts) and any("White takes" in t for t in texts)
        assert any("passes" in t for t in texts)
        # Nobody doubled in the Crawford game.
        crawford = next(e["game"] for e in st["log"] if "(Crawford game: no doubling)" in e["text"])
        assert not [e for e in st["log"] if e.get("cube") == "double" and e["game"] == crawford]
        pg.goto(url + "/history")
        pg.wait_for_load_state("networkidle")
        assert "Match to 3" in pg.locator("#history").inner_text()
