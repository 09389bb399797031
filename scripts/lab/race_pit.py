"""Pit a model with a race net against the same model without it (or with another race net):
duplicate dice, cubeless.

Usage: python -m scripts.lab.race_pit [--model models/default.pt] [--race-net models/race.npz]
       [--against none|PATH] [--ply 1] [--games 2000] [--seed 1] [--out results.jsonl]
Both sides play the same checkpoint at the same ply, so the games differ only once a race
starts: the ppg is what the race net is worth against the other side's. --out keeps one
line per game, so an interrupted pit resumes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="checkpoint (default: the shipped model)")
    parser.add_argument("--race-net", default=None, help="the race net (default: models/race.npz)")
    parser.add_argument("--against", default="none", metavar="none|PATH",
                        help="the other side's race net (default none: the model's own net in races)")
    parser.add_argument("--ply", type=int, default=1, choices=(1, 2, 3))
    parser.add_argument("--games", type=int, default=2000, help="games (even: duplicate pairs)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=None, help="one JSON line per game (resumable)")
    args = parser.parse_args(argv)
    if args.games < 2 or args.games % 2:
        print("race_pit: --games must be an even number of at least 2", file=sys.stderr)
        return 2
    from engine.errors import TdgammonError
    from engine.pit.harness import SearchPlayer, play_pit_game
    from engine.pit.stats import GameResult, summarize
    from models.loader import load_network
    from models.paths import DEFAULT_MODEL, RACE_MODEL

    model = Path(args.model) if args.model else DEFAULT_MODEL
    race_net = Path(args.race_net) if args.race_net else RACE_MODEL
    try:
        against = None if args.against == "none" else Path(args.against)
        for path in (race_net, against):
            if path is not None and not path.exists():
                raise TdgammonError(f"race net {path} does not exist")
        a = SearchPlayer(load_network(model, race_net), args.ply, "with race net")
        b = SearchPlayer(load_network(model, against), args.ply, "against")
    except TdgammonError as err:
        print(f"race_pit: {err}", file=sys.stderr)
        return 2
    done: dict[int, int] = {}
    out = Path(args.out) if args.out else None
    if out is not None and out.exists():
        for line in out.read_text().splitlines():
            row = json.loads(line)
            done[int(row["index"])] = int(row["points"])
    fh = open(out, "a") if out is not None else None
    try:
        for index in range(args.games):
            if index in done:
                continue
            done[index] = play_pit_game(a, b, args.seed, index, duplicate=True).points
            if fh is not None:
                fh.write(json.dumps({"index": index, "points": done[index]}) + "\n")
                fh.flush()
    finally:
        if fh is not None:
            fh.close()
    stats = summarize([GameResult(i, p) for i, p in sorted(done.items())], duplicate=True)
    other = against.name if against is not None else "without"
    print(f"{model.name}@{args.ply} with {race_net.name} vs {other}: {stats.games} games (duplicate dice), "
          f"ppg {stats.ppg:+.4f} ± {stats.ci95:.4f} (95%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
