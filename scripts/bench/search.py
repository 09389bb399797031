"""Decision time: median and 95th percentile ms per rank_plays(ply=2, or --ply) over oracle (position, roll) pairs.

One thread. Uses models/default.pt when it exists (or --model PATH) as commands play it
(race net, and its screen when it has one: then each decision is also timed without the
screen, alternately, and the decisions whose chosen play differs are printed with the
equity they lose by the unscreened search; --keep K screens to K plays a roll instead of
engine.search.SCREEN_KEEP), else a randomly initialised TDNet(80); a random net keeps
nearly every play within the filter's 0.16, so its decisions are close to the worst case
of 8 candidates. Rolls with no legal play are not decisions and are skipped; JIT warm-up
is excluded.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from engine.errors import TdgammonError
from models.paths import DEFAULT_MODEL
from scripts.bench.common import add_model_argument, bench_evaluator, oracle_records
from scripts.cli import MAX_PLY
from scripts.commands.options import at_least

WARM_UP = 10  # decisions run, untimed, before the timed ones


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_argument(parser)
    parser.add_argument("--positions", type=at_least(0), default=1000,
                        help="oracle (position, roll) pairs to sample, 0 = all (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    parser.add_argument("--ply", type=int, choices=range(2, MAX_PLY + 1), default=2,
                        help="search depth to time (default 2; 3 is about 40 times slower)")
    parser.add_argument("--keep", type=int, default=None, metavar="K",
                        help="plays the model's screen keeps a roll (default engine.search.SCREEN_KEEP)")


def run(args: argparse.Namespace) -> None:
    import engine.search
    from engine.position import decode_position_id
    from engine.search import MoveFilter, rank_plays

    if args.keep is not None:
        if args.keep < 1:
            raise TdgammonError(f"--keep must be at least 1, got {args.keep}")
        engine.search.SCREEN_KEEP = args.keep

    evaluator, label = bench_evaluator(args.model, play_time=True)
    screened = getattr(evaluator, "screen", None) is not None
    if screened:
        from models.loader import load_network

        plain = load_network(args.model or DEFAULT_MODEL, screen=False)
    records = [r for r in oracle_records() if r["afterstates"]]
    if 0 < args.positions < len(records):
        picks = np.random.default_rng(args.seed).choice(len(records), args.positions, replace=False)
        records = [records[i] for i in sorted(picks)]
    cases = [(decode_position_id(r["position"]), tuple(r["dice"])) for r in records]
    # Warm-up on several cases: a kernel that only races or bear-offs reach compiles on first use.
    start = time.perf_counter()
    for board, dice in cases[:WARM_UP]:
        rank_plays(board, dice, evaluator, ply=args.ply)
        if screened:
            rank_plays(board, dice, plain, ply=args.ply)
    print(f"JIT warm-up: {time.perf_counter() - start:.2f} s (excluded)")
    filt = MoveFilter()
    times, plain_times, changed, lost = np.empty(len(cases)), np.empty(len(cases)), 0, 0.0
    for k, (board, dice) in enumerate(cases):
        t0 = time.perf_counter()
        chosen = rank_plays(board, dice, evaluator, ply=args.ply, filter=filt)[0]
        times[k] = time.perf_counter() - t0
        if screened:
            t0 = time.perf_counter()
            plain_ranked = rank_plays(board, dice, plain, ply=args.ply, filter=filt)
            plain_times[k] = time.perf_counter() - t0
            if not np.array_equal(chosen.afterstate, plain_ranked[0].afterstate):
                changed += 1
                # The unscreened search's equity of the screened choice (a 1-ply one if it cut it).
                worth = next(p.equity for p in plain_ranked if np.array_equal(p.afterstate, chosen.afterstate))
                lost += plain_ranked[0].equity - worth
    ms = times * 1000.0
    print(f"{label}, 1 thread, {len(cases)} {args.ply}-ply decisions, filter {filt.max_moves} within {filt.threshold}: "
          f"mean {ms.mean():.2f} ms, max {ms.max():.1f} ms")
    if screened:
        plain_ms = plain_times * 1000.0
        print(f"without the screen: {np.median(plain_ms):.2f} ms median, {np.percentile(plain_ms, 95):.2f} ms p95; "
              f"median ratio {np.median(plain_ms) / np.median(ms):.2f}; "
              f"{changed} of {len(cases)} decisions choose another play, "
              f"{1000 * lost / len(cases):.3f} mEMG lost a decision by the unscreened search")
    print(f"search: {np.median(ms):.2f} ms median, {np.percentile(ms, 95):.2f} ms p95")
