"""`tdgammon show`: draw a position as an ASCII board with pip counts."""

from __future__ import annotations

import argparse
import sys



def run(args: argparse.Namespace) -> int:
    from engine.formats.ascii_board import render
    from engine.position import Position

    sys.stdout.write(render(Position.from_id(args.position_id)) + "\n")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "show", help="draw a position as an ASCII board with pip counts",
        description="Draw a gnubg Position ID like gnubg's `show board`: the player on roll "
                    "is X (points 1-12 along the bottom), the opponent O.")
    parser.add_argument("position_id", metavar="POSITION_ID", help="gnubg Position ID")
    parser.set_defaults(func=run, small=lambda args: True)
