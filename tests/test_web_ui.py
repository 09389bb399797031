"""The page's behaviour a player trips on, in Chromium: focus, the tray, the friend's view, the log,
the live region, selection, undo limits, last move, orientation, accessibility (axe-core)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from tests.test_web_browser import (  # noqa: F401  (fixtures)
    ARGS, EvenEvaluator, browser, click_turn_on_board, ctx, press, serve, start, state,
    version, wait_newer)

from engine.evaluator import RandomEvaluator  # noqa: E402
from scripts.webapp.game import WHITE, SequenceDice  # noqa: E402
from scripts.webapp.server import create_app  # noqa: E402

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent


def find_axe() -> Path:
    """axe-core's axe.min.js: $TDGAMMON_AXE_CORE, the copy bundled by the axe-playwright-python
    package (the `test` extra), or node_modules/ after `npm install axe-core`."""
    if os.environ.get("TDGAMMON_AXE_CORE"):
        return Path(os.environ["TDGAMMON_AXE_CORE"])
    try:
        import axe_playwright_python
    except ImportError:
        return ROOT / "node_modules" / "axe-core" / "axe.min.js"
    return Path(axe_playwright_python.__file__).parent / "axe.min.js"


AXE = find_axe()


@pytest.fixture(scope="module")
def app():
    seeds = iter(range(900, 10_000))
    return create_app(RandomEvaluator(3), dice_factory=lambda: SequenceDice(seed=next(seeds)), seed=3)


@pytest.fixture(scope="module")
def url(app):
    yield from serve(app)


@pytest.fixture
def page(ctx, url):
    pg = ctx.new_page()
    pg.goto(url + "/")
    return pg


def until_my_move(pg) -> dict:
    st = state(pg)
    while not (st["phase"] == "move" and st["legal_steps"] and st["turn"] in st["you"]):
        click_turn_on_board(pg)
        st = state(pg)
    return st


def test_keyboard_focus_follows_each_step_one_key_press_per_step(page):
    start(page, "Medium")
    page.locator("#panel-actions [data-act='roll']").focus()
    for _ in range(12):                       # opening roll, steps, confirm, next roll ...: Enter only
        st = state(page)
        if st["phase"] == "over":
            break
        v = st["version"]
        page.keyboard.press("Enter")
        wait_newer(page, v)
        focused = page.evaluate("document.activeElement.tagName + ':' + document.activeElement.textContent")
        assert focused.startswith("BUTTON:"), focused          # never back to the page body
    log = state(page)["log"]
    assert any(e["side"] == "white" and e["steps"] for e in log)   # a whole turn was played by Enter alone


def set_turn(app, pg, board, dice) -> None:
    """Put White on roll in a hot-seat game with this (White-view) board and these dice, then reload."""
    st = start(pg, "2 players on this device")
    game = app.state.context.hub.get(st["game_id"])
    with game.lock:
        game.board = np.array(board, dtype=np.int8)
        game.phase, game.opening = "roll", tuple(dice)
        game._begin_turn(WHITE, tuple(dice))
        game._changed()
    pg.reload()
    pg.wait_for_function("window.tdg.state && window.tdg.state.legal_steps.length > 0")


def test_bear_off_tray_takes_the_click_with_ten_checkers_off(app, page):
    board = np.zeros((2, 25), dtype=np.int8)
    board[0, 0:5] = 1                          # White: five on points 1-5, ten off
    board[1, 18] = 15
    set_turn(app, page, board, (6, 5))
    assert state(page)["board"]["off"]["white"] == 10
    page.locator(".ring").first.click()
    tray = page.locator(".tray.dest")
    box = tray.bounding_box()
    v = version(page)
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)   # over the slabs
    wait_newer(page, v)
    assert state(page)["board"]["off"]["white"] == 11


def test_invited_friend_reads_the_invitation_and_sees_join_above_the_fold(ctx, browser, url):
    host = ctx.new_page()
    host.goto(url + "/")
    start(host, "Play a friend (send a link)")
    link = host.locator("#friend-link").input_value()
    other = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        guest = other.new_page()
        guest.goto(link)
        guest.wait_for_function("window.tdg.state !== null")
        assert "You are invited" in guest.locator("#message").inner_text()
        assert "Waiting for your friend" not in guest.locator("#status").inner_text()
        join = guest.get_by_role("button", name="Join").bounding_box()
        assert join["y"] + join["height"] <= 800
        guest.get_by_role("button", name="Join").click()
        guest.wait_for_function("window.tdg.state.you.length === 1")
        # The same link opened again in a new tab keeps the seat.
        again = other.new_page()
        again.goto(link)
        again.wait_for_function("window.tdg.state && window.tdg.state.you.length === 1")
        assert state(again)["you"] == ["black"] and not again.locator("#spectator").is_visible()
        # A third party is told they are watching.
        third = browser.new_context().new_page()
        third.goto(link.replace("?join=", "?game="))
        third.wait_for_function("window.tdg.state !== null")
        assert third.locator("#spectator").is_visible() and "watching" in third.locator("#spectator").inner_text()
        third.context.close()
    finally:
        other.close()


def test_move_log_numbers_of_three_digits_are_not_clipped(app, page):
    st = start(page, "2 players on this device")
    game = app.state.context.hub.get(st["game_id"])
    with game.lock:
        for i in range(105):
            game._log(None, None, "", f"line {i}")
        game._changed()
    page.reload()
    page.wait_for_function("window.tdg.state && window.tdg.state.log.length > 100")
    pad, marker = page.evaluate("""() => {
        const ol = document.querySelector('#log');
        const probe = document.createElement('span');
        probe.textContent = '100. ';
        probe.style.font = getComputedStyle(ol.querySelector('li')).font;
        document.body.appendChild(probe);
        const w = probe.getBoundingClientRect().width;
        probe.remove();
        return [parseFloat(getComputedStyle(ol).paddingLeft), w];
    }""")
    assert pad >= marker


def test_live_region_announces_a_takeback(page):
    start(page, "Easy")
    st = until_my_move(page)
    while state(page)["legal_steps"]:
        click_turn_on_board(page)
    press(page, "Confirm", page.locator("#actions"))
    press(page, "Undo move", page.locator("#actions"))
    assert "takes back the move" in page.locator("#status").inner_text()
    assert page.locator("#log li.undone").count() >= 1
    assert state(page)["dice"] == st["dice"]


def test_live_region_says_a_hotseat_double_once(page):
    page.get_by_label("With cube (money play)").check()
    start(page, "2 players on this device")
    while not state(page)["can_double"]:
        click_turn_on_board(page)
    press(page, "Double", page.locator("#actions"))
    assert page.locator("#status").inner_text().count("doubles to 2") == 1


def test_no_stale_selection_after_a_step(app, page):
    from engine.position import Position

    set_turn(app, page, Position.start().board, (6, 5))
    page.locator('.ring[data-src="13"]').click()
    v = version(page)
    page.locator('[data-to="8"]').click()                 # 13/8: the 13-point can still move the 6
    wait_newer(page, v)
    assert 13 in {s["from"] for s in state(page)["legal_steps"]}
    assert page.evaluate("window.tdg.selected") is None
    assert page.locator("[data-to]").count() == 0 and page.locator(".ring.selected").count() == 0


def test_undo_refused_after_a_finished_game(page):
    start(page, "Easy")
    until_my_move(page)
    while state(page)["legal_steps"]:
        click_turn_on_board(page)
    press(page, "Confirm", page.locator("#actions"))
    assert page.locator("#btn-undo-move").is_enabled()
    page.locator("#btn-resign").click()
    assert not page.get_by_role("button", name="Resign a gammon").is_visible()    # cubeless: a single game
    press(page, "Resign a single game")
    assert state(page)["phase"] == "over" and page.locator("#btn-undo-move").is_disabled()


def test_last_move_marked_and_black_home_bottom_right(page):
    start(page, "Play Black · Medium")
    page.wait_for_function("window.tdg.state.last_move !== null || window.tdg.state.can_roll")
    while state(page)["last_move"] is None or state(page)["last_move"]["side"] != "white":
        click_turn_on_board(page)
    assert page.locator(".tri.last").count() >= 2
    board = page.locator("#board").bounding_box()
    one = page.locator('polygon[data-abs="24"]').bounding_box()      # Black's 1-point
    assert one["y"] > board["y"] + board["height"] / 2
    assert one["x"] > board["x"] + board["width"] * 0.6


@pytest.mark.skipif(not AXE.is_file(), reason="axe-core not found: install the test extra (axe-playwright-python) or set TDGAMMON_AXE_CORE")
def test_axe_finds_no_serious_violations_on_the_main_screens(ctx, url):
    pg = ctx.new_page()

    def check(name):
        pg.add_script_tag(path=str(AXE))
        found = pg.evaluate("axe.run(document).then(r => r.violations.map(v => [v.id, v.impact, v.nodes.map(n => n.target.join(" ")).slice(0, 3)]))")
        return [(name, *v) for v in found if v[1] in ("serious", "critical")]

    pg.goto(url + "/")
    bad = check("start")
    start(pg, "Medium")
    until_my_move(pg)
    pg.locator(".ring").first.click()
    bad += check("in a game")
    pg.goto(url + "/history")
    pg.wait_for_load_state("networkidle")
    bad += check("history")
    pg.goto(url + "/position?id=4HPwATDgc%2FABMA&dice=31")
    pg.wait_for_selector("#plays tbody tr")
    bad += check("position")
    assert not bad, bad


def test_resign_a_gammon_in_a_cube_game_confirmed_first(browser):
    from tests.test_web_cube import GammonMoverEvaluator

    app = create_app(GammonMoverEvaluator(), dice_factory=lambda: SequenceDice(seed=5), seed=5)
    for url in serve(app):
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        try:
            pg = context.new_page()
            pg.goto(url + "/")
            pg.get_by_label("With cube (money play)").check()
            start(pg, "Easy")
            until_my_move(pg)
            pg.locator("#btn-resign").click()
            pg.get_by_role("button", name="Cancel: play on").click()
            assert state(pg)["phase"] == "move"                          # cancelled: nothing sent
            pg.locator("#btn-resign").click()
            press(pg, "Resign a single game")
            assert "refuses the resignation" in pg.locator("#status").inner_text()
            pg.locator("#btn-resign").click()
            press(pg, "Resign a gammon")
            st = state(pg)
            assert st["result"]["kind"] == "gammon" and st["result"]["points"] == 2 and st["result"]["resigned"]
            assert "Black wins" in pg.locator("#message").inner_text()
        finally:
            context.close()


def test_hint_lists_the_best_plays_and_is_off_against_a_friend(page, url):
    start(page, "Medium")
    until_my_move(page)
    page.get_by_role("button", name="Hint").click()
    page.wait_for_selector("#hint-list li")
    items = page.locator("#hint-list li").all_inner_texts()
    assert 1 <= len(items) <= 5 and all("equity" in t for t in items)
    st = state(page)
    res = page.evaluate(f"fetch('/api/games/{st['game_id']}/hint?token=' + window.tdg.token).then(r => r.json())")
    assert res["ply"] == 1 and res["plays"][0]["equity"] >= res["plays"][-1]["equity"]
    page.goto(url + "/")
    start(page, "Play a friend (send a link)")
    assert not page.locator("#btn-hint").is_visible()


def test_auto_roll_confirm_and_forced_moves(app, page):
    for name in ("Auto-roll", "Auto-confirm", "Auto-play forced moves"):
        page.get_by_label(name).check()
    board = np.zeros((2, 25), dtype=np.int8)
    board[0, 0] = 2                            # White: two checkers on the 1-point; 6-5 bears both off
    board[1, 18] = 15
    set_turn(app, page, board, (6, 5))          # the forced steps play, the game ends without a click
    page.wait_for_function("window.tdg.state.phase === 'over'", timeout=15000)
    assert state(page)["result"]["winner"] == "white"
    page.goto(page.url.split("?")[0])
    assert page.get_by_label("Auto-roll").is_checked()                      # kept for the next visit
    start(page, "Medium")
    # The opening roll and every later roll happen by themselves; only steps are pressed.
    page.wait_for_function("window.tdg.state.phase === 'move' || window.tdg.state.phase === 'roll'")
    for _ in range(3):
        page.wait_for_function("window.tdg.state.phase === 'move' && window.tdg.state.turn === 'white' "
                               "&& !window.tdg.busy", timeout=15000)
        n = sum(1 for e in state(page)["log"] if e["side"] == "white" and e["steps"] is not None)
        while state(page)["legal_steps"] and state(page)["turn"] == "white":
            click_turn_on_board(page)
        page.wait_for_function(f"window.tdg.state.log.filter(e => e.side === 'white' && e.steps).length > {n}",
                               timeout=15000)


@pytest.mark.parametrize("motion, animation", [("no-preference", "tumble"), ("reduce", "none")])
def test_dice_tumble_unless_reduced_motion(browser, url, motion, animation):
    context = browser.new_context(viewport={"width": 1280, "height": 800}, reduced_motion=motion)
    try:
        pg = context.new_page()
        pg.goto(url + "/")
        start(pg, "2 players on this device")
        v = version(pg)
        pg.locator("#btn-roll").click()
        wait_newer(pg, v)
        assert pg.locator(".die.fresh").count() == 2
        assert pg.locator(".die").first.evaluate("d => getComputedStyle(d).animationName") == animation
    finally:
        context.close()
