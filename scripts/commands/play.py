"""`tdgammon play`: serve the web game (vs the computer, hot-seat, or a friend by link)."""

from __future__ import annotations

import argparse
import threading
import webbrowser

from engine.errors import TdgammonError


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "play", help="play in the browser: vs the computer, two players on one device, or a friend by link",
        description="Start the web game server and print its URL. The computer plays Easy "
                    "(1-ply with noise), Medium (1-ply) or Hard (2-ply over the 21 rolls). "
                    "1-ply scores every play with the network and takes the best (gnubg's 0-ply); "
                    "2-ply also averages over the opponent's 21 rolls (gnubg's 1-ply).")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1; 0.0.0.0 to play a friend on the LAN)")
    parser.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    parser.add_argument("--model", default=None,
                        help="the computer's model: a checkpoint path or an evaluator spec such as "
                             "pubeval (default: models/default.pt when it exists, else pubeval)")
    parser.add_argument("--open", action="store_true", help="open the page in the default browser")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from scripts.webapp.computer import load_game_evaluator
    from scripts.webapp.server import create_app

    if not 0 < args.port < 65536:
        raise TdgammonError(f"--port must be 1..65535, got {args.port}")
    evaluator = load_game_evaluator(args.model)
    app = create_app(evaluator)
    shown = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    url = f"http://{shown}:{args.port}/"
    print(f"tdgammon play: serving on {url} (computer: {getattr(evaluator, 'name', 'model')}; "
          f"API docs at {url}docs); Ctrl-C stops", flush=True)
    if args.open:
        threading.Timer(1.0, webbrowser.open, args=(url,)).start()
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    except OSError as err:
        raise TdgammonError(f"cannot listen on {args.host}:{args.port}: {err.strerror or err}") from None
    return 0
