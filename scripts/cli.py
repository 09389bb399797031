"""The `tdgammon` command: one subcommand per module `scripts/commands/<name>.py`.

Each module defines `register(subparsers)`, which adds its parser and sets `func`.
Arguments are parsed only here; every user mistake surfaces as a TdgammonError
(a ValueError subclass) and becomes one line on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from engine.errors import TdgammonError

COMMANDS = ("bench", "eval", "hint", "train", "moves", "show", "play", "pit", "serve", "rollout")

PLY_HELP = ("1-ply scores every play with the network and takes the best (gnubg calls this "
            "0-ply); 2-ply also averages over the opponent's 21 rolls of its best reply "
            "(gnubg's 1-ply); 3-ply looks one roll deeper still (gnubg's 2-ply), about 40 "
            "times slower, for analysis; cube decisions stop at 2-ply")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tdgammon",
        description="TD-Gammon-style backgammon engine: rules, evaluation, training, play.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"scripts.commands.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result = args.func(args)
    except TdgammonError as err:
        print(f"tdgammon {args.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"tdgammon {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
