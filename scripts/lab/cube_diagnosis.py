"""Where does the cube error come from? The probabilities, or the cube logic?

On the cube benchmark's decisions (tests/data/cube-benchmark.json) it prints:

- the mean signed and absolute difference of our P(win), P(win gammon) and P(lose
  gammon) before the roll, at 1-ply and 2-ply, from the judge's (gnubg 2-ply cubeless),
  overall and for the decisions where the judge says Double/take or Double/pass, then by
  position type (bench cube's: race, gammonish, contact) for the judge's P(win) in the
  doubling window 0.6-0.9 (the window scripts.lab.cube_calibration compares with our
  own rollouts);
- the error of our 1-ply cube logic (Janowski) fed with the judge's own probabilities:
  what is left when the probabilities are right, the logic's share of the error;
- the error of our 1-ply and 2-ply decisions, for scale.

A diagnosis only: nothing here is fitted to gnubg.

Usage: python -m scripts.lab.cube_diagnosis [--model M] [--set money] [--limit N]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from engine.cube.equity import cube_decision, cube_efficiency
from engine.errors import TdgammonError
from engine.search import evaluate_position
from models.loader import load_evaluator
from scripts.bench.cube import BENCHMARK, TYPES, load_cases, position_type, score, score_player, summary

WINDOW = (0.6, 0.9)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None)
    parser.add_argument("--set", default="money")
    parser.add_argument("--data", default=str(BENCHMARK))
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        cases = load_cases(args.data, args.set)
        evaluator = load_evaluator(args.model)
    except TdgammonError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.limit:
        cases = cases[:args.limit]
    judge = np.array([c.probs for c in cases])
    classes = np.array([score(c, False, True).judge_action for c in cases])
    types = np.array([position_type(c) for c in cases])
    inside = (judge[:, 0] >= WINDOW[0]) & (judge[:, 0] <= WINDOW[1])
    for ply in (1, 2):
        ours = np.array([evaluate_position(c.position.board, evaluator, ply) for c in cases])
        diff = ours - judge
        for name, mask in (("all", np.ones(len(cases), bool)),
                           ("Double, take", classes == "Double, take"),
                           ("Double, pass", classes == "Double, pass"),
                           *((f"{t}, window", (types == t) & inside) for t in TYPES)):
            if not mask.any():
                continue
            d = diff[mask]
            print(f"{ply}-ply vs judge, {name:<17} n={mask.sum():<4} "
                  f"P(win) {d[:, 0].mean():+.4f} (|{np.abs(d[:, 0]).mean():.4f}|)  "
                  f"P(wg) {d[:, 1].mean():+.4f} (|{np.abs(d[:, 1]).mean():.4f}|)  "
                  f"P(lg) {d[:, 3].mean():+.4f} (|{np.abs(d[:, 3]).mean():.4f}|)")
    logic = []
    for c in cases:
        d = cube_decision(np.array(c.probs), c.cube, cube_efficiency(c.position.board))
        logic.append(score(c, d.double, d.response != "pass"))
    rows = (("Janowski on the judge's probabilities", summary(logic)),
            ("ours at 1-ply", summary(score_player(cases, evaluator, 1))),
            ("ours at 2-ply", summary(score_player(cases, evaluator, 2))))
    for label, s in rows:
        print(f"{label}: {s['mEMG']:.2f} mEMG/decision (doubler {s['doubler']:.2f}, taker {s['taker']:.2f}), "
              f"wrong {s['wrong']}; " + "; ".join(f"{j} -> {a}: {n}" for j, a, n in s["confusions"][:4]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
