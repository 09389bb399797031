"""A turn's details in Chromium: the last move replayed step by step, the destinations shown
when only one place can move, a turn without a legal move said on the board and in the log,
and the computer's "thinking" indicator."""

from __future__ import annotations

import time

import numpy as np
import pytest

from tests.test_web_browser import (  # noqa: F401  (fixtures)
    browser, click_turn_on_board, press, serve, start, state, version, wait_newer)
from tests.test_web_ui import app, ctx, page, set_turn, until_my_move, url  # noqa: F401  (fixtures)

from engine.evaluator import RandomEvaluator  # noqa: E402
from engine.position import Position  # noqa: E402
from scripts.webapp.game import WHITE, SequenceDice  # noqa: E402
from scripts.webapp.server import create_app  # noqa: E402

pytestmark = pytest.mark.browser


def checkers_on(pg, abs_point: int) -> int:
    return pg.locator(f'#board circle.checker[data-abs="{abs_point}"]').count()


def test_last_move_replays_from_the_board_it_was_played_from(app, page):
    set_turn(app, page, Position.start().board, (6, 5))
    assert page.locator("#btn-replay").is_hidden()                  # nothing played yet
    while state(page)["legal_steps"]:
        click_turn_on_board(page)
    press(page, "Confirm", page.locator("#actions"))
    st = state(page)
    assert st["last_move"]["side"] == "white" and st["last_move"]["before"]["points"][23] == 2
    after = {p: checkers_on(page, p) for p in (24, 13, 8, 6)}
    assert after != {24: 2, 13: 5, 8: 3, 6: 5}
    page.get_by_role("button", name="Replay last move").click()
    assert {p: checkers_on(page, p) for p in (24, 13, 8, 6)} == {24: 2, 13: 5, 8: 3, 6: 5}   # the board before
    assert "Replaying White's" in page.locator("#status").inner_text()
    page.wait_for_function("window.tdg.replay === null", timeout=10000)
    assert {p: checkers_on(page, p) for p in (24, 13, 8, 6)} == after                     # and back


def test_destinations_show_without_a_press_when_only_the_bar_can_move(app, page):
    board = Position.start().board.copy()
    board[0, 23] = 1
    board[0, 24] = 1                      # one White checker on the bar: it must enter first
    set_turn(app, page, board, (5, 3))
    assert {s["from"] for s in state(page)["legal_steps"]} == {25}
    assert page.locator("[data-to]").count() == 2                 # 25/20 and 25/22, nothing pressed
    assert page.locator(".ring.selected").count() == 1


def test_a_turn_with_no_legal_move_is_said_on_the_board_and_in_the_log(app, page):
    st = start(page, "2 players on this device")
    game = app.state.context.hub.get(st["game_id"])
    board = np.zeros((2, 25), dtype=np.int8)
    board[0, 24], board[0, 5] = 1, 14     # White on the bar, Black's home board closed
    board[1, 0:6] = 2
    board[1, 12] = 3
    with game.lock:
        game.board = board
        game.phase, game.opening = "roll", (6, 6)
        game._begin_turn(WHITE, (6, 6))
        game._changed()
    page.reload()
    page.wait_for_function("window.tdg.state && window.tdg.state.phase === 'move'")
    assert "no legal play" in page.locator("#message").inner_text()
    press(page, "Confirm", page.locator("#actions"))
    assert page.locator("#log li").last.inner_text() == "White 6-6: no legal play"
    assert state(page)["turn"] == "black"


class SlowEvaluator(RandomEvaluator):
    """A random computer that takes its time, so the page's thinking indicator has a moment to show."""

    def evaluate(self, afterstates):
        time.sleep(1.0)
        return super().evaluate(afterstates)


def test_thinking_indicator_while_the_computer_moves(browser):
    app = create_app(SlowEvaluator(4), dice_factory=lambda: SequenceDice(seed=7), seed=7)
    for url in serve(app):
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        try:
            pg = context.new_page()
            pg.goto(url + "/")
            start(pg, "Medium")
            until_my_move(pg)
            while state(pg)["legal_steps"]:
                click_turn_on_board(pg)
            v = version(pg)
            pg.locator("#btn-confirm").click()                       # the computer rolls and thinks
            pg.wait_for_function("document.querySelector('#message').textContent.includes('thinking')")
            wait_newer(pg, v)
            assert "thinking" not in pg.locator("#message").inner_text()
            assert state(pg)["last_move"]["side"] == "black"
        finally:
            context.close()
