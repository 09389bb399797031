"""`tdgammon serve --gnubg HOST:PORT`: play for gnubg through its external-player protocol.

Listen on a loopback address; in gnubg, `set player 0 external HOST:PORT` connects and
sends one FIBS board line per decision of that player. See engine/gnubg/extbot.py for the answers.
"""

from __future__ import annotations

import argparse
import socket
import sys

from engine.errors import TdgammonError
from engine.gnubg.extbot import ExternalBot
from engine.search import MAX_PLY
from scripts.cli import PLY_HELP


def parse_host_port(text: str) -> tuple[str, int]:
    """HOST:PORT with a loopback host (localhost, 127.x.x.x, ::1); TdgammonError otherwise."""
    host, sep, port_text = text.rpartition(":")
    if not sep or not host or not port_text.isdigit() or not 0 <= int(port_text) < 65536:
        raise TdgammonError(f"--gnubg takes HOST:PORT like localhost:8888, got {text!r}")
    host = host.strip("[]")
    try:
        infos = socket.getaddrinfo(host, int(port_text), type=socket.SOCK_STREAM)
    except socket.gaierror as err:
        raise TdgammonError(f"cannot resolve {host!r}: {err}") from None
    for family, _, _, _, addr in infos:
        ip = addr[0]
        if not (ip.startswith("127.") or ip == "::1"):
            raise TdgammonError(f"serve listens on loopback only; {host!r} is {ip}")
    return host, int(port_text)


def serve_connection(conn: socket.socket, bot: ExternalBot, log=None) -> None:
    """Answer board lines on one connection until gnubg closes it."""
    buf = b""
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            return
        buf += chunk.replace(b"\x00", b"")
        while b"\n" in buf:
            raw, buf = buf.split(b"\n", 1)
            line = raw.decode("utf-8", errors="replace").strip()
            if not line:
                continue
            answer = bot.respond(line)
            if log is not None:
                print(f"{line} -> {answer}", file=log, flush=True)
            conn.sendall(answer.encode() + b"\n")


def run(args: argparse.Namespace) -> int:
    from models.loader import load_evaluator

    host, port = parse_host_port(args.gnubg)
    if not 1 <= args.ply <= MAX_PLY:
        raise TdgammonError(f"--ply must be 1 to {MAX_PLY}, got {args.ply}")
    bot = ExternalBot(load_evaluator(args.model), ply=args.ply, offer_doubles=args.cube)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as srv:
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            srv.bind((host, port))
        except OSError as err:
            raise TdgammonError(f"cannot listen on {host}:{port}: {err.strerror}") from None
        srv.listen(1)
        print(f"tdgammon serve: listening on {host}:{srv.getsockname()[1]} "
              f"({bot.evaluator.name}, {args.ply}-ply)", file=sys.stderr, flush=True)
        connections = 0
        while args.connections == 0 or connections < args.connections:
            conn, _ = srv.accept()
            connections += 1
            with conn:
                try:
                    serve_connection(conn, bot, sys.stdout if args.verbose else None)
                except (ConnectionResetError, BrokenPipeError):
                    pass
            print(f"tdgammon serve: connection closed ({bot.plays} plays, "
                  f"{bot.cube_answers} cube answers, {bot.errors} errors)",
                  file=sys.stderr, flush=True)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "serve", help="play for gnubg as its external player (set player N external HOST:PORT)",
        description=__doc__.split("\n\n")[1])
    parser.add_argument("--gnubg", required=True, metavar="HOST:PORT",
                        help="loopback address to listen on, e.g. localhost:8888")
    parser.add_argument("--model", default=None, metavar="SPEC",
                        help="checkpoint path, pubeval or random (default models/default.pt)")
    parser.add_argument("--ply", type=int, default=1, help=PLY_HELP)
    parser.add_argument("--cube", action="store_true",
                        help="offer doubles too (engine.cube.equity decisions); takes and drops always use engine.cube.equity. "
                             "A beaver by gnubg is taken or dropped by engine.cube.equity; gnubg 1.07 then "
                             "pauses until its `play` command")
    parser.add_argument("--connections", type=int, default=0,
                        help="exit after this many gnubg connections (0 = serve forever)")
    parser.add_argument("--verbose", action="store_true",
                        help="print each board line and the answer on stdout")
    parser.set_defaults(func=run)
