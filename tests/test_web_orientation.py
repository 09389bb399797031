"""The board turned so your home board is bottom right, in Chromium: against the computer and in a
friend game for either colour, and in hot-seat with "Turn the board to the player on roll"
(off by default: the board then stays White's)."""

from __future__ import annotations

import pytest

from tests.test_web_browser import (  # noqa: F401  (fixtures)
    browser, click_turn_on_board, ctx, serve_seeded, start, state, version, wait_newer)

from engine.evaluator import RandomEvaluator  # noqa: E402

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def url():
    yield from serve_seeded(RandomEvaluator(6), 1500, 6)


def home_bottom_right(pg, color: str) -> bool:
    """Whether `color`'s 1-point (White's point 1, or 24 in White's numbering for Black) is drawn
    in the bottom right quarter of the board, numbered 1 from that side."""
    abs_ = 1 if color == "white" else 24
    point = f'#board polygon[data-abs="{abs_}"]'
    pg.locator(point).wait_for(state="visible")   # the board shows a moment after the state arrives
    return pg.evaluate("""(point) => {              // both boxes in one task: no redraw between them
        const board = document.querySelector('#board').getBoundingClientRect();
        const one = document.querySelector(point).getBoundingClientRect();
        return one.y > board.y + board.height / 2 && one.x > board.x + board.width * 0.6;
    }""", point)


def numbered_from(pg) -> int:
    """The number printed at the bottom right point (1 when numbered from the side at the bottom)."""
    return int(pg.evaluate("""() => {
        const nums = [...document.querySelectorAll('#board .pointnum')];
        const box = (t) => t.getBoundingClientRect();
        return nums.reduce((a, b) => (box(b).y > box(a).y + 1 || (Math.abs(box(b).y - box(a).y) <= 1
                                      && box(b).x > box(a).x) ? b : a)).textContent;
    }"""))


@pytest.mark.parametrize("color", ["white", "black"])
def test_against_the_computer_your_home_board_is_bottom_right(ctx, url, color):
    pg = ctx.new_page()
    pg.goto(url + "/")
    pg.get_by_label("Your colour").select_option(color)
    start(pg, "Medium")
    assert state(pg)["you"] == [color]
    assert home_bottom_right(pg, color) and numbered_from(pg) == 1
    assert not pg.get_by_label("Turn the board to the player on roll").is_visible()   # a hot-seat option


@pytest.mark.parametrize("host_color", ["white", "black"])
def test_in_a_friend_game_each_player_sees_their_home_bottom_right(ctx, browser, url, host_color):
    host = ctx.new_page()
    host.goto(url + "/")
    host.get_by_label("Your colour").select_option(host_color)
    start(host, "Play a friend (send a link)")
    other = browser.new_context()
    try:
        guest = other.new_page()
        guest.goto(host.locator("#friend-link").input_value())
        guest.get_by_role("button", name="Join").click()
        guest.wait_for_function("window.tdg.state && window.tdg.state.you.length === 1")
        guest_color = "black" if host_color == "white" else "white"
        assert state(guest)["you"] == [guest_color]
        for pg, color in ((host, host_color), (guest, guest_color)):
            pg.wait_for_function("window.tdg.state.phase === 'opening'")
            assert home_bottom_right(pg, color) and numbered_from(pg) == 1
    finally:
        other.close()


def test_hotseat_turns_the_board_to_the_player_on_roll_only_when_asked(ctx, url):
    pg = ctx.new_page()
    pg.goto(url + "/")
    start(pg, "2 players on this device")
    box = pg.get_by_label("Turn the board to the player on roll")
    assert box.is_visible() and not box.is_checked()                 # off by default, as the page
    seen = set()
    while len(seen) < 2:                                             # a turn of each colour
        click_turn_on_board(pg)
        turn = state(pg)["turn"]
        if turn and turn not in seen and state(pg)["phase"] in ("roll", "move"):
            seen.add(turn)
            assert home_bottom_right(pg, "white")                    # the board stays White's
    box.check()
    for _ in range(2):
        turn = state(pg)["turn"]
        assert home_bottom_right(pg, turn) and numbered_from(pg) == 1
        while state(pg)["turn"] == turn:
            click_turn_on_board(pg)
    pg.reload()
    pg.wait_for_function("window.tdg.state !== null")
    assert pg.get_by_label("Turn the board to the player on roll").is_checked()     # kept for the next visit
    assert home_bottom_right(pg, state(pg)["turn"])
    box = pg.get_by_label("Turn the board to the player on roll")
    box.uncheck()
    assert home_bottom_right(pg, "white")
