"""The game page end to end in Debian's Chromium driven by Playwright.

Skips (with the reason) when the playwright package or Chromium (tests/conftest.py) is missing.
The server runs in a thread on a free loopback port with a random-move computer and
seeded dice, so a complete game stays short and reproducible.
"""

from __future__ import annotations

import itertools
import socket
import threading
import time

import pytest

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed")
uvicorn = pytest.importorskip("uvicorn")

from engine.evaluator import RandomEvaluator  # noqa: E402
from scripts.webapp.game import SequenceDice  # noqa: E402
from scripts.webapp.server import create_app  # noqa: E402
from tests.conftest import CHROMIUM  # noqa: E402

pytestmark = pytest.mark.browser


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(app):
    """Run `app` with uvicorn in a thread on a free loopback port; yields its URL."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", ws="websockets-sansio")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        if time.monotonic() > deadline:
            pytest.fail("the web server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(timeout=10)


def serve_seeded(evaluator, first_dice: int, seed: int, **options):
    """serve() the web app with `evaluator`, its games dealt SequenceDice seeded first_dice,
    first_dice + 1, ... in the order they start, so every test's games are reproducible."""
    dice_seeds = itertools.count(first_dice)
    yield from serve(create_app(evaluator, dice_factory=lambda: SequenceDice(seed=next(dice_seeds)),
                                seed=seed, **options))


@pytest.fixture(scope="module")
def server():
    yield from serve_seeded(RandomEvaluator(1), 100, 1, disconnect_timeout=120.0)


class EvenEvaluator:
    """Every position an even game (P(win) 0.5, no gammons): engine.cube.equity never doubles it
    and always takes, so the computer's cube answers in the browser tests are known."""

    name = "even"

    def evaluate(self, afterstates):
        import numpy as np

        out = np.zeros((len(afterstates), 5))
        out[:, 0] = 0.5
        return out


@pytest.fixture(scope="module")
def even_server():
    yield from serve_seeded(EvenEvaluator(), 500, 2)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def ctx(browser):
    """A 1280x800 browser context whose test fails on any uncaught error in its pages."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    context.on("page", lambda pg: pg.on("pageerror", lambda e: errors.append(str(e))))
    yield context
    context.close()
    assert not errors, errors


@pytest.fixture
def page(browser, server):
    ctx = browser.new_context(viewport={"width": 1200, "height": 900})
    pg = ctx.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(server + "/")
    yield pg
    ctx.close()
    assert not errors, errors


def state(pg):
    return pg.evaluate("window.tdg.state")


def version(pg) -> int:
    return pg.evaluate("window.tdg.state ? window.tdg.state.version : -1")


def wait_newer(pg, v: int) -> None:
    pg.wait_for_function(f"window.tdg.state && window.tdg.state.version > {v} && !window.tdg.busy",
                         timeout=15000)


def start(pg, button: str) -> dict:
    v = version(pg)
    pg.get_by_role("button", name=button, exact=True).click()
    wait_newer(pg, v)
    return state(pg)


def click_turn_on_board(pg) -> None:
    """One action by pressing the board: the dice, a ringed checker, a destination, or Confirm."""
    st = state(pg)
    v = st["version"]
    if st["can_roll"]:
        pg.locator("[data-dice]").click()
    elif st["legal_steps"]:
        if pg.locator("[data-to]").count() == 0:
            pg.locator(".ring").first.click()
        pg.locator("[data-to]").first.click()
    elif st["can_confirm"]:
        pg.locator("#btn-confirm").click()
    else:
        raise AssertionError(f"nothing to do: {st['message']}")
    wait_newer(pg, v)


@pytest.mark.slow
def test_complete_game_against_the_computer_by_clicking(page):
    st = start(page, "Easy")
    assert st["seats"]["black"]["kind"] == "computer" and st["you"] == ["white"]
    for _ in range(2000):
        if state(page)["phase"] == "over":
            break
        click_turn_on_board(page)
    st = state(page)
    assert st["phase"] == "over" and st["result"]["points"] in (1, 2, 3)
    assert "wins" in page.locator("#message").inner_text()
    assert page.get_by_role("button", name="Rematch (swap White and Black)").is_visible()


def test_undo_step_and_undo_move(page):
    st = start(page, "Medium")
    while not (st["phase"] == "move" and st["turn"] == "white" and st["legal_steps"]):
        click_turn_on_board(page)
        st = state(page)
    dice, before = st["dice"], st["board"]
    click_turn_on_board(page)                      # one step
    assert len(state(page)["steps_taken"]) == 1
    v = version(page)
    page.locator("#btn-undo-step").click()
    wait_newer(page, v)
    assert state(page)["steps_taken"] == [] and state(page)["board"] == before
    assert page.locator("#btn-undo-move").is_disabled()   # not between roll and confirm
    while state(page)["legal_steps"]:
        click_turn_on_board(page)
    v = version(page)
    page.locator("#btn-confirm").click()
    wait_newer(page, v)
    st = state(page)
    assert st["phase"] in ("roll", "over") and page.locator("#btn-undo-move").is_enabled()
    v = st["version"]
    page.locator("#btn-undo-move").click()
    wait_newer(page, v)
    st = state(page)
    assert st["dice"] == dice and st["board"] == before and st["turn"] == "white" and st["phase"] == "move"


@pytest.mark.slow
def test_hotseat_game_both_sides_by_clicking(page):
    st = start(page, "2 players on this device")
    assert st["mode"] == "hotseat" and sorted(st["you"]) == ["black", "white"]
    movers = set()
    for _ in range(60):
        st = state(page)
        if st["phase"] == "move":
            movers.add(st["turn"])
        click_turn_on_board(page)
    assert movers == {"white", "black"}
    texts = page.locator("#log li").all_inner_texts()
    assert any(t.startswith("White ") for t in texts) and any(t.startswith("Black ") for t in texts)
    page.locator("#btn-resign").click()
    press(page, "Resign a single game")
    assert state(page)["result"]["points"] == 1


@pytest.mark.slow
def test_button_controls_panel_alone_completes_a_game(page):
    st = start(page, "Play Black · Medium")
    assert st["you"] == ["black"]
    panel = page.get_by_role("region", name="Button controls")
    for _ in range(2000):
        st = state(page)
        if st["phase"] == "over":
            break
        v = st["version"]
        if st["can_roll"]:
            panel.get_by_role("button", name="Roll the dice").click()
        elif st["legal_steps"]:
            panel.locator(".stepbtn").first.click()
        else:
            panel.get_by_role("button", name="Confirm").click()
        wait_newer(page, v)
    assert state(page)["phase"] == "over"
    assert page.locator("#status").get_attribute("aria-live") == "polite"
    assert "Pip count: White" in page.locator("#pips").inner_text()
    assert page.locator("#log li").count() > 10


@pytest.mark.slow
def test_friend_game_live_with_a_third_party_locked_out(browser, server):
    host_ctx, guest_ctx, third_ctx = (browser.new_context() for _ in range(3))
    try:
        host = host_ctx.new_page()
        host.goto(server + "/")
        st = start(host, "Play a friend (send a link)")
        assert st["phase"] == "waiting"
        link = host.locator("#friend-link").input_value()
        assert "?join=" in link
        guest = guest_ctx.new_page()
        guest.goto(link)
        guest.get_by_role("button", name="Join").click()
        guest.wait_for_function("window.tdg.state && window.tdg.state.you.length === 1")
        host.wait_for_function("window.tdg.state.phase === 'opening'")
        assert state(guest)["you"] == ["black"]
        v = version(host)
        host.get_by_role("button", name="Roll the dice").first.click()
        wait_newer(host, v)
        st = state(host)
        mover, watcher = (host, guest) if st["turn"] == "white" else (guest, host)
        mover.wait_for_function("window.tdg.state.legal_steps.length > 0")
        before = state(watcher)["version"]
        click_turn_on_board(mover)
        # The other player sees the step live (websocket), without reloading.
        watcher.wait_for_function(f"window.tdg.state.version > {before} && "
                                  "window.tdg.state.steps_taken.length === 1", timeout=10000)
        assert watcher.locator(".ring").count() == 0
        # A third browser with the game link but no seat token cannot move.
        third = third_ctx.new_page()
        third.goto(f"{server}/?game={st['game_id']}")
        third.wait_for_function("window.tdg.state !== null")
        assert state(third)["you"] == [] and third.locator(".ring").count() == 0
        assert third.locator("#btn-confirm").is_disabled()
        status = third.evaluate(f"""fetch('/api/games/{st["game_id"]}/undo-step', {{method: 'POST',
            headers: {{'Content-Type': 'application/json'}}, body: JSON.stringify({{token: 'guess'}})}})
            .then(r => r.status)""")
        assert status == 403
        third.goto(link)   # the invitation link, once both seats are taken: no Join offered
        third.wait_for_function("window.tdg.state !== null")
        assert not third.get_by_role("button", name="Join").is_visible()
        res = third.evaluate(f"""fetch('/api/games/{st["game_id"]}/join', {{method: 'POST'}})
            .then(async r => [r.status, (await r.json()).error])""")
        assert res[0] == 409 and "two players" in res[1]
        assert len(state(watcher)["steps_taken"]) == 1
    finally:
        for ctx in (host_ctx, guest_ctx, third_ctx):
            ctx.close()


def test_angled_view_rotates_and_zooms(page):
    start(page, "Medium")
    page.get_by_role("button", name="Angled").click()
    tilt = page.locator("#tilt")
    first = tilt.evaluate("e => e.style.transform")
    assert "rotateX" in first
    box = page.locator("#stage").bounding_box()
    page.mouse.move(box["x"] + 100, box["y"] + 100)
    page.mouse.down()
    page.mouse.move(box["x"] + 220, box["y"] + 140, steps=5)
    page.mouse.up()
    rotated = tilt.evaluate("e => e.style.transform")
    assert rotated != first
    page.mouse.wheel(0, -400)
    page.wait_for_function(f"document.querySelector('#tilt').style.transform !== {rotated!r}")
    page.get_by_role("button", name="Top-down").click()
    assert tilt.evaluate("e => e.style.transform") == "none"


def test_narrow_screen_puts_the_panel_below_the_board(browser, server):
    ctx = browser.new_context(viewport={"width": 420, "height": 900})
    try:
        pg = ctx.new_page()
        pg.goto(server + "/")
        board = pg.locator("#board").bounding_box()
        panel = pg.locator("#panel").bounding_box()
        assert panel["y"] >= board["y"] + board["height"] - 1
        assert board["width"] <= 420
    finally:
        ctx.close()


def press(pg, name: str, scope=None) -> None:
    """Press a button by its accessible name and wait for the new state."""
    v = version(pg)
    (scope or pg).get_by_role("button", name=name, exact=True).click()
    wait_newer(pg, v)


def test_cube_game_human_doubles_and_the_computer_takes(browser, even_server):
    ctx = browser.new_context(viewport={"width": 1200, "height": 900})
    try:
        pg = ctx.new_page()
        pg.goto(even_server + "/")
        assert not pg.locator("#btn-double").is_visible()
        pg.get_by_label("With cube (money play)").check()
        st = start(pg, "Medium")
        assert st["cube"]["enabled"] and pg.locator('[data-cube="centre"]').is_visible()
        assert pg.locator("#btn-double").is_visible() and pg.locator("#btn-double").is_disabled()
        while not state(pg)["can_double"]:
            click_turn_on_board(pg)
        assert pg.locator("#btn-roll").is_enabled()          # Double sits beside Roll the dice
        press(pg, "Double", pg.locator("#actions"))
        st = state(pg)
        assert st["cube"]["value"] == 2 and st["cube"]["owner"] == "black" and st["turn"] == "white"
        assert "Black takes" in pg.locator("#status").inner_text()           # the live region
        assert pg.locator('[data-cube="black"]').get_attribute("aria-label") == "Cube at 2, owned by Black"
        assert pg.locator("#btn-double").is_disabled() and not pg.locator("#btn-take").is_visible()
        assert pg.locator("#cube-text").inner_text() == "Cube: 2, owned by Black."
        pg.locator("#btn-resign").click()
        assert pg.get_by_role("button", name="Resign a gammon").is_visible()      # a cube game: three offers
        press(pg, "Resign a single game")
        assert state(pg)["result"]["points"] == 2 and "2 points" in pg.locator("#message").inner_text()
    finally:
        ctx.close()


def test_cube_hotseat_double_and_pass_with_the_button_panel(page):
    page.get_by_label("With cube (money play)").check()
    st = start(page, "2 players on this device")
    panel = page.get_by_role("region", name="Button controls")
    while not state(page)["can_double"]:
        click_turn_on_board(page)
    doubler = state(page)["turn"]
    other = "black" if doubler == "white" else "white"
    press(page, "Double", panel)
    st = state(page)
    assert st["phase"] == "doubled" and st["cube"]["offered_by"] == doubler
    assert panel.get_by_role("button", name="Take").is_visible()
    assert page.locator(".cube.offered").get_attribute("aria-label") == f"{doubler.capitalize()} offers the cube at 2"
    assert f"{doubler.capitalize()} doubles to 2" in page.locator("#status").inner_text()
    press(page, "Pass", panel)
    st = state(page)
    assert st["phase"] == "over" and st["result"]["winner"] == doubler and st["result"]["points"] == 1
    assert st["result"]["passed"]
    message = page.locator("#message").inner_text()
    assert message == f"{doubler.capitalize()} wins: {other.capitalize()} passed the double: 1 point"
    assert f"{other.capitalize()} passes" in page.locator("#status").inner_text()
    assert page.locator("#log li").last.inner_text() == f"{other.capitalize()} passes: {doubler.capitalize()} wins 1 point"
