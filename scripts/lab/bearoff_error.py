"""How much a network loses in bear-off races, judged by the exact bear-off database.

For random bear-off races (both sides home, one checker or more off each) and random
rolls, compare the play the network picks at 1-ply with the play the database picks:
the mean equity lost per decision (millipoints) and the mean absolute error of the
network's P(win). Usage: python -m scripts.lab.bearoff_error [--model PATH] [--decisions N]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from engine import bearoff
from engine.errors import CheckpointError
from engine.evaluator import N_OUTPUTS, equity
from engine.movegen import generate
from models.checkpoint import load_members, play_net
from models.paths import DEFAULT_MODEL
from models.inference import NetworkEvaluator


def random_race(rng: np.random.Generator) -> np.ndarray:
    while True:
        board = np.zeros((2, 25), dtype=np.int8)
        for side in range(2):
            for _ in range(int(rng.integers(1, 15))):
                board[side, int(rng.integers(0, 6))] += 1
        if bearoff.exact_race(board):
            return board


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEFAULT_MODEL))
    parser.add_argument("--decisions", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    try:
        members = load_members(args.model)
    except CheckpointError as err:
        print(f"bearoff_error: {err}", file=sys.stderr)
        return 2
    raw = NetworkEvaluator(play_net(members), bearoff=False)
    rng = np.random.default_rng(args.seed)
    losses, errors, decisions = [], [], 0
    while decisions < args.decisions:
        board = random_race(rng)
        d1, d2 = int(rng.integers(1, 7)), int(rng.integers(1, 7))
        afterstates, _ = generate(board, d1, d2)
        keep = np.array([bearoff.exact_race(a) for a in afterstates])
        if len(afterstates) < 2 or not keep.all():
            continue  # a play that ends the game or leaves the table: nothing to compare
        net_probs = raw.evaluate(afterstates)
        exact = bearoff.apply(afterstates, np.zeros((len(afterstates), N_OUTPUTS)))
        exact_eq = equity(exact)
        losses.append(exact_eq.max() - exact_eq[int(np.argmax(equity(net_probs)))])
        errors.extend(np.abs(net_probs[:, 0] - exact[:, 0]))
        decisions += 1
    games = sum(m.games_trained for m in members)
    print(f"model {args.model} ({games} games trained), {decisions} bear-off decisions")
    print(f"mean |P(win) error| of the network: {np.mean(errors):.4f}")
    print(f"bearoff_error: {1000 * np.mean(losses):.1f} millipoints lost per decision "
          f"({100 * np.mean(np.array(losses) > 1e-9):.1f}% of decisions differ from the database)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
