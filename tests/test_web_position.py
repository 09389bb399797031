"""The position page in Chromium: a pasted Position ID or XGID, a board set up by hand, the dice,
cube and ply, the evaluation and ranked plays, and the link that reopens it all."""

from __future__ import annotations

import numpy as np
import pytest

from tests.test_web_browser import browser, serve  # noqa: F401  (fixtures)

from engine.position import Position  # noqa: E402
from scripts.webapp.server import create_app  # noqa: E402
from tests.test_search import ToyEvaluator  # noqa: E402

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
