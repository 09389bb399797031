"""Moving checkers in Chromium beside the click: drag and drop with a mouse and by touch, and a
double press that moves one die's full distance (the higher die first)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.test_web_browser import browser, state, version, wait_newer  # noqa: F401  (fixtures)
from tests.test_web_ui import app, set_turn, url  # noqa: F401  (fixtures)

from engine.position import Position  # noqa: E402

pytestmark = pytest.mark.browser


@pytest.fixture(params=[False, True], ids=["mouse", "touch"])
def page(request, browser, url):
    context = browser.new_context(viewport={"width": 1280, "height": 800}, has_touch=request.param)
    errors: list[str] = []
    pg = context.new_page()
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(url + "/")
    pg.touch = request.param
    yield pg
    context.close()
    assert not errors, errors


def centre(pg, selector: str) -> tuple[float, float]:
    """The middle of the first element the selector finds, once drawn (a busy machine draws late)."""
    element = pg.locator(selector).first
    element.wait_for()
    box = element.bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def drag(pg, start: tuple[float, float], end: tuple[float, float]) -> None:
    """Press at start, travel to end in a few moves, release: with the mouse, or as touches
    sent through the DevTools protocol (Chromium turns them into pointer events of type touch)."""
    path = [(start[0] + (end[0] - start[0]) * k / 6, start[1] + (end[1] - start[1]) * k / 6) for k in range(1, 7)]
    if not pg.touch:
        pg.mouse.move(*start)
        pg.mouse.down()
        for x, y in path:
            pg.mouse.move(x, y)
        pg.mouse.up()
        return
    cdp = pg.context.new_cdp_session(pg)
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": start[0], "y": start[1]}]})
    for x, y in path:
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y}]})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


def white_points(pg) -> list[int]:
    return state(pg)["board"]["points"]


def test_drag_a_checker_to_a_point_and_another_nowhere(app, page):
    set_turn(app, page, Position.start().board, (6, 4))
    v = version(page)
    drag(page, centre(page, '.ring[data-src="13"]'), centre(page, 'polygon[data-abs="7"]'))   # 13/7 by the 6
    wait_newer(page, v)
    pts = white_points(page)
    assert pts[12] == 4 and pts[6] == 1
    assert state(page)["dice_left"] == [4]
    v = version(page)
    drag(page, centre(page, '.ring[data-src="24"]'), centre(page, "#viewbar"))                  # dropped off the board
    page.wait_for_timeout(300)
    assert version(page) == v and white_points(page)[23] == 2
    drag(page, centre(page, '.ring[data-src="24"]'), centre(page, 'polygon[data-abs="20"]'))   # 24/20 by the 4
    wait_newer(page, v)
    assert white_points(page)[19] == 1 and state(page)["can_confirm"]
    assert page.locator(".dragging").count() == 0


def test_double_press_moves_the_higher_die_then_the_other(app, page):
    set_turn(app, page, Position.start().board, (6, 4))
    v = version(page)
    page.locator('.ring[data-src="8"]').dblclick()                   # 8/2 by the 6, the higher die
    wait_newer(page, v)
    assert white_points(page)[1] == 1 and state(page)["dice_left"] == [4]
    v = version(page)
    page.locator('.ring[data-src="8"]').dblclick()                   # only the 4 is left: 8/4
    wait_newer(page, v)
    assert white_points(page)[3] == 1 and white_points(page)[7] == 1


def test_double_press_takes_the_lower_die_when_the_higher_is_blocked(app, page):
    board = np.zeros((2, 25), dtype=np.int8)
    board[0, 12] = 15                            # White: all 15 on the 13-point
    board[1, 17] = 2                             # Black holds White's 7-point (its 18): 13/7 is blocked
    board[1, 23] = 13
    set_turn(app, page, board, (6, 3))
    v = version(page)
    page.locator('.ring[data-src="13"]').dblclick()
    wait_newer(page, v)
    assert white_points(page)[9] == 1 and state(page)["dice_left"] == [6]     # 13/10 by the 3


def test_drag_in_the_angled_view_moves_the_checker_not_the_board(app, page):
    set_turn(app, page, Position.start().board, (6, 4))
    page.locator("#view-angled").click()
    tilt = page.evaluate("[window.tdg.tiltX, window.tdg.tiltZ]")
    v = version(page)
    drag(page, centre(page, '.ring[data-src="13"]'), centre(page, 'polygon[data-abs="9"]'))    # 13/9 by the 4
    wait_newer(page, v)
    assert white_points(page)[8] == 1
    assert page.evaluate("[window.tdg.tiltX, window.tdg.tiltZ]") == tilt


def test_a_swipe_on_the_board_away_from_the_checkers_scrolls_a_phone_page(browser, url):
    context = browser.new_context(viewport={"width": 390, "height": 600}, is_mobile=True, has_touch=True)
    try:
        pg = context.new_page()
        pg.goto(url + "/")
        pg.get_by_role("button", name="2 players on this device").click()
        pg.wait_for_function("window.tdg.state")
        x, y = centre(pg, 'polygon[data-abs="21"]')                     # an empty point at the start
        cdp = context.new_cdp_session(pg)
        cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
        for k in range(1, 11):                                          # a finger's pace: the page scrolls
            cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y - 16 * k}]})
            pg.wait_for_timeout(20)
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        pg.wait_for_function("window.scrollY > 0")
    finally:
        context.close()
