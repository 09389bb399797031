"""`tdgammon eval POSITION_ID`: the 5 probabilities and cubeless equity of the side on roll, before its roll.

Layout, so further sections (the cube) slot in: `evaluate_record` computes one JSON-ready
dict per position, `format_text` renders it for people, `run` does input and output.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from engine.errors import TdgammonError
from scripts.commands.cube_options import (ME_PLAYER, add_cube_arguments, cube_from_args, cube_options_given,
                                          cube_report, format_cube)
from scripts.commands.options import add_evaluator_arguments, evaluator_from_args, one_position_at_1ply, read_batch

if TYPE_CHECKING:
    from engine.cube.equity import CubeInfo
    from engine.evaluator import Evaluator
    from engine.formats.matchid import MatchState
    from engine.position import Position

PROB_NAMES = ("win", "win gammon", "win backgammon", "lose gammon", "lose backgammon")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "eval", help="probabilities and cubeless equity of a position (side on roll, before the roll)",
        description="Evaluate a position for the side on roll, before it rolls: P(win), P(win gammon), "
                    "P(win backgammon), P(lose gammon), P(lose backgammon) and the cubeless money equity.")
    parser.add_argument("position", nargs="?", metavar="POSITION_ID", help="gnubg Position ID or XGID=... (omit with --batch)")
    add_evaluator_arguments(parser)
    add_cube_arguments(parser)
    parser.set_defaults(func=run, small=one_position_at_1ply)


def parse_line(line: str) -> tuple[Position, MatchState | None]:
    """A batch line: one Position ID (or gnubg ID, or XGID), and the match state it carries."""
    from engine.formats.xgid import position_and_state

    fields = line.split()
    if len(fields) != 1:
        raise TdgammonError(f"expected one Position ID, got {line.strip()!r}")
    return position_and_state(fields[0])


def evaluate_record(position: Position, evaluator: Evaluator, ply: int, cube: CubeInfo | None = None,
                    me: int = ME_PLAYER) -> dict:
    """{"position", "probs", "equity"} for one position, JSON-ready; with a cube, also its
    "cube" object (cube_report), from the same cubeless probabilities."""
    from engine.evaluator import equity
    from engine.search import evaluate_position

    probs = evaluate_position(position.board, evaluator, ply)
    record = {"position": position.id, "probs": [round(float(p), 6) for p in probs],
              "equity": round(float(equity(probs)), 6)}
    if cube is not None:
        record["cube"] = cube_report(position, evaluator, ply, cube, me, probs)
    return record


def format_text(record: dict, evaluator: Evaluator, ply: int) -> str:
    """People's view of evaluate_record's dict."""
    lines = [f"Position {record['position']}  ({evaluator.name}, {ply}-ply, side on roll, before the roll)"]
    width = max(len(name) for name in PROB_NAMES)
    for name, p in zip(PROB_NAMES, record["probs"]):
        lines.append(f"  {name:<{width}}  {p:6.4f}")
    lines.append(f"  {'cubeless equity':<{width}}  {record['equity']:+.4f}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    cube_from_args(args)  # bad cube options are refused before any position is read
    if args.batch:
        if args.position is not None:
            raise TdgammonError("give either a POSITION_ID or --batch, not both")
        evaluator = evaluator_from_args(args)
        for position, carried in read_batch(sys.stdin, parse_line):
            print(json.dumps(evaluate_record(position, evaluator, args.ply, *cube_from_args(args, carried))))
        return 0
    if args.position is None:
        raise TdgammonError("a POSITION_ID is required (or --batch to read them from stdin)")

    from engine.formats.xgid import position_and_state

    position, carried = position_and_state(args.position)
    evaluator = evaluator_from_args(args)
    record = evaluate_record(position, evaluator, args.ply, *cube_from_args(args, carried))
    if args.json:  # the cube object when asked about the cube (--batch always has it)
        asked = cube_options_given(args) or carried is not None
        print(json.dumps(record if asked else {k: v for k, v in record.items() if k != "cube"}))
    else:
        print(format_text(record, evaluator, args.ply) + "\n" + format_cube(record["cube"]))
    return 0
