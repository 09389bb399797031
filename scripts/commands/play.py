"""`tdgammon play`: serve the web game (vs the computer, hot-seat, or a friend by link)."""

from __future__ import annotations

import argparse
import socket
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
    parser.add_argument("--db", default=None, metavar="PATH",
                        help="the SQLite file the games are kept in, so a restart loses nothing "
                             "(default: $XDG_DATA_HOME/tdgammon/games.sqlite3, i.e. "
                             "~/.local/share/tdgammon/games.sqlite3)")
    parser.add_argument("--open", action="store_true", help="open the page in the default browser")
    parser.set_defaults(func=run)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or one TdgammonError line (port in use, no such
    address): bound before anything is announced, and handed to uvicorn as it is."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as err:
        raise TdgammonError(f"cannot listen on {host}:{port}: {getattr(err, 'strerror', None) or err}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as err:
        sock.close()
        raise TdgammonError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    sock.set_inheritable(True)
    return sock


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from scripts.webapp.computer import load_game_evaluator, warm_up
    from scripts.webapp.server import create_app
    from scripts.webapp.store import open_store_path

    if not 0 < args.port < 65536:
        raise TdgammonError(f"--port must be 1..65535, got {args.port}")
    db = open_store_path(args.db)
    sock = bind(args.host, args.port)
    with sock:
        evaluator = load_game_evaluator(args.model)
        warm_up(evaluator)  # before the URL is shown: no slow first move
        app = create_app(evaluator, db=db)
        shown = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
        if ":" in shown:
            shown = f"[{shown}]"
        url = f"http://{shown}:{args.port}/"
        print(f"tdgammon play: serving on {url} (computer: {getattr(evaluator, 'name', 'model')}; "
              f"games kept in {db}; API docs at {url}docs); Ctrl-C stops", flush=True)
        if args.open:
            threading.Timer(1.0, webbrowser.open, args=(url,)).start()
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        server.run(sockets=[sock])
    return 0
