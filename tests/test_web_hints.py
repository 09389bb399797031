"""Hints in a friend game, in Chromium: off unless both players allow them, either may withdraw,
shown to both players and to a spectator, announced in the live region and logged."""

from __future__ import annotations

import pytest

from tests.test_web_browser import browser, ctx, serve_seeded, start, state, version, wait_newer  # noqa: F401  (fixtures)

from engine.evaluator import RandomEvaluator  # noqa: E402

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def url():
    yield from serve_seeded(RandomEvaluator(5), 1200, 5)


def consent(pg, allow: bool) -> None:
    v = version(pg)
    box = pg.get_by_label("Allow hints in this game")
    box.check() if allow else box.uncheck()
    wait_newer(pg, v)


def test_friend_hints_need_both_players_and_either_may_withdraw(ctx, browser, url):
    host = ctx.new_page()
    host.goto(url + "/")
    start(host, "Play a friend (send a link)")
    link = host.locator("#friend-link").input_value()
    guest_ctx, third_ctx = browser.new_context(), browser.new_context()
    try:
        guest = guest_ctx.new_page()
        guest.goto(link)
        guest.get_by_role("button", name="Join").click()
        guest.wait_for_function("window.tdg.state && window.tdg.state.you.length === 1")
        host.wait_for_function("window.tdg.state.phase === 'opening'")
        v = version(host)
        host.get_by_role("button", name="Roll the dice").first.click()
        wait_newer(host, v)
        mover, other = (host, guest) if state(host)["turn"] == "white" else (guest, host)
        mover.wait_for_function("window.tdg.state.legal_steps.length > 0")
        assert not mover.locator("#btn-hint").is_visible()
        assert "Hints are off unless both players allow them" in other.locator("#hint-consent-text").inner_text()

        consent(mover, True)                              # one player alone: still off
        name = state(mover)["turn"].capitalize()
        other.wait_for_function("window.tdg.state.log.some(e => e.hints === 'allow')")
        assert f"{name} allows hints" in other.locator("#status").inner_text()   # announced to the other
        assert f"{name} allows them" in other.locator("#hint-consent-text").inner_text()
        assert not mover.locator("#btn-hint").is_visible()

        consent(other, True)                              # both: Hint is on for the mover
        mover.wait_for_function("window.tdg.state.hints.on && window.tdg.state.can_hint")
        assert "both agree" in mover.locator("#status").inner_text()
        assert "both agree" in mover.locator("#log").inner_text()
        assert "Hints are on" in mover.locator("#hint-consent-text").inner_text()
        mover.get_by_role("button", name="Hint").click()
        mover.wait_for_selector("#hint-list li")
        assert "equity" in mover.locator("#hint-list li").first.inner_text()

        third = third_ctx.new_page()                      # a spectator sees the agreement, cannot consent
        third.goto(link.replace("?join=", "?game="))
        third.wait_for_function("window.tdg.state !== null")
        assert "Hints are on" in third.locator("#hint-consent-text").inner_text()
        assert not third.get_by_label("Allow hints in this game").is_visible()

        consent(other, False)                             # either may withdraw: off again for both
        mover.wait_for_function("!window.tdg.state.hints.on")
        assert not mover.locator("#btn-hint").is_visible() and not mover.locator("#hint").is_visible()
        assert "no longer allows hints" in mover.locator("#status").inner_text()
        assert mover.get_by_label("Allow hints in this game").is_checked()
        assert not other.get_by_label("Allow hints in this game").is_checked()
        res = mover.evaluate(f"fetch('/api/games/{state(mover)['game_id']}/hint?token=' + window.tdg.token)"
                             ".then(async r => [r.status, (await r.json()).error])")
        assert res[0] == 409 and "both players allow" in res[1]
    finally:
        guest_ctx.close()
        third_ctx.close()
