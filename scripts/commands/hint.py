"""`tdgammon hint POSITION_ID DICE`: the legal plays of a roll ranked best first, with equities and probabilities."""

from __future__ import annotations

import argparse
import json
import sys

from typing import TYPE_CHECKING

from engine.errors import TdgammonError
from scripts.commands.options import add_evaluator_arguments, evaluator_from_args, one_position_at_1ply, read_batch

if TYPE_CHECKING:
    from engine.evaluator import Evaluator
    from engine.position import Position


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "hint", help="rank the legal plays of a roll",
        description="Rank every legal play of a roll best first: gnubg notation, cubeless equity, "
                    "the difference to the best play and the 5 probabilities (P(win), P(win gammon), "
                    "P(win backgammon), P(lose gammon), P(lose backgammon)) for the side that moves. "
                    "At 2-ply the candidates of the move filter (up to 8 within 0.16 of the best) "
                    "come first, valued at 2-ply; the other plays follow at their 1-ply value. "
                    "At 3-ply the best of those (up to 2 within 0.04 of the best) come first, valued at 3-ply.")
    parser.add_argument("position", nargs="?", metavar="POSITION_ID", help="gnubg Position ID, gnubg ID or XGID=... (omit with --batch)")
    parser.add_argument("dice", nargs="?", metavar="DICE",
                        help="the roll, e.g. 31 or 3-1 (omit with --batch, or when an XGID or gnubg ID carries it)")
    parser.add_argument("--top", type=int, default=None, metavar="N", help="show only the N best plays (default: all)")
    add_evaluator_arguments(parser)
    parser.set_defaults(func=run, small=one_position_at_1ply)


def parse_line(line: str) -> tuple[Position, tuple[int, int]]:
    """A batch line: `POSITION_ID DICE` (DICE as on the command line, e.g. 31, 3-1 or 3 1;
    optional when the ID carries the roll)."""
    from engine.formats.xgid import position_and_roll

    fields = line.split(maxsplit=1)  # read_batch passes no blank line
    return position_and_roll(fields[0], fields[1] if len(fields) == 2 else None)


def hint_record(position: Position, dice: tuple[int, int], evaluator: Evaluator, ply: int,
                top: int | None) -> dict:
    """{"position", "dice", "moves": [{"move", "afterstate", "equity", "probs", "ply"}, ...]}, best first.

    afterstate is the Position ID after the play with sides NOT swapped (as `moves --batch`).
    """
    from engine.notation import format_play
    from engine.position import Position
    from engine.search import rank_plays

    plays = rank_plays(position.board, dice, evaluator, ply)
    if top is not None:
        plays = plays[:top]
    moves = [{"move": format_play(position.board, p.steps),
              "afterstate": Position(p.afterstate).id,
              "equity": round(p.equity, 6),
              "probs": [round(float(x), 6) for x in p.probs],
              "ply": p.ply} for p in plays]
    return {"position": position.id, "dice": list(dice), "moves": moves}


def format_text(record: dict, evaluator: Evaluator, ply: int) -> str:
    d1, d2 = record["dice"]
    lines = [f"Position {record['position']}  roll {d1}{d2}  ({evaluator.name}, {ply}-ply)"]
    moves = record["moves"]
    if not moves:
        lines.append("  no legal play: the turn passes")
        return "\n".join(lines)
    width = max(12, max(len(m["move"]) for m in moves))
    lines.append(f"  {'#':>3} {'ply':>3}  {'move':<{width}}  {'equity':>7}  {'diff':>7}  "
                 f"{'win':>6} {'w g':>6} {'w bg':>6} {'l g':>6} {'l bg':>6}")
    best = moves[0]["equity"]
    for rank, m in enumerate(moves, start=1):
        diff = "" if rank == 1 else f"{m['equity'] - best:+.4f}"
        probs = " ".join(f"{p:6.4f}" for p in m["probs"])
        lines.append(f"  {rank:>3} {m['ply']:>3}  {m['move']:<{width}}  {m['equity']:+.4f}  {diff:>7}  {probs}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.top is not None and args.top < 1:
        raise TdgammonError(f"--top must be at least 1, got {args.top}")
    if args.batch:
        if args.position is not None:
            raise TdgammonError("give either POSITION_ID DICE or --batch, not both")
        evaluator = evaluator_from_args(args)
        items = read_batch(sys.stdin, parse_line)
        for position, dice in items:
            print(json.dumps(hint_record(position, dice, evaluator, args.ply, args.top)))
        return 0
    if args.position is None:
        raise TdgammonError("POSITION_ID and DICE are required (or --batch to read them from stdin)")
    from engine.formats.xgid import position_and_roll

    position, dice = position_and_roll(args.position, args.dice)
    evaluator = evaluator_from_args(args)
    record = hint_record(position, dice, evaluator, args.ply, args.top)
    print(json.dumps(record) if args.json else format_text(record, evaluator, args.ply))
    return 0
