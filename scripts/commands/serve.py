"""`tdgammon serve --gnubg HOST:PORT`: play for gnubg through its external-player protocol.

Listen on a loopback address; in gnubg, `set player 0 external HOST:PORT` connects and
sends one FIBS board line per decision of that player. See engine/gnubg/extbot.py for the answers.

Each connection gets its own thread, at most --concurrent at once (more wait in the listen
backlog until one ends); the bot evaluates one line at a time (one lock: the evaluator is
not known to be thread-safe, and two cores gain nothing from more). A connection idle for
--idle-timeout seconds is closed. A line longer than MAX_LINE bytes is answered
`Error: ...` and skipped up to its newline; the connection keeps serving.
"""

from __future__ import annotations

import argparse
import math
import socket
import sys
import threading
from typing import TYPE_CHECKING

from engine.errors import TdgammonError
from scripts.cli import MAX_PLY, PLY_HELP

if TYPE_CHECKING:
    from engine.gnubg.extbot import ExternalBot


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


MAX_LINE = 4096
"""Longest board line read, in bytes (gnubg's are about 150)."""
IDLE_TIMEOUT = 900.0
"""Seconds a connection may stay silent before it is closed (gnubg thinks between our turns)."""


def serve_connection(conn: socket.socket, bot: ExternalBot, log=None, lock=None,
                     max_line: int = MAX_LINE) -> None:
    """Answer board lines on one connection until gnubg closes it.

    `lock` (shared by the connections of one server) serialises the bot; a line longer
    than `max_line` bytes gets `Error: ...` and is skipped through its newline.
    """
    buf = b""
    skipping = False     # inside a too-long line: drop bytes until its newline
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            return
        buf += chunk.replace(b"\x00", b"")
        while True:
            end = buf.find(b"\n")
            if end < 0:
                if len(buf) > max_line:
                    if not skipping:
                        conn.sendall(f"Error: line longer than {max_line} bytes\n".encode())
                        bot.errors += 1
                    skipping, buf = True, b""
                break
            raw, buf = buf[:end], buf[end + 1:]
            if skipping or len(raw) > max_line:
                if not skipping:
                    conn.sendall(f"Error: line longer than {max_line} bytes\n".encode())
                    bot.errors += 1
                skipping = False
                continue
            line = raw.decode("utf-8", errors="replace").strip()
            if not line:
                continue
            if lock is None:
                answer = bot.respond(line)
            else:
                with lock:
                    answer = bot.respond(line)
            if log is not None:
                print(f"{line} -> {answer}", file=log, flush=True)
            conn.sendall(answer.encode() + b"\n")


def serve_forever(srv: socket.socket, bot: ExternalBot, connections: int = 0, concurrent: int = 8,
                  idle_timeout: float = IDLE_TIMEOUT, log=None, status=sys.stderr,
                  max_line: int = MAX_LINE) -> None:
    """Accept on a listening socket, a thread per connection, at most `concurrent` at once;
    return after `connections` connections have ended (0 = never)."""
    slots = threading.BoundedSemaphore(concurrent)
    lock = threading.Lock()          # the bot: one line at a time
    print_lock = threading.Lock()
    threads = []

    def handle(conn: socket.socket) -> None:
        try:
            with conn:
                if idle_timeout:
                    conn.settimeout(idle_timeout)
                try:
                    serve_connection(conn, bot, log, lock, max_line)
                    why = "closed"
                except TimeoutError:
                    why = f"closed after {idle_timeout:g} s idle"
                except OSError as err:       # reset, broken pipe
                    why = f"closed ({err.strerror or type(err).__name__})"
            if status is not None:
                with print_lock:
                    print(f"tdgammon serve: connection {why} ({bot.plays} plays, "
                          f"{bot.cube_answers} cube answers, {bot.errors} errors)",
                          file=status, flush=True)
        finally:
            slots.release()

    accepted = 0
    while connections == 0 or accepted < connections:
        slots.acquire()
        try:
            conn, _ = srv.accept()
        except BaseException:
            slots.release()
            raise
        accepted += 1
        thread = threading.Thread(target=handle, args=(conn,), daemon=True,
                                  name=f"serve-{accepted}")
        thread.start()
        threads = [t for t in threads if t.is_alive()] + [thread]
    for thread in threads:
        thread.join()


def run(args: argparse.Namespace) -> int:
    from engine.gnubg.extbot import ExternalBot
    from models.loader import load_evaluator

    host, port = parse_host_port(args.gnubg)
    if not 1 <= args.ply <= MAX_PLY:
        raise TdgammonError(f"--ply must be 1 to {MAX_PLY}, got {args.ply}")
    if args.connections < 0:
        raise TdgammonError(f"--connections must be >= 0 (0 = serve forever), got {args.connections}")
    if not 1 <= args.concurrent <= 1024:
        raise TdgammonError(f"--concurrent must be 1..1024, got {args.concurrent}")
    if not math.isfinite(args.idle_timeout) or args.idle_timeout < 0:
        raise TdgammonError(f"--idle-timeout must be >= 0 seconds (0 = none), got {args.idle_timeout}")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as srv:
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            srv.bind((host, port))
        except OSError as err:
            raise TdgammonError(f"cannot listen on {host}:{port}: {err.strerror}") from None
        srv.listen(128)
        bot = ExternalBot(load_evaluator(args.model), ply=args.ply, offer_doubles=args.cube)
        print(f"tdgammon serve: listening on {host}:{srv.getsockname()[1]} "
              f"({bot.evaluator.name}, {args.ply}-ply)", file=sys.stderr, flush=True)
        serve_forever(srv, bot, args.connections, args.concurrent, args.idle_timeout,
                      sys.stdout if args.verbose else None)
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
                        help="exit after this many gnubg connections have ended (0 = serve forever)")
    parser.add_argument("--concurrent", type=int, default=8, metavar="N",
                        help="connections served at once, a thread each (default 8; more wait)")
    parser.add_argument("--idle-timeout", type=float, default=IDLE_TIMEOUT, metavar="SECONDS",
                        help=f"close a connection silent this long (default {IDLE_TIMEOUT:g}; 0 = never)")
    parser.add_argument("--verbose", action="store_true",
                        help="print each board line and the answer on stdout")
    parser.set_defaults(func=run)
