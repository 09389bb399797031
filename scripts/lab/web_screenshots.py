"""The web game's screenshots in docs/, remade from the running app in Chromium.

    python -m scripts.lab.web_screenshots [--out docs] [--model SPEC] [--seed N]

A game against the computer (Medium, with the cube) is played a few turns by clicks with
seeded dice, then shot at 1280x800 (top-down and angled views), as Black (the board turned),
on a phone (390x844) and on the position page. Each PNG is reduced to a 256-colour palette
(Pillow) so it stays small. Needs the `test` extra (Playwright) and Chromium.
"""

from __future__ import annotations

import argparse
import os
import socket
import threading
import time
from pathlib import Path

POSITION = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10"
CHROMIUM = os.environ.get("TDGAMMON_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]


def serve(app) -> tuple[str, object]:
    """The app on a free loopback port in a thread: (its URL, the uvicorn server)."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server


def wait_newer(pg, version: int) -> None:
    pg.wait_for_function(f"window.tdg.state && window.tdg.state.version > {version} && !window.tdg.busy",
                         timeout=60000)


def one_action(pg) -> None:
    """Roll, play the first legal step by pressing the board, or confirm."""
    st = pg.evaluate("window.tdg.state")
    if st["can_take"]:
        pg.locator("#btn-take").click()
    elif st["can_roll"]:
        pg.locator("[data-dice]").click()
    elif st["legal_steps"]:
        if pg.locator("[data-to]").count() == 0:
            pg.locator(".ring").first.click()
        pg.locator("[data-to]").first.click()
    elif st["can_confirm"]:
        pg.locator("#btn-confirm").click()
    else:
        raise RuntimeError(f"nothing to do: {st['message']}")
    wait_newer(pg, st["version"])


def play_until_selected(pg, turns: int) -> None:
    """Play `turns` of your turns, then roll and press a checker so its destinations show."""
    played = 0
    while True:
        st = pg.evaluate("window.tdg.state")
        if st["phase"] == "move" and st["turn"] in st["you"] and st["legal_steps"] and not st["steps_taken"]:
            if played == turns:
                if pg.locator("[data-to]").count() == 0:
                    pg.locator(".ring").first.click()
                return
            played += 1
        one_action(pg)


def shrink(path: Path) -> None:
    """A 256-colour palette PNG: a board has few colours, and the file a fraction of the size."""
    try:
        from PIL import Image
    except ImportError:
        return
    Image.open(path).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs"))
    parser.add_argument("--model", default=None, help="the computer's model (default: the shipped one)")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    from scripts.webapp.computer import load_game_evaluator
    from scripts.webapp.game import SequenceDice
    from scripts.webapp.server import create_app

    seeds = iter(range(args.seed, args.seed + 1000))
    app = create_app(load_game_evaluator(args.model), dice_factory=lambda: SequenceDice(seed=next(seeds)),
                     seed=args.seed)
    url, server = serve(app)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            desk = browser.new_page(viewport={"width": 1280, "height": 800})
            desk.goto(url + "/")
            desk.get_by_label("With cube (money play)").check()
            desk.get_by_role("button", name="Medium", exact=True).click()
            desk.wait_for_function("window.tdg.state")
            play_until_selected(desk, 4)
            desk.evaluate("window.scrollTo(0, 0)")
            desk.screenshot(path=str(args.out / "board-cube.png"))
            desk.locator("#view-angled").click()
            desk.screenshot(path=str(args.out / "board-angled.png"))
            desk.locator("#view-top").click()

            black = browser.new_page(viewport={"width": 1280, "height": 800})
            black.goto(url + "/")
            black.get_by_role("button", name="Play Black · Medium").click()
            black.wait_for_function("window.tdg.state")
            play_until_selected(black, 3)
            black.evaluate("window.scrollTo(0, 0)")
            black.screenshot(path=str(args.out / "board-top-down.png"))

            phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                                     device_scale_factor=2)
            phone.goto(url + "/")
            phone.get_by_role("button", name="Medium", exact=True).click()
            phone.wait_for_function("window.tdg.state")
            play_until_selected(phone, 2)
            phone.locator("#boardwrap").scroll_into_view_if_needed()
            phone.screenshot(path=str(args.out / "board-phone.png"))

            pos = browser.new_page(viewport={"width": 1280, "height": 900})
            pos.goto(url + "/position")
            pos.get_by_label("Position ID or XGID").fill(POSITION)
            pos.get_by_role("button", name="Show").click()
            pos.wait_for_selector("#plays tbody tr")
            pos.screenshot(path=str(args.out / "position.png"), full_page=True)
            browser.close()
    finally:
        server.should_exit = True
    for name in ("board-cube.png", "board-angled.png", "board-top-down.png", "board-phone.png", "position.png"):
        path = args.out / name
        shrink(path)
        print(f"{path}: {path.stat().st_size // 1024} KB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
