"""How much equity players' plays lose, judged by gnubg: a yardstick with far less noise than pits.

The decisions: every turn with two or more legal plays in --games games that a reference
player (default: the shipped model at 1-ply) plays against itself, dice from --seed. The same
seed gives the same decisions, so the players are compared on the same positions and their
difference is paired.

The judge: gnubg at --gnubg-plies (its numbering: 1 = our 2-ply), cubeless. A play is worth
minus gnubg's equity for the opponent on roll after it (the exact result when it ends the
game); a decision's loss is the worth of gnubg's own best play minus the worth of the
player's (0 when they agree; it can dip below 0 where gnubg's move filter missed a play).

Usage: python -m scripts.lab.move_error PLAYER... [--games 50] [--seed 1] [--gnubg-plies 1]
where PLAYER is as in `tdgammon pit` (a checkpoint or built-in evaluator, with @1, @2 or @3;
gnubg:PLIES gives gnubg's own figure for calibration). --filters 8:0.16,4:0.08 judges each
2-ply player once per move filter, on the same decisions; --phases splits each loss into
contact, contact bear-off, race and bear-off decisions; --worst N lists each player's N
costliest decisions.
Learning never sees these numbers: gnubg is only a yardstick.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from engine.errors import TdgammonError
from engine.game import Player, play_game
from engine.notation import PlayList, apply_moves, format_play, play_list
from engine.gnubg.process import GnubgPlayer, GnubgProcess
from engine.pit.harness import SearchPlayer
from engine.pit.players import parse_player_spec
from engine.position import Position
from engine.search import MoveFilter
from engine.pit.stats import ci95
from models.loader import load_evaluator
from models.paths import DEFAULT_MODEL


def decisions_of(reference: Player, games: int, seed: int) -> list[tuple[Position, tuple[int, int], PlayList]]:
    """Every turn with two or more legal plays in `games` self-play games of `reference`."""
    decisions = []
    for game in range(games):
        for turn in play_game(reference, reference, np.random.default_rng([seed, game])).turns:
            plays = play_list(turn.position, turn.dice)
            if len(plays) > 1:
                decisions.append((turn.position, turn.dice, plays))
    return decisions


def build(text: str, filters: list[MoveFilter] | None = None) -> list[Player]:
    """The player(s) of one PLAYER argument: a 2- or 3-ply player once per (first-stage) move filter asked for."""
    spec = parse_player_spec(text)
    if spec.kind == "gnubg":  # gnubg at fewer plies than the judge: a calibration row
        return [GnubgPlayer(spec.ply)]
    evaluator = load_evaluator(spec.evaluator_spec)
    if spec.ply == 1 or not filters:
        return [SearchPlayer(evaluator, spec.ply, spec.label)]
    return [SearchPlayer(evaluator, spec.ply, f"{spec.label} filter {f.max_moves}:{f.threshold}", f)
            for f in filters]


def parse_filters(text: str) -> list[MoveFilter]:
    """'8:0.16,16:0.32' -> MoveFilters (max moves : equity threshold)."""
    try:
        return [MoveFilter(int(n), float(t)) for n, t in (item.split(":") for item in text.split(","))]
    except ValueError:
        raise TdgammonError(f"--filters takes MAX:THRESHOLD[,MAX:THRESHOLD...], got {text!r}") from None


class Judge:
    """gnubg's worth of afterstates (mover in row 0), cached by Position ID."""

    def __init__(self, plies: int) -> None:
        self.plies = plies
        self.gnubg = GnubgProcess()
        self.cache: dict[str, float] = {}

    def worth(self, after: Position) -> float:
        if after.game_over():
            return float(after.result())
        key = after.id
        if key not in self.cache:
            self.cache[key] = -self.gnubg.equity(after.swap(), self.plies)
        return self.cache[key]

    def close(self) -> None:
        self.gnubg.close()

    def best(self, position: Position, dice: tuple[int, int]) -> tuple[float, str]:
        """The worth of gnubg's own best play, and that play in notation."""
        moves = self.gnubg.best_moves(position, dice, self.plies)
        steps = [(src - 1, dst - 1) for src, dst in moves]  # points -> indices (bar 24, off -1)
        return self.worth(Position(apply_moves(position.board, moves))), format_play(position.board, steps)


def phase(position: Position) -> str:
    """contact, contact bear-off (the mover all home, the opponent still behind it), race
    (no contact, not all home) or bear-off (both sides all home)."""
    if position.board[:, 6:].sum() == 0:
        return "bear-off"
    if position.is_race():
        return "race"
    return "contact bear-off" if position.board[0, 6:].sum() == 0 else "contact"


PHASES = ("contact", "contact bear-off", "race", "bear-off")


def phase_lines(loss: np.ndarray, phases: list[str]) -> list[str]:
    """Per phase: decisions, mean loss, share of the player's whole loss."""
    lines = []
    for name in PHASES:
        mine = loss[[k for k, p in enumerate(phases) if p == name]]
        if len(mine):
            lines.append(f"  {name}: {len(mine)} decisions, {1000 * mine.mean():.1f} millipoints each, "
                         f"{100 * mine.sum() / loss.sum():.0f}% of the loss")
    return lines


def report(decisions: list, players: list[Player], judge: Judge, args: argparse.Namespace) -> None:
    """One line per player (and per phase with --phases); differences are paired to the first."""
    best_worth, best_play = zip(*(judge.best(position, dice) for position, dice, _ in decisions))
    best = np.array(best_worth)
    phases = [phase(position) for position, _, _ in decisions]
    print(f"{len(decisions)} decisions from {args.games} self-play games of {args.reference} "
          f"(seed {args.seed}); judge: gnubg {args.gnubg_plies}-ply, cubeless")
    first = None
    for player in players:
        chosen = [plays[player.choose(position, dice, plays)] for position, dice, plays in decisions]
        loss = np.array([best[k] - judge.worth(play.after) for k, play in enumerate(chosen)])
        line = (f"{player.name}: {1000 * loss.mean():.1f} ± {1000 * ci95(loss):.1f} millipoints "
                f"lost per decision, {100 * np.mean(np.abs(loss) < 1e-9):.1f}% as gnubg")
        if first is None:
            first = loss
        else:
            diff = loss - first
            line += f"; minus the first: {1000 * diff.mean():+.1f} ± {1000 * ci95(diff):.1f}"
        print(line, flush=True)
        if args.phases:
            print("\n".join(phase_lines(loss, phases)), flush=True)
        for k in np.argsort(-loss)[:args.worst]:
            position, dice, _ = decisions[k]
            print(f"  {1000 * loss[k]:.0f} mp: {position.id} {dice[0]}{dice[1]} ({phases[k]}): "
                  f"played {chosen[k].notation}, gnubg {best_play[k]}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("players", nargs="+", metavar="PLAYER")
    parser.add_argument("--reference", default=f"{DEFAULT_MODEL}@1",
                        help="the player whose self-play games give the decisions")
    parser.add_argument("--games", type=int, default=50, help="self-play games giving the decisions (50: about 2,000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--gnubg-plies", type=int, default=1, choices=(0, 1, 2))
    parser.add_argument("--filters", metavar="MAX:THRESHOLD,...",
                        help="judge each 2-ply player once per 2-ply move filter (default: 8:0.16)")
    parser.add_argument("--phases", action="store_true",
                        help="also split each player's loss by phase: contact, contact bear-off, "
                             "race, bear-off")
    parser.add_argument("--worst", type=int, default=0, metavar="N",
                        help="also list each player's N costliest decisions (Position ID, dice, plays)")
    args = parser.parse_args(argv)
    try:
        filters = parse_filters(args.filters) if args.filters else None
        players = [player for text in args.players for player in build(text, filters)]
        decisions = decisions_of(build(args.reference)[0], args.games, args.seed)
        judge = Judge(args.gnubg_plies)
    except TdgammonError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        report(decisions, players, judge, args)
    finally:
        for closable in [judge, *players]:
            getattr(closable, "close", lambda: None)()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
