"""The position page in Chromium: a pasted Position ID or XGID, a board set up by hand, the dice,
cube and ply, the evaluation and ranked plays, and the link that reopens it all."""

from __future__ import annotations

import numpy as np
import pytest

from tests.test_web_browser import browser, serve  # noqa: F401  (fixtures)

from engine.position import Position  # noqa: E402
from scripts.webapp.server import create_app  # noqa: E402
from tests.test_search import ToyEvaluator  # noqa: E402
from tests.test_web_ui import AXE  # noqa: E402

pytestmark = pytest.mark.browser

START = "4HPwATDgc/ABMA"


@pytest.fixture(scope="module")
def url():
    yield from serve(create_app(ToyEvaluator()))


@pytest.fixture
def page(browser, url):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    pg = context.new_page()
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(url + "/position")
    pg.wait_for_function("window.tdgPosition.result")
    yield pg
    context.close()
    assert not errors, errors


def shown(pg) -> dict:
    return pg.evaluate("window.tdgPosition.result")


def wait_for(pg, position_id: str) -> dict:
    pg.wait_for_function(f"window.tdgPosition.result && window.tdgPosition.result.position_id === {position_id!r}"
                         " && document.querySelector('#pos-status').textContent !== 'Evaluating…'")
    return shown(pg)


def test_pasted_id_with_dice_shows_the_ranked_plays_and_a_link_that_reopens_them(page, url):
    page.get_by_label("Position ID or XGID").fill("4HPwATDgc/ABMA")
    page.get_by_role("button", name="Show").click()
    wait_for(page, START)
    page.get_by_label("Die 1").select_option("6")
    page.get_by_label("Die 2").select_option("4")
    page.get_by_label("Ply").select_option("2")
    page.wait_for_function("window.tdgPosition.result.plays && window.tdgPosition.result.settings.ply === 2")
    out = shown(page)
    rows = page.locator("#plays tbody tr")
    assert rows.count() == len(out["plays"]) > 1
    assert out["plays"][0]["move"] in rows.first.inner_text()
    assert page.locator("#probs").inner_text().count("%") == 5
    assert out["cube"]["action"] in page.locator("#cube-action").inner_text()
    link = page.locator("#out-link").get_attribute("href")
    assert "dice=64" in link and "ply=2" in link and link in page.url
    other = page.context.new_page()
    other.goto(url + link)
    again = wait_for(other, START)
    assert again["plays"] == out["plays"] and other.get_by_label("Die 1").input_value() == "6"
    assert other.locator("#plays tbody tr").first.inner_text() == rows.first.inner_text()


def test_xgid_fills_dice_and_cube_and_a_bad_id_is_refused(page):
    page.get_by_label("Position ID or XGID").fill("XGID=-b----E-C---eE---c-e----B-:1:-1:1:52:0:0:0:0:10")
    page.get_by_role("button", name="Show").click()
    page.wait_for_function("window.tdgPosition.result.settings.dice")
    assert page.get_by_label("Value").input_value() == "2" and page.get_by_label("Owner").input_value() == "opponent"
    assert "opponent owns" in page.locator("#cube-action").inner_text()
    page.get_by_label("Position ID or XGID").fill("not an id")
    page.get_by_role("button", name="Show").click()
    page.wait_for_function("document.querySelector('#error').textContent.includes('Position ID')")


def test_a_position_set_up_by_hand_is_evaluated_and_linked(page):
    page.get_by_role("button", name="Clear board").click()
    assert page.locator("#board circle.checker").count() == 0
    tri = lambda abs_: page.locator(f'polygon[data-abs="{abs_}"]')   # noqa: E731
    tri(1).click()
    tri(1).click()
    tri(3).click()
    page.get_by_role("button", name="Add Black").click()
    tri(24).click()
    tri(20).click()
    tri(20).click(button="right")                  # a right-click takes one off again
    page.locator("#board .bar").click()            # Black on the bar
    board = np.zeros((2, 25), dtype=np.int8)
    board[0, 0], board[0, 2] = 2, 1                # White: 2 on its 1-point, 1 on its 3
    board[1, 0], board[1, 24] = 1, 1               # Black: 1 on its 1-point (White's 24), 1 on the bar
    out = wait_for(page, Position(board).id)
    assert out["board"]["off"] == {"white": 12, "black": 13}
    assert "On the board: White 3, Black 2" in page.locator("#pos-checkers").inner_text()
    assert f"id={Position(board).id.replace('/', '%2F')}" in page.url


def focused(pg) -> str:
    """The accessible name of the focused board cell ('' when focus is elsewhere)."""
    return pg.evaluate("document.activeElement.closest('#board [data-cell]') ? "
                       "document.activeElement.getAttribute('aria-label') : ''")


def keys(pg, *names: str) -> None:
    for name in names:
        pg.keyboard.press(name)


def test_a_position_set_up_by_keyboard_alone(page):
    page.get_by_role("button", name="Clear board").focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")                           # one Tab stop into the board: White's 1-point
    assert focused(page) == "Point 1: empty"
    cells = page.locator("#board [data-cell]")
    assert cells.count() == 27 and page.locator('#board [data-cell][tabindex="0"]').count() == 1
    assert all(cells.nth(i).get_attribute("aria-label") for i in range(27))
    keys(page, "w", "w")
    assert focused(page) == "Point 1: 2 White"           # the focus stays through the redraw
    keys(page, "ArrowLeft", "ArrowLeft", "w")
    assert focused(page) == "Point 3: 1 White"
    keys(page, "ArrowUp", "End", "ArrowLeft", "b")       # the top row, its right end (Black's tray), then 24
    assert focused(page) == "Point 24: 1 Black"
    keys(page, *["ArrowLeft"] * 6, "b")                  # the bar
    assert focused(page) == "Bar: 0 White, 1 Black"
    keys(page, "ArrowRight", "ArrowRight", "b", "b", "Shift+B", "Delete")
    assert focused(page) == "Point 20: empty"
    assert "Point 20: empty" in page.locator("#setup-status").inner_text()
    keys(page, "Delete")                                  # nothing left to remove: said, nothing changes
    assert "No checker on point 20" in page.locator("#error").inner_text()
    board = np.zeros((2, 25), dtype=np.int8)
    board[0, 0], board[0, 2] = 2, 1
    board[1, 0], board[1, 24] = 1, 1
    wait_for(page, Position(board).id)
    # The trays: Black's holds only Black; W on White's bears off the White checker nearest home.
    keys(page, "End")
    assert focused(page) == "Black borne off: 13"
    keys(page, "w")
    assert "holds only Black" in page.locator("#error").inner_text()
    keys(page, "ArrowDown")
    assert focused(page) == "White borne off: 12"
    keys(page, "w")
    assert focused(page) == "White borne off: 13"
    keys(page, "ArrowLeft")
    assert focused(page) == "Point 1: 1 White"
    keys(page, "Shift+W", "Home", "Enter")               # Enter does what a press does: Add White on 12
    assert focused(page) == "Point 12: 1 White"
    board[0, 0], board[0, 11] = 0, 1
    out = wait_for(page, Position(board).id)
    assert out["board"]["off"] == {"white": 13, "black": 13}
    assert focused(page) == "Point 12: 1 White"         # and through the redraw of the evaluated board


@pytest.mark.skipif(not AXE.is_file(), reason="axe-core not found: install the test extra (axe-playwright-python) "
                                              "or set TDGAMMON_AXE_CORE")
def test_axe_finds_no_serious_violations_on_the_keyboard_set_up(page):
    page.get_by_role("button", name="Clear board").focus()
    keys(page, "Enter", "Tab", "w", "ArrowUp", "b")
    assert focused(page) == "Point 24: 1 Black"
    page.add_script_tag(path=str(AXE))
    found = page.evaluate("axe.run(document).then(r => r.violations.filter(v => "
                          "['serious', 'critical'].includes(v.impact)).map(v => [v.id, v.nodes.length]))")
    assert not found, found
