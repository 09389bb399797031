"""Arguments shared by the commands: those of the commands that evaluate (eval, hint:
--ply, --model/--evaluator, --json, --batch, and the reading of a batch from stdin), and
the type of a count that has a least value (at_least: bench, rollout).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

from engine.errors import TdgammonError
from scripts.cli import EVALUATOR_NAMES, MAX_PLY, PLY_HELP

if TYPE_CHECKING:
    from engine.evaluator import Evaluator

T = TypeVar("T")


def at_least(low: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least `low` (a count of games, passes, trials),
    so a bad count is argparse's one-line refusal, not a silent zero or a crash later."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value
    return parse


def add_evaluator_arguments(parser: argparse.ArgumentParser) -> None:
    """--ply, --model / --evaluator, --json, --batch."""
    parser.add_argument("--ply", type=int, choices=range(1, MAX_PLY + 1), default=1, help=f"search depth (default 1): {PLY_HELP}")
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--model", metavar="PATH", default=None,
                     help="checkpoint to evaluate with (default: the shipped models/default.pt)")
    who.add_argument("--evaluator", metavar="NAME", default=None,
                     help=f"a built-in evaluator instead of a network: {', '.join(EVALUATOR_NAMES)} "
                          "(random:SEED for a seeded random player)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--batch", action="store_true",
                        help="read one input per stdin line, print one JSON object per line, "
                             "load the model once; a bad line stops the run before any output")


def evaluator_from_args(args: argparse.Namespace) -> Evaluator:
    """The evaluator the user asked for; a missing or corrupt model raises CheckpointError."""
    from models.loader import load_evaluator

    if args.evaluator is not None:
        name = args.evaluator.partition(":")[0]
        if name not in EVALUATOR_NAMES:
            raise TdgammonError(f"unknown evaluator {args.evaluator!r} (choose from {', '.join(EVALUATOR_NAMES)})")
        return load_evaluator(args.evaluator)
    return load_evaluator(args.model)


def one_position_at_1ply(args: argparse.Namespace) -> bool:
    """A command's `small` test (scripts.cli): one position (no --batch) at 1-ply."""
    return not args.batch and args.ply == 1


def read_batch(lines: Iterable[str], parse: Callable[[str], T]) -> list[T]:
    """Parse every non-blank line first, so a bad line stops the run before any output.

    A parse error becomes `line N: <message>` (1-based line numbers of the input).
    """
    items = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            items.append(parse(line))
        except TdgammonError as err:
            raise type(err)(f"line {number}: {err}") from None
    return items
