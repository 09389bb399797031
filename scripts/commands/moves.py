"""`tdgammon moves`: every legal play of a roll in gnubg notation, one position or a batch on stdin."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from engine.errors import TdgammonError


def moves_object(position_id: str, dice_text: str | None) -> dict:
    """The JSON object for one (Position ID, roll): position, dice and every play with its
    afterstate ID. dice_text None: the roll the XGID or gnubg ID carries."""
    from engine.formats.xgid import position_and_roll
    from engine.notation import legal_plays

    position, dice = position_and_roll(position_id, dice_text)
    plays = legal_plays(position, dice)
    return {"position": position.id, "dice": list(dice),
            "moves": [{"move": play.notation, "afterstate": play.after.id} for play in plays]}


def run_batch(lines: TextIO, out: TextIO) -> None:
    """One JSON object per `POSITION_ID DICE` line, flushed as it is written.

    Blank lines are skipped. A bad line raises TdgammonError naming its line number;
    the lines before it have been written whole, nothing of the bad one.
    """
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            continue
        parts = text.split(None, 1)
        try:
            obj = moves_object(parts[0], parts[1] if len(parts) == 2 else None)
        except TdgammonError as err:
            raise type(err)(f"line {number}: {err}") from err
        out.write(json.dumps(obj) + "\n")
        out.flush()


def _print_text(obj: dict, out: TextIO) -> None:
    d1, d2 = obj["dice"]
    moves = obj["moves"]
    if not moves:
        out.write(f"{obj['position']} {d1}-{d2}: no legal play, the turn passes\n")
        return
    out.write(f"{obj['position']} {d1}-{d2}: {len(moves)} legal "
              f"play{'s' if len(moves) != 1 else ''}\n")
    width = max(len(m["move"]) for m in moves)
    for k, m in enumerate(moves, start=1):
        out.write(f"{k:4d}. {m['move']:<{width}}  {m['afterstate']}\n")


def run(args: argparse.Namespace) -> int:
    if args.batch:
        if args.position_id is not None or args.dice is not None:
            raise TdgammonError("--batch reads 'POSITION_ID DICE' lines on stdin; "
                                "give no position or dice on the command line")
        run_batch(sys.stdin, sys.stdout)
        return 0
    if args.position_id is None:
        raise TdgammonError("give POSITION_ID and DICE (e.g. 4HPwATDgc/ABMA 31), or --batch")
    obj = moves_object(args.position_id, args.dice)
    if args.json:
        sys.stdout.write(json.dumps(obj) + "\n")
    else:
        _print_text(obj, sys.stdout)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "moves", help="list every legal play of a roll (gnubg notation and afterstate IDs)",
        description="List every distinct legal play of a roll, as GNU Backgammon generates "
                    "them, in gnubg notation with the Position ID after the play (sides NOT "
                    "swapped: the mover stays on roll in the ID).")
    parser.add_argument("position_id", nargs="?", metavar="POSITION_ID",
                        help="gnubg Position ID (player on roll as gnubg encodes it), gnubg ID or XGID=...")
    parser.add_argument("dice", nargs="?", metavar="DICE",
                        help="the roll: 31, 3-1 or '3 1' (optional when an XGID or gnubg ID carries it)")
    parser.add_argument("--json", action="store_true",
                        help='one JSON object: {"position", "dice", "moves": [{"move", "afterstate"}]}')
    parser.add_argument("--batch", action="store_true",
                        help="read 'POSITION_ID DICE' lines on stdin, write one JSON object per line")
    parser.set_defaults(func=run, small=lambda args: not args.batch)
