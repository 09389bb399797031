"""Build the cube benchmark: positions from games, each cube decision judged by gnubg.

Three steps, each resumable (a step skips what its output file already holds):

1. `positions`: candidate positions, before the roll, from --gnubg-games games of gnubg
   0-ply against itself and --own-games games of our model at 1-ply against itself
   (dice from --seed; a few positions per game, so no game dominates).
2. `judge`: every candidate, in every cube state the benchmark uses, analysed by gnubg
   cubeful at 2 plies (its numbering, our 3-ply depth; the judge) and at 0 plies (gnubg
   0-ply, a reference row). Money: the centred 1-cube and a 2-cube the side on roll owns,
   Jacoby and beavers off. Match: 3, 5 and 7 points at a random running score, the cube
   centred or owned by the side on roll when it can still be used.
3. `pack`: picks --positions positions (most with gnubg's P(win) for the side on roll
   between 0.5 and 0.97, where cube actions are decided; the rest from anywhere) and
   writes tests/data/cube-benchmark.json, small enough for the tree.

gnubg is the yardstick only: none of these numbers goes into training or into a fitted
constant. `tdgammon bench cube` scores a model against this file.

Usage: python -m scripts.lab.cube_benchmark positions|judge|pack --run DIR [options]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from engine.cube.equity import ME_OWNS, CubeInfo
from engine.errors import TdgammonError
from engine.game import play_game
from engine.gnubg.process import GnubgPlayer, GnubgProcess
from engine.position import Position
from scripts.lab.jsonl import append_row, read_rows

BENCHMARK = Path(__file__).resolve().parents[2] / "tests" / "data" / "cube-benchmark.json"
MATCH_LENGTHS = (3, 5, 7)
PER_GAME = 6
DECISION_WINDOW = (0.5, 0.97)
IN_WINDOW_SHARE = 0.85


def candidate_positions(record, rng: np.random.Generator, k: int) -> list[Position]:
    """Up to k positions of a game, before the roll, the opening one excluded."""
    positions = [turn.position for turn in record.turns[1:]]
    if len(positions) <= k:
        return positions
    return [positions[i] for i in sorted(rng.choice(len(positions), k, replace=False))]


def make_positions(run: Path, gnubg_games: int, own_games: int, seed: int) -> None:
    """Step 1: play the games and keep a few positions from each (resumes by game)."""
    out = run / "positions.jsonl"
    done = {(r["origin"], r["game"]) for r in read_rows(out)}
    plan = [("gnubg", g) for g in range(gnubg_games)] + [("own", g) for g in range(own_games)]
    players = {}
    try:
        for origin, game in plan:
            if (origin, game) in done:
                continue
            if origin not in players:
                if origin == "gnubg":
                    players[origin] = GnubgPlayer(0)
                else:
                    from engine.pit.harness import SearchPlayer
                    from models.loader import load_evaluator
                    players[origin] = SearchPlayer(load_evaluator(None), 1)
            player = players[origin]
            tag = 0 if origin == "gnubg" else 1
            record = play_game(player, player, np.random.default_rng([seed, tag, game]))
            picks = candidate_positions(record, np.random.default_rng([seed, tag, game, 1]), PER_GAME)
            append_row(out, {"origin": origin, "game": game, "positions": [p.id for p in picks]})
            print(f"{origin} game {game}: {len(picks)} positions", file=sys.stderr, flush=True)
    finally:
        for p in players.values():
            if hasattr(p, "close"):
                p.close()


def cube_states(position_id: str, rng: np.random.Generator) -> list[CubeInfo]:
    """The cube states a position is judged in: money centred and owned, one per match length."""
    states = [CubeInfo(), CubeInfo(value=2, owner=ME_OWNS)]
    for n in MATCH_LENGTHS:
        while True:
            score = (int(rng.integers(0, n)), int(rng.integers(0, n)))
            need = (n - score[0], n - score[1])
            if min(need) > 1:   # pre-Crawford: both sides may still double
                break
        if need[0] > 2 and rng.random() < 0.5:
            states.append(CubeInfo(value=2, owner=ME_OWNS, match_length=n, score=score))
        else:
            states.append(CubeInfo(match_length=n, score=score))
    return states


def state_dict(cube: CubeInfo) -> dict:
    return {"cube": cube.value, "owner": cube.owner, "match": cube.match_length,
            "score": list(cube.score), "crawford": cube.crawford}


def judge(run: Path, seed: int) -> None:
    """Step 2: gnubg's 2-ply and 0-ply cube analyses of every candidate (resumes by position)."""
    out = run / "judged.jsonl"
    done = {r["position"] for r in read_rows(out)}
    todo = []
    for row in read_rows(run / "positions.jsonl"):
        for pid in row["positions"]:
            if pid not in done:
                done.add(pid)
                todo.append((row["origin"], pid))
    process = GnubgProcess()
    try:
        for i, (origin, pid) in enumerate(todo):
            position = Position.from_id(pid)
            states = []
            for cube in cube_states(pid, np.random.default_rng([seed, int.from_bytes(pid.encode(), "little") % 2**63])):
                g2 = process.cube_analysis(position, cube, 2)
                g0 = process.cube_analysis(position, cube, 0)
                states.append({**state_dict(cube),
                               "judge": [round(v, 5) for v in (g2.no_double, g2.double_take, g2.double_pass)],
                               "gnubg0": [round(v, 5) for v in (g0.no_double, g0.double_take, g0.double_pass)],
                               "probs": [round(v, 5) for v in g2.probs]})
            append_row(out, {"origin": origin, "position": pid, "states": states})
            if i % 100 == 0:
                print(f"judged {i + 1}/{len(todo)}", file=sys.stderr, flush=True)
    finally:
        process.close()


def pack(run: Path, positions: int, seed: int, target: Path) -> None:
    """Step 3: choose the positions (half from each origin) and write the benchmark file."""
    rows = list({r["position"]: r for r in read_rows(run / "judged.jsonl")}.values())
    rng = np.random.default_rng([seed, 2])
    lo, hi = DECISION_WINDOW
    chosen = []
    for origin in ("gnubg", "own"):
        mine = [r for r in rows if r["origin"] == origin]
        p_win = np.array([r["states"][0]["probs"][0] for r in mine])
        inside = [r for r, p in zip(mine, p_win) if lo <= p <= hi]
        outside = [r for r, p in zip(mine, p_win) if not lo <= p <= hi]
        want = positions // 2
        n_in = min(len(inside), round(want * IN_WINDOW_SHARE))
        n_out = min(len(outside), want - n_in)
        if n_in + n_out < want:
            raise TdgammonError(f"only {n_in + n_out} {origin} positions judged, {want} wanted")
        for group, n in ((inside, n_in), (outside, n_out)):
            chosen += [group[i] for i in sorted(rng.choice(len(group), n, replace=False))]
    doc = {
        "source": ("GNU Backgammon 1.07.001 gnubg.cfevaluate, cubeful, 2 plies (judge) and 0 plies "
                   "(reference row); positions before the roll from gnubg 0-ply self-play and our "
                   "model's 1-ply self-play; money with Jacoby and beavers off; score is "
                   "[side on roll, opponent]; judge and gnubg0 are normalised [no_double, "
                   "double_take, double_pass]; probs are gnubg's 2-ply cubeless probabilities. "
                   "A yardstick only: never a training target."),
        "generator": "python -m scripts.lab.cube_benchmark",
        "seed": seed,
        "positions": chosen,
    }
    target.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    print(f"wrote {len(chosen)} positions to {target}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=("positions", "judge", "pack"))
    parser.add_argument("--run", required=True, help="working directory (outside git)")
    parser.add_argument("--seed", type=int, default=4417)
    parser.add_argument("--gnubg-games", type=int, default=250)
    parser.add_argument("--own-games", type=int, default=250)
    parser.add_argument("--positions", type=int, default=600)
    parser.add_argument("--out", default=str(BENCHMARK))
    args = parser.parse_args(argv)
    run = Path(args.run)
    try:
        run.mkdir(parents=True, exist_ok=True)
        if args.step == "positions":
            make_positions(run, args.gnubg_games, args.own_games, args.seed)
        elif args.step == "judge":
            judge(run, args.seed)
        else:
            pack(run, args.positions, args.seed, Path(args.out))
    except (TdgammonError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
