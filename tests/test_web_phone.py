"""The game and position pages on a phone (390x844, touch) in Chromium: every control a touch
target of at least 40x40 px, point numbers readable, nothing wider than the screen."""

from __future__ import annotations

import pytest

from tests.test_web_browser import browser, start, wait_newer, version  # noqa: F401  (fixtures)
from tests.test_web_ui import app, url  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser

MIN_TARGET = 40        # px, each way
MIN_NUMBER = 11        # px: the point numbers' font size as drawn

# Every visible control's box, and the links of the header and navigation.
BOXES = """() => [...document.querySelectorAll('button, select, input:not([type=checkbox]), label.opt, header a')]
  .filter((e) => e.offsetParent !== null && !e.closest('dialog:not([open])'))
  .map((e) => { const r = e.getBoundingClientRect();
                return [e.textContent.trim().slice(0, 30) || e.name || e.id, Math.round(r.width), Math.round(r.height)]; })"""

NUMBER_SIZE = """() => { const t = document.querySelector('#board .pointnum');
  return parseFloat(getComputedStyle(t).fontSize) * document.querySelector('#board').getScreenCTM().a; }"""


@pytest.fixture
def phone(browser, url):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                                  device_scale_factor=2)
    errors: list[str] = []
    pg = context.new_page()
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    context.close()
    assert not errors, errors


def small_targets(pg) -> list:
    boxes = pg.evaluate(BOXES)
    assert len(boxes) >= 5
    return [b for b in boxes if b[1] < MIN_TARGET or b[2] < MIN_TARGET]


def test_game_page_targets_and_point_numbers_on_a_phone(phone, url):
    phone.goto(url + "/")
    assert small_targets(phone) == []
    start(phone, "2 players on this device")
    v = version(phone)
    phone.locator("#btn-roll").tap()
    wait_newer(phone, v)
    while not phone.locator("#steps .stepbtn").count():           # the opening roll, then a real one
        v = version(phone)
        phone.locator("#btn-roll").tap()
        wait_newer(phone, v)
    assert small_targets(phone) == []                                # the step buttons too
    assert phone.evaluate(NUMBER_SIZE) >= MIN_NUMBER
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390


def test_position_page_targets_on_a_phone(phone, url):
    phone.goto(url + "/position?id=4HPwATDgc%2FABMA&dice=31")
    phone.wait_for_selector("#plays tbody tr")
    assert small_targets(phone) == []
    assert phone.evaluate(NUMBER_SIZE) >= MIN_NUMBER
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
