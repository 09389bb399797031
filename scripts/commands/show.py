"""`tdgammon show`: draw a position as an ASCII board with pip counts, and print its IDs."""

from __future__ import annotations

import argparse
import sys



def run(args: argparse.Namespace) -> int:
    from engine.formats.ascii_board import render
    from engine.formats.matchid import MatchState
    from engine.formats.xgid import decode_xgid, encode_xgid, looks_like_xgid
    from engine.position import Position

    if looks_like_xgid(args.position_id):
        board, state = decode_xgid(args.position_id)
        position = Position(board)
    else:
        position = Position.from_id(args.position_id)
        state = MatchState(on_roll=1, turn=1)
    sys.stdout.write(render(position) + "\n")
    if args.xgid:
        print(f" {encode_xgid(position.board, state)}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "show", help="draw a position as an ASCII board with pip counts",
        description="Draw a gnubg Position ID or an XGID like gnubg's `show board`: the player on roll "
                    "is X (points 1-12 along the bottom), the opponent O.")
    parser.add_argument("position_id", metavar="POSITION_ID", help="gnubg Position ID or XGID=...")
    parser.add_argument("--xgid", action="store_true",
                        help="also print the position's XGID (money, centred cube unless an XGID said otherwise)")
    parser.set_defaults(func=run, small=lambda args: True)
