"""The --html page of `tdgammon analyse` opens from disk in Chromium: games, plots, marks, no errors."""


import pytest

sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed")

from scripts.cli import main  # noqa: E402
from tests.conftest import CHROMIUM  # noqa: E402
from tests.test_analysis import ONE_GAME  # noqa: E402

pytestmark = pytest.mark.browser


def test_html_page_renders_offline(tmp_path, capsys):
    mat = tmp_path / "g.mat"
    mat.write_text(ONE_GAME + ONE_GAME.replace(" 0 point match\n\n Game 1", " Game 2").replace("b : 0\n", "b : 1\n", 1))
    html = tmp_path / "g.html"
    assert main(["analyse", str(mat), "--ply", "1", "--evaluator", "pubeval", "--no-progress",
                 "--html", str(html)]) == 0
    capsys.readouterr()
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page()
        errors, requests = [], []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(html.resolve().as_uri())
        assert page.locator("section.game").count() == 2
        assert page.locator("section.game svg polyline").count() == 2
        box = page.locator("section.game svg").first.bounding_box()
        assert box["width"] > 300 and box["height"] > 100
        # the early double is marked in the table and drawn in the plot's colours
        assert page.locator("tr.very-bad").count() >= 2
        assert page.locator("#players th").count() == 3
        assert "Rating" in page.locator("#players").inner_text()
        browser.close()
    assert errors == [] and all(url.startswith("file:") for url in requests)
