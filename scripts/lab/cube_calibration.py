"""Are our win and gammon chances biased near the doubling window? Measured against our own rollouts.

Three steps, each resumable (a step skips what its output file already holds):

1. `positions`: --games games of our model at 1-ply against itself (dice from --seed);
   from each, up to a few positions before the roll where our 1-ply P(win) for the side
   on roll lies in the doubling window (--window, default 0.6-0.9: where doubles, takes
   and passes are decided).
2. `rollout`: each position's 1-ply and 2-ply probabilities and a rollout of it by our
   own engine (1-ply play, quasi-random dice, variance reduction; --truncate plies then
   scored by the network, 0 = to the end), with standard errors.
3. `report`: the mean difference (ours - rollout) of P(win), P(win gammon) and P(lose
   gammon) by position type (race; contact, gammonish when our P(wg) + P(lg) >= 0.2;
   other contact) and by P(win) band, each with its standard error; and what the
   difference does to the take point: the mean shift of the taker's Janowski take
   equity at 1-ply.

4. `bench`: a calibration fitted to the rollouts (by position type: a scale of P(win)'s
   logit, and factors on the favourite's and the underdog's gammon rates), applied to
   every network output, and the cube benchmark scored with it: the benchmark is the
   final yardstick only, nothing is fitted to it.
5. `checker`: the same calibration's checker play on the stored decision set
   (scripts.lab.decision_set), paired with the plain evaluator's.

Self-play only: no other program's games, evaluations or rollouts go in. The benchmark
(tests/data/cube-benchmark.json) is read by `bench` alone, to score the fitted result.

Usage: python -m scripts.lab.cube_calibration positions|rollout|report --run DIR [options]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from scripts.lab.jsonl import append_row, read_rows

GAMMONISH = 0.2
PER_GAME = 4
TYPES = ("race", "gammonish", "contact")


def position_type(board: np.ndarray, probs: np.ndarray) -> str:
    """race, gammonish (contact with P(wg) + P(lg) >= 0.2) or contact."""
    from engine.position import is_race

    if is_race(np.asarray(board)):
        return "race"
    return "gammonish" if probs[1] + probs[3] >= GAMMONISH else "contact"


def make_positions(run: Path, games: int, seed: int, window: tuple[float, float]) -> None:
    """Step 1: self-play games; keep up to PER_GAME positions a game inside the window."""
    from engine.game import play_game
    from engine.pit.harness import SearchPlayer
    from engine.search import evaluate_position
    from models.loader import load_evaluator

    out = run / "positions.jsonl"
    done = {r["game"] for r in read_rows(out)}
    evaluator = load_evaluator(None)
    player = SearchPlayer(evaluator, 1)
    lo, hi = window
    for game in range(games):
        if game in done:
            continue
        record = play_game(player, player, np.random.default_rng([seed, game]))
        inside = []
        for turn in record.turns[1:]:
            board = turn.position.board
            p = evaluate_position(board, evaluator, 1)
            if lo <= p[0] <= hi:
                inside.append((turn.position.id, p))
        rng = np.random.default_rng([seed, game, 1])
        picks = [inside[i] for i in sorted(rng.choice(len(inside), min(PER_GAME, len(inside)), replace=False))]
        append_row(out, {"game": game, "positions": [pid for pid, _ in picks]})
    print(f"{games} games in {out}", file=sys.stderr)


def roll_out(run: Path, trials: int, truncate: int, seed: int, limit: int) -> None:
    """Step 2: our 1-ply, 2-ply and rollout probabilities of every position (resumes by position)."""
    from engine.position import Position
    from engine.rollout.core import RolloutSettings, estimates, run_trials
    from engine.search import evaluate_position
    from models.loader import load_evaluator

    out = run / "rollouts.jsonl"
    done = {r["position"] for r in read_rows(out)}
    todo = [pid for r in read_rows(run / "positions.jsonl") for pid in r["positions"] if pid not in done]
    if limit:
        todo = todo[:max(0, limit - len(done))]
    evaluator = load_evaluator(None)
    settings = RolloutSettings(trials=trials, truncate=truncate, seed=seed, batch=trials)
    for i, pid in enumerate(todo):
        board = np.ascontiguousarray(Position.from_id(pid).board)
        start = time.process_time()
        p1 = evaluate_position(board, evaluator, 1)
        p2 = evaluate_position(board, evaluator, 2)
        per_trial = estimates(run_trials(board, evaluator, settings, 0, trials), settings)[0]
        append_row(out, {"position": pid, "type": position_type(board, p1),
                      "ply1": [round(float(v), 5) for v in p1], "ply2": [round(float(v), 5) for v in p2],
                      "rollout": [round(float(v), 5) for v in per_trial.mean(axis=0)],
                      "se": [round(float(v), 5) for v in per_trial.std(axis=0, ddof=1) / np.sqrt(trials)],
                      "trials": trials, "truncate": truncate, "cpu_s": round(time.process_time() - start, 2)})
        print(f"{len(done) + i + 1}: {pid}", file=sys.stderr, flush=True)


def _take_shift(ours: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Per position: the taker's 1-ply Janowski Double/take equity from ours minus from truth
    (doubler's normalised DT; positive = ours makes the take look worse to the taker)."""
    from engine.cube.equity import CubeInfo, cubeful_value

    cube = CubeInfo().doubled()
    x = 0.68
    return np.array([cubeful_value(a, cube, x) - cubeful_value(b, cube, x) for a, b in zip(ours, truth)])


def report(run: Path) -> dict:
    """Step 3: the bias by type and by P(win) band, as a dict (also printed)."""
    rows = read_rows(run / "rollouts.jsonl")
    if not rows:
        raise SystemExit("no rollouts yet")
    kinds = np.array([r["type"] for r in rows])
    truth = np.array([r["rollout"] for r in rows])
    out: dict = {"n": len(rows), "trials": rows[0]["trials"], "truncate": rows[0]["truncate"], "rows": []}
    groups = [("all", np.ones(len(rows), bool))] + [(t, kinds == t) for t in TYPES]
    p1 = np.array([r["ply1"] for r in rows])
    bands = ((0.6, 0.7), (0.7, 0.8), (0.8, 0.9))
    groups += [(f"P(win) {a:.1f}-{b:.1f}", (p1[:, 0] >= a) & (p1[:, 0] < b)) for a, b in bands]
    for ply in ("ply1", "ply2"):
        ours = np.array([r[ply] for r in rows])
        diff = ours - truth
        shift = _take_shift(ours, truth)
        for name, mask in groups:
            n = int(mask.sum())
            if n < 2:
                continue
            d = diff[mask]
            mean, se = d.mean(axis=0), d.std(axis=0, ddof=1) / np.sqrt(n)
            row = {"ply": ply, "group": name, "n": n,
                   "win": [round(mean[0], 4), round(se[0], 4)],
                   "win_gammon": [round(mean[1], 4), round(se[1], 4)],
                   "lose_gammon": [round(mean[3], 4), round(se[3], 4)],
                   "take_shift": [round(float(shift[mask].mean()), 4),
                                  round(float(shift[mask].std(ddof=1) / np.sqrt(n)), 4)]}
            out["rows"].append(row)
            print(f"{ply} {name:<16} n={n:<4} P(win) {mean[0]:+.4f} +- {se[0]:.4f}  "
                  f"P(wg) {mean[1]:+.4f} +- {se[1]:.4f}  P(lg) {mean[3]:+.4f} +- {se[3]:.4f}  "
                  f"DT shift {row['take_shift'][0]:+.4f} +- {row['take_shift'][1]:.4f}")
    return out


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-4, 1 - 1e-4)
    return np.log(p / (1 - p))


def fit(run: Path, ply: str = "ply1") -> dict[str, tuple[float, float, float]]:
    """Per type: (k, g_fav, g_dog): logit(P(win)) scaled by k, the favourite's and the
    underdog's gammon rates (gammons per win, per loss) scaled by g_fav and g_dog; least
    squares on the rollouts (every position's side on roll is the favourite)."""
    rows = read_rows(run / "rollouts.jsonl")
    params = {}
    for t in TYPES:
        mine = [r for r in rows if r["type"] == t]
        if len(mine) < 5:
            params[t] = (1.0, 1.0, 1.0)
            continue
        ours = np.array([r[ply] for r in mine])
        truth = np.clip(np.array([r["rollout"] for r in mine]), 0.0, 1.0)
        lo, lr = _logit(ours[:, 0]), _logit(truth[:, 0])
        k = float(lo @ lr / (lo @ lo))
        fav = ours[:, 1].sum() / ours[:, 0].sum(), truth[:, 1].sum() / truth[:, 0].sum()
        dog = ours[:, 3].sum() / (1 - ours[:, 0]).sum(), truth[:, 3].sum() / (1 - truth[:, 0]).sum()
        g_fav = float(fav[1] / fav[0]) if fav[0] > 1e-3 else 1.0
        g_dog = float(dog[1] / dog[0]) if dog[0] > 1e-3 else 1.0
        params[t] = (round(k, 4), round(g_fav, 4), round(g_dog, 4))
    return params


class CalibratedEvaluator:
    """Any evaluator's afterstate outputs in contact passed through the fitted calibration
    (symmetric in the sides); races are left alone (bear-off databases and the race net)."""

    def __init__(self, inner, params: dict[str, tuple[float, float, float]]) -> None:
        self.inner = inner
        self.params = params
        self.name = f"{inner.name}+calibrated"

    def evaluate(self, afterstates: np.ndarray) -> np.ndarray:
        from engine.evaluator import sanity_clamp
        from engine.position import is_race

        p = np.array(self.inner.evaluate(afterstates), dtype=np.float64)
        race = np.array([is_race(b) for b in afterstates], dtype=bool)
        gammonish = p[:, 1] + p[:, 3] >= GAMMONISH
        out = p.copy()
        for t, mask in (("gammonish", ~race & gammonish), ("contact", ~race & ~gammonish)):
            mask = mask & (p[:, 0] > 0.0) & (p[:, 0] < 1.0)
            if not mask.any():
                continue
            k, g_fav, g_dog = self.params[t]
            q = p[mask]
            w = q[:, 0]
            w2 = 1.0 / (1.0 + np.exp(-k * _logit(w)))
            fav = w >= 0.5
            win_scale = np.where(fav, g_fav, g_dog)
            lose_scale = np.where(fav, g_dog, g_fav)
            q[:, 1:3] = q[:, 1:3] / w[:, None] * (w2 * win_scale)[:, None]
            q[:, 3:5] = q[:, 3:5] / (1 - w)[:, None] * ((1 - w2) * lose_scale)[:, None]
            q[:, 0] = w2
            out[mask] = q
        return sanity_clamp(np.clip(out, 0.0, 1.0))


def bench(run: Path, plies: list[int], limit: int, with_plain: bool = True) -> None:
    """Step 4: the money cube benchmark with and without the fitted calibration."""
    from models.loader import load_evaluator
    from scripts.bench.cube import load_cases, score_player, summary, format_summary

    params = fit(run)
    print(f"calibration (k, g_fav, g_dog) by type: {params}")
    cases = load_cases(which="money")
    if limit:
        cases = cases[:limit]
    base = load_evaluator(None)
    for ply in plies:
        variants = (("plain", base),) if with_plain else ()
        for label, ev in variants + (("calibrated", CalibratedEvaluator(base, params)),):
            s = summary(score_player(cases, ev, ply))
            print("\n".join(format_summary(f"{label} {ply}-ply", s)), flush=True)


def checker(run: Path, limit: int) -> None:
    """Step 5: does the calibration hurt checker play? The stored decision set at 1-ply,
    plain and calibrated, paired (scripts.lab.decision_set's judge, a yardstick only)."""
    from engine.pit.harness import SearchPlayer
    from models.loader import load_evaluator
    from scripts.lab.decision_set import load_set, losses

    decisions = load_set()
    if limit:
        decisions = decisions[:limit]
    base = load_evaluator(None)
    plain = losses(SearchPlayer(base, 1), decisions)
    calibrated = losses(SearchPlayer(CalibratedEvaluator(base, fit(run)), 1), decisions)
    d = calibrated - plain
    half = 1.96 * d.std(ddof=1) / np.sqrt(len(d))
    print(f"checker play, {len(d)} decisions at 1-ply: plain {1000 * plain.mean():.2f}, calibrated "
          f"{1000 * calibrated.mean():.2f} mEMG/decision; calibrated - plain {1000 * d.mean():+.2f} "
          f"+- {1000 * half:.2f} (95%), {int((d != 0).sum())} plays changed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=("positions", "rollout", "report", "bench", "checker"))
    parser.add_argument("--run", required=True, type=Path)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=5081)
    parser.add_argument("--window", type=float, nargs=2, default=(0.6, 0.9))
    parser.add_argument("--trials", type=int, default=72)
    parser.add_argument("--truncate", type=int, default=16)
    parser.add_argument("--limit", type=int, default=0, help="rollout: stop after this many positions in all")
    parser.add_argument("--ply", type=int, nargs="+", default=[1], help="bench: our plies")
    parser.add_argument("--calibrated-only", action="store_true", help="bench: skip the plain evaluator")
    parser.add_argument("--json", action="store_true", help="report: also write report.json in the run")
    args = parser.parse_args(argv)
    args.run.mkdir(parents=True, exist_ok=True)
    if args.step == "positions":
        make_positions(args.run, args.games, args.seed, tuple(args.window))
    elif args.step == "rollout":
        roll_out(args.run, args.trials, args.truncate, args.seed, args.limit)
    elif args.step == "bench":
        bench(args.run, args.ply, args.limit, not args.calibrated_only)
    elif args.step == "checker":
        checker(args.run, args.limit)
    else:
        doc = report(args.run)
        if args.json:
            (args.run / "report.json").write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
