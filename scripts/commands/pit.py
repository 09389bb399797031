"""`tdgammon pit A B`: cubeless money games between two players, duplicate dice, both cores.

A and B: a checkpoint path, `pubeval`, `random[:SEED]` (each with an optional `@1`, `@2` or `@3`
ply suffix), or `gnubg[:PLIES]` (a real gnubg process at its own plies, default 0).
With --cube or --match, gnubg doubles and takes by its own cubeful analysis at its plies.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import sys
import time
from typing import TYPE_CHECKING

from engine.errors import TdgammonError
from scripts.cli import PLY_HELP
from scripts.commands.files import check_writable

if TYPE_CHECKING:  # the engine's game modules load numba: imported where they run
    from engine.pit.players import PlayerSpec

_WORKER: dict = {}


def build_player(spec: PlayerSpec):
    """Load one side (in the process that plays it)."""
    from engine.gnubg.process import GnubgPlayer
    from engine.pit.harness import SearchPlayer
    from models.loader import load_evaluator

    if spec.kind == "gnubg":
        return GnubgPlayer(spec.ply)
    return SearchPlayer(load_evaluator(spec.evaluator_spec), spec.ply, spec.label)


def _init_worker(spec_a: PlayerSpec, spec_b: PlayerSpec, seed: int, duplicate: bool, keep: bool,
                 cube: tuple[bool, int] = (False, 0)) -> None:
    if "torch" in sys.modules:   # one thread per worker: the workers already fill the cores
        sys.modules["torch"].set_num_threads(1)
    _WORKER.update(a=build_player(spec_a), b=build_player(spec_b), seed=seed,
                   duplicate=duplicate, keep=keep, cube=cube)


def _play(index: int):
    from engine.cube.play import play_cube_pit_game
    from engine.pit.harness import play_pit_game

    w = _WORKER
    if w["cube"][0]:
        return play_cube_pit_game(w["a"], w["b"], w["seed"], index, w["duplicate"], w["cube"][1])
    return play_pit_game(w["a"], w["b"], w["seed"], index, w["duplicate"], w["keep"])


def _close_worker() -> None:
    for key in ("a", "b"):
        close = getattr(_WORKER.get(key), "close", None)
        if close:
            close()


def run_pit(spec_a: PlayerSpec, spec_b: PlayerSpec, games: int, seed: int, workers: int,
            duplicate: bool, keep: bool, progress: bool = True, cube: tuple[bool, int] = (False, 0)):
    """Play the games (in worker processes when workers > 1); results sorted by game index."""
    from tqdm import tqdm

    results = []
    bar = tqdm(total=games, unit="game", disable=not progress, file=sys.stderr, dynamic_ncols=True)
    total = 0
    try:
        if workers <= 1:
            _init_worker(spec_a, spec_b, seed, duplicate, keep, cube)
            try:
                for i in range(games):
                    results.append(_play(i))
                    total += results[-1].points
                    bar.update(1)
                    bar.set_postfix(ppg=f"{total / len(results):+.3f}")
            finally:
                _close_worker()
        else:
            # fork: workers inherit the imported modules and compiled numba kernels
            ctx = mp.get_context("fork")
            with ctx.Pool(workers, initializer=_init_worker,
                          initargs=(spec_a, spec_b, seed, duplicate, keep, cube)) as pool:
                chunk = 2 if duplicate else 1
                for r in pool.imap_unordered(_play, range(games), chunksize=chunk):
                    results.append(r)
                    total += r.points
                    bar.update(1)
                    bar.set_postfix(ppg=f"{total / len(results):+.3f}")
                pool.close()
                pool.join()
    finally:
        bar.close()
    results.sort(key=lambda r: r.index)
    return results


def cube_mode(args: argparse.Namespace, spec_a: PlayerSpec, spec_b: PlayerSpec) -> tuple[bool, int]:
    """(play with the cube, match length or 0 for money) from --cube / --match N."""
    if args.match is None and not args.cube:
        return False, 0
    if args.match is not None and not 1 <= args.match <= 25:
        raise TdgammonError(f"--match must be 1..25 points, got {args.match}")
    if args.save:
        raise TdgammonError("--save writes cubeless games only; drop --save with --cube/--match")
    return True, args.match or 0


def run(args: argparse.Namespace) -> int:
    from engine.formats.matfile import write_mat
    from engine.gnubg.process import GnubgPlayer
    from engine.pit.harness import default_workers
    from engine.pit.players import parse_player_spec
    from engine.pit.stats import summarize

    spec_a = parse_player_spec(args.a, args.ply)
    spec_b = parse_player_spec(args.b, args.ply)
    if args.games < 1:
        raise TdgammonError(f"--games must be >= 1, got {args.games}")
    duplicate = not args.no_duplicate
    if duplicate and args.games % 2:
        raise TdgammonError(f"duplicate dice plays games in pairs: --games must be even, got {args.games}")
    if not 0 <= args.seed < 2**63:
        raise TdgammonError(f"--seed must be 0..2**63-1, got {args.seed}")
    if args.workers < 0:
        raise TdgammonError(f"--workers must be >= 0 (0 = every core), got {args.workers}")
    if args.workers > 256:
        raise TdgammonError(f"--workers must be at most 256, got {args.workers}")
    workers = args.workers if args.workers else default_workers()
    workers = max(1, min(workers, args.games))
    for spec in (spec_a, spec_b):   # fail fast (bad path, corrupt checkpoint, no gnubg) here:
        player = build_player(spec)  # a worker's initializer that raises is respawned forever
        if isinstance(player, GnubgPlayer):
            player.close()
    cube = cube_mode(args, spec_a, spec_b)
    if args.save:
        check_writable(args.save, "--save")
    start = time.perf_counter()
    results = run_pit(spec_a, spec_b, args.games, args.seed, workers, duplicate,
                      keep=args.save is not None, progress=not args.no_progress, cube=cube)
    elapsed = time.perf_counter() - start
    stats = summarize(results, duplicate)
    save_error = None
    if args.save:
        try:
            write_mat(args.save, [r.mat for r in results], (spec_a.label, spec_b.label))
        except OSError as err:   # the results are printed first, then this one line
            save_error = f"--save {args.save}: the games were played but not saved ({err.strerror or err})"
    out = {
        "a": spec_a.label, "b": spec_b.label, "games": stats.games, "duplicate": duplicate,
        "seed": args.seed, "ppg": stats.ppg,
        "ci95": stats.ci95 if math.isfinite(stats.ci95) else None,  # JSON has no Infinity
        "win_rate": stats.win_rate,
        "gammon_rate": stats.gammon_rate, "backgammon_rate": stats.backgammon_rate,
        "b_win_rate": stats.b_win_rate, "b_gammon_rate": stats.b_gammon_rate,
        "b_backgammon_rate": stats.b_backgammon_rate, "unfinished": stats.unfinished,
        "games_per_s": stats.games / elapsed if elapsed > 0 else 0.0, "workers": workers,
        "cube": cube[0], "match": cube[1],
    }
    if cube[0]:
        out["games_played"] = stats.games_played   # the games behind the gammon rates
    if args.json:
        print(json.dumps(out), flush=True)
        if save_error:
            raise TdgammonError(save_error)
        return 0
    mode = "duplicate dice" if duplicate else "independent dice"
    kind = (f"matches to {cube[1]} points (ppg = A's match wins minus losses per match)" if cube[1]
            else "money games with the cube" if cube[0] else "cubeless money games")
    print(f"{spec_a.label} vs {spec_b.label}: {stats.games} {kind} "
          f"({mode}, seed {args.seed}, {workers} workers)")
    print(f"{spec_a.label} ppg: {stats.ppg:+.3f} +- {stats.ci95:.3f} (95%)")
    won = "matches won" if cube[1] else "wins"
    for label, w, g, bg in ((spec_a.label, stats.win_rate, stats.gammon_rate, stats.backgammon_rate),
                            (spec_b.label, stats.b_win_rate, stats.b_gammon_rate, stats.b_backgammon_rate)):
        print(f"{label}: {won} {100 * w:.1f}%  gammons {100 * g:.1f}%  backgammons {100 * bg:.1f}%")
    if cube[0]:
        print(f"gammons, backgammons: share of the {stats.games_played} games played won so "
              "(each game's own result, whatever the cube made it score)")
    print(f"games/s: {out['games_per_s']:.2f}", flush=True)
    if save_error:
        raise TdgammonError(save_error)
    if args.save:
        print(f"saved {stats.games} games to {args.save}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("pit", help="play two models/players against each other (ppg with 95%% interval)",
                            description=__doc__.split("\n\n")[1])
    parser.add_argument("a", metavar="A", help="model path, pubeval, random, gnubg[:PLIES]; optional @PLY")
    parser.add_argument("b", metavar="B", help="the opponent, same forms as A")
    parser.add_argument("--games", type=int, default=1000, help="games to play (even when duplicate)")
    parser.add_argument("--ply", type=int, default=1, help="default ply for both sides: " + PLY_HELP)
    parser.add_argument("--seed", type=int, default=1, help="dice seed (same seed = same games)")
    parser.add_argument("--workers", type=int, default=0, help="processes (default: every core)")
    parser.add_argument("--no-duplicate", action="store_true",
                        help="independent dice instead of duplicate pairs")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--save", metavar="FILE.mat", default=None,
                        help="write the games as a Jellyfish .mat file (gnubg: import mat FILE)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--cube", action="store_true",
                        help="money games with the doubling cube (cube actions by engine.cube.equity at each side's ply; "
                             "gnubg by its own cubeful analysis)")
    parser.add_argument("--match", type=int, metavar="N", default=None,
                        help="play matches to N points with the cube and the Crawford rule; ppg = match wins - losses")
    parser.set_defaults(func=run)
