"""A fixed set of checker-play decisions judged once by gnubg, and the error table of any player on it.

Why a stored set: judging is the slow part (gnubg 2-ply on every candidate play), and a
fixed set lets every model and ply be compared on the very same positions in minutes,
without gnubg, paired, with contact and race reported apart.

The decisions (`build`): every turn with two or more legal plays in --gnubg-games games
gnubg 0-ply plays against itself and --own-games games the shipped model plays against
itself at 1-ply, dice seeded; then, so that races are measured on enough decisions, the
race turns alone of --race-games more games (half each). A decision is a race when the
position before the play has no contact (engine.position.is_race), else contact.

The judge: gnubg at --gnubg-plies (default 2, gnubg's numbering: our 3-ply), cubeless. A
play is worth minus gnubg's equity for the opponent on roll after it (the exact result
when it ends the game). Every legal play is first valued at gnubg 1-ply; the best
--deep of them, and any within --margin of the best, are valued again at the judge's
plies (the stored set: the best 3 and those within 0.02; its first 315 decisions were
judged with 12 and 0.08, then 6 and 0.04). A player's loss on a decision is the best
stored worth minus the worth of its play. Judging appends one line per decision to --work, so an interrupted build resumes.

`deepen` then values again at the judge's plies every play that only gnubg 1-ply valued in
a race, and in contact those within --margin (0.12) of the best: a play any player makes
should be judged at the judge's depth, and gnubg 1-ply's own errors (it misjudges some
gammon saves by 0.05) would otherwise count against a player that plays them right.

Usage:
  python -m scripts.lab.decision_set build [--work DIR] [--out FILE]
  python -m scripts.lab.decision_set deepen [--margin 0.12] [--work DIR] [--out FILE]
  python -m scripts.lab.decision_set [score] PLAYER... [--set FILE]
where PLAYER is as in `tdgammon pit` (a checkpoint, pubeval, random, with @1..@3;
gnubg:PLIES gives gnubg's own row). gnubg is only a yardstick: these numbers never reach
training.
"""

from __future__ import annotations

import argparse
import gzip
import json
import queue
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.errors import TdgammonError
from engine.game import Player, play_game
from engine.notation import play_list
from engine.pit.stats import ci95
from engine.position import Position
from models.paths import RACE_MODEL

DEFAULT_SET = Path(__file__).resolve().parents[2] / "tests" / "data" / "decision_set.jsonl.gz"
PHASES = ("contact", "race")
MOVEGEN_LOCK = threading.Lock()
RACE_SEED_OFFSET = 1000  # the extra race games' seeds: apart from the main games'


@dataclass(frozen=True)
class Decision:
    """One judged turn: the position (mover on roll), the dice, and each legal play's worth.

    worth maps the Position ID of each afterstate (mover in row 0) to its judged equity
    for the mover; plies maps it to the gnubg plies that valued it (-1: the exact result).
    """

    position: Position
    dice: tuple[int, int]
    source: str
    worth: dict[str, float]
    plies: dict[str, int]

    @property
    def phase(self) -> str:
        return "race" if self.position.is_race() else "contact"

    @property
    def best(self) -> float:
        return max(self.worth.values())

    def to_json(self) -> str:
        return json.dumps({"id": self.position.id, "dice": list(self.dice), "source": self.source,
                           "plays": {k: [round(v, 6), self.plies[k]] for k, v in self.worth.items()}})

    @classmethod
    def from_json(cls, line: str) -> Decision:
        d = json.loads(line)
        return cls(Position.from_id(d["id"]), (int(d["dice"][0]), int(d["dice"][1])), d["source"],
                   {k: float(v[0]) for k, v in d["plays"].items()}, {k: int(v[1]) for k, v in d["plays"].items()})


def load_set(path: Path = DEFAULT_SET) -> list[Decision]:
    """The stored decisions (a .jsonl or .jsonl.gz file); TdgammonError when unreadable."""
    opener = gzip.open if str(path).endswith(".gz") else open
    try:
        with opener(path, "rt") as fh:
            return [Decision.from_json(line) for line in fh if line.strip()]
    except (OSError, ValueError, KeyError, IndexError) as err:
        raise TdgammonError(f"cannot read the decision set {path}: {err}") from None


# ---------------------------------------------------------------- building


def turns_of(player: Player, source: str, games: int, seed: int,
             races_only: bool = False) -> list[tuple[Position, tuple[int, int], str]]:
    """Every turn with two or more legal plays in `games` self-play games of `player`
    (only those without contact with `races_only`)."""
    out = []
    for game in range(games):
        for turn in play_game(player, player, np.random.default_rng([seed, game])).turns:
            if races_only and not turn.position.is_race():
                continue
            if len(play_list(turn.position, turn.dice)) > 1:
                out.append((turn.position, turn.dice, source))
    return out


def all_turns(args: argparse.Namespace) -> list[tuple[Position, tuple[int, int], str]]:
    """The decisions of the build: gnubg's games, then ours, then the race turns of the
    extra games (half gnubg's, half ours, on seeds after the main games')."""
    from engine.gnubg.process import GnubgPlayer
    from engine.pit.harness import SearchPlayer
    from models.loader import load_evaluator

    ours = SearchPlayer(load_evaluator(args.model), 1)
    gnubg = GnubgPlayer(0)
    try:
        extra_seed = args.seed + RACE_SEED_OFFSET
        return (turns_of(gnubg, "gnubg", args.gnubg_games, args.seed)
                + turns_of(ours, "tdgammon", args.own_games, args.seed)
                + turns_of(gnubg, "gnubg", args.race_games // 2, extra_seed, races_only=True)
                + turns_of(ours, "tdgammon", args.race_games - args.race_games // 2, extra_seed, races_only=True))
    finally:
        gnubg.close()


class GnubgJudge:
    """gnubg's worth of afterstates (mover in row 0) at given plies, cached by Position ID."""

    def __init__(self) -> None:
        from engine.gnubg.process import GnubgProcess

        self.gnubg = GnubgProcess()
        self.cache: dict[tuple[str, int], float] = {}

    def worth(self, after: Position, plies: int) -> float:
        key = (after.id, plies)
        if key not in self.cache:
            self.cache[key] = -self.gnubg.equity(after.swap(), plies)
        return self.cache[key]

    def judge(self, position: Position, dice: tuple[int, int], source: str, plies: int, deep: int,
              margin: float) -> Decision:
        """Every play at gnubg 1-ply; the best `deep` (and any within `margin`) again at `plies`."""
        worth, used = {}, {}
        with MOVEGEN_LOCK:  # movegen's scratch buffers are shared: one thread at a time
            afters = [play.after for play in play_list(position, dice)]
        for after in afters:
            key = after.id
            if after.game_over():
                worth[key], used[key] = float(after.result()), -1
            else:
                worth[key], used[key] = self.worth(after, 1), 1
        top = max(worth.values())
        ranked = sorted(worth, key=lambda k: -worth[k])
        for rank, key in enumerate(ranked):
            if used[key] == 1 and plies != 1 and (rank < deep or worth[key] >= top - margin):
                worth[key], used[key] = self.worth(Position.from_id(key), plies), plies
        return Decision(position, dice, source, worth, used)

    def close(self) -> None:
        self.gnubg.close()


def build(args: argparse.Namespace) -> int:
    """Play the games (once, saved), judge each decision not yet judged, write the set."""
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    turns_file, judged_file = work / "turns.jsonl", work / "judged.jsonl"
    if not turns_file.exists():
        turns = all_turns(args)
        tmp = turns_file.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps({"id": p.id, "dice": list(d), "source": s}) + "\n" for p, d, s in turns))
        tmp.replace(turns_file)
    turns = [json.loads(line) for line in turns_file.read_text().splitlines()]
    done = len(judged_file.read_text().splitlines()) if judged_file.exists() else 0
    print(f"{len(turns)} decisions, {done} judged already", flush=True)
    judges = [GnubgJudge() for _ in range(args.jobs)]
    free = queue.SimpleQueue()
    for judge in judges:
        free.put(judge)

    def judged(t: dict) -> Decision:
        judge = free.get()  # each gnubg process serves one decision at a time
        try:
            return judge.judge(Position.from_id(t["id"]), tuple(t["dice"]), t["source"],
                               args.gnubg_plies, args.deep, args.margin)
        finally:
            free.put(judge)

    try:
        with open(judged_file, "a") as fh, ThreadPoolExecutor(args.jobs) as pool:
            for k, decision in enumerate(pool.map(judged, turns[done:]), start=done):
                fh.write(decision.to_json() + "\n")
                fh.flush()
                if (k + 1) % 50 == 0:
                    print(f"judged {k + 1}/{len(turns)}", flush=True)
    finally:
        for judge in judges:
            judge.close()
    out = Path(args.out)
    with gzip.open(out, "wt") as fh:
        fh.write(judged_file.read_text())
    print(f"wrote {out}")
    return 0


def deepen(args: argparse.Namespace) -> int:
    """Value again at the judge's plies the plays only gnubg 1-ply valued: every one in a race,
    and in contact those within --margin of the best; resumable through --work."""
    decisions = load_set(Path(args.set))
    todo = sorted({(k, d.phase) for d in decisions for k, v in d.worth.items()
                   if d.plies[k] == 1 and (d.phase == "race" or d.best - v <= args.margin)}, key=lambda kp: kp[0])
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    done_file = work / "deepened.jsonl"
    done = {}
    if done_file.exists():
        done = {r["id"]: r["worth"] for r in map(json.loads, done_file.read_text().splitlines())}
    todo = [k for k, _ in todo if k not in done]
    print(f"{len(todo)} plays to value at gnubg {args.gnubg_plies}-ply, {len(done)} done already", flush=True)
    judges = [GnubgJudge() for _ in range(args.jobs)]
    free = queue.SimpleQueue()
    for judge in judges:
        free.put(judge)

    def value(key: str) -> tuple[str, float]:
        judge = free.get()
        try:
            return key, judge.worth(Position.from_id(key), args.gnubg_plies)
        finally:
            free.put(judge)

    try:
        with open(done_file, "a") as fh, ThreadPoolExecutor(args.jobs) as pool:
            for k, (key, worth) in enumerate(pool.map(value, todo), start=1):
                done[key] = worth
                fh.write(json.dumps({"id": key, "worth": round(worth, 6)}) + "\n")
                fh.flush()
                if k % 200 == 0:
                    print(f"valued {k}/{len(todo)}", flush=True)
    finally:
        for judge in judges:
            judge.close()
    changed = 0
    for d in decisions:
        for key in d.worth:
            if d.plies[key] == 1 and key in done:
                d.worth[key], d.plies[key] = done[key], args.gnubg_plies
                changed += 1
    with gzip.open(Path(args.out), "wt") as fh:
        fh.write("".join(d.to_json() + "\n" for d in decisions))
    print(f"re-valued {changed} plays; wrote {args.out}")
    return 0


# ---------------------------------------------------------------- scoring


def losses(player: Player, decisions: list[Decision]) -> np.ndarray:
    """The equity each of the player's plays loses against the judge's best, per decision.

    A play the judge never valued cannot occur: every legal play is stored.
    """
    out = np.empty(len(decisions))
    for k, d in enumerate(decisions):
        plays = play_list(d.position, d.dice)
        chosen = plays[player.choose(d.position, d.dice, plays)].after.id
        out[k] = d.best - d.worth[chosen]
    return out


def table_rows(name: str, loss: np.ndarray, phases: np.ndarray) -> str:
    """One markdown row: mean mEMG (± 95%) over all decisions, contact and race."""
    cells = [f"{1000 * loss.mean():.2f} ± {1000 * ci95(loss):.2f}"]
    for phase in PHASES:
        part = loss[phases == phase]
        cells.append(f"{1000 * part.mean():.2f} ± {1000 * ci95(part):.2f}" if len(part) else "-")
    return f"| {name} | " + " | ".join(cells) + " |"


RACE_CLASSES = ("both home", "mover home", "other side home", "neither home")


def race_class(position: Position) -> str:
    """Which sides of a race have every checker home: where a race player's error comes from
    (both home: the databases; one side out: its net; 'other side home' holds most gammon races)."""
    board = position.board
    mine, theirs = (not board[side, 6:].any() for side in (0, 1))
    return RACE_CLASSES[0 if mine and theirs else 1 if mine else 2 if theirs else 3]


def class_rows(name: str, loss: np.ndarray, classes: np.ndarray) -> str:
    """One markdown row: mean mEMG per race class (its count beside it)."""
    cells = [f"{1000 * loss[classes == c].mean():.2f} ({int(np.sum(classes == c))})" if np.any(classes == c)
             else "-" for c in RACE_CLASSES]
    return f"| {name} | " + " | ".join(cells) + " |"


def player_of(text: str, race_net: Path | None) -> Player:
    """A PLAYER argument as in `tdgammon pit`: gnubg:PLIES or an evaluator at a ply
    (a network's races answered by `race_net`, None: by the network itself)."""
    from engine.gnubg.process import GnubgPlayer
    from engine.pit.harness import SearchPlayer
    from engine.pit.players import parse_player_spec
    from models.loader import load_evaluator

    spec = parse_player_spec(text)
    if spec.kind == "gnubg":
        return GnubgPlayer(spec.ply)
    return SearchPlayer(load_evaluator(spec.evaluator_spec, race_net), spec.ply, spec.label)


def score(args: argparse.Namespace) -> int:
    decisions = load_set(Path(args.set))
    if args.phase != "all":
        decisions = [d for d in decisions if d.phase == args.phase]
    race_net = None if args.race_net == "none" else Path(args.race_net)
    players = [player_of(text, race_net) for text in args.players]
    phases = np.array([d.phase for d in decisions])
    counts = {p: int(np.sum(phases == p)) for p in PHASES}
    print(f"{len(decisions)} decisions ({args.set}); mEMG lost per decision, judged by gnubg "
          f"(stored), ± 95% interval")
    print(f"| player | all ({len(decisions)}) | contact ({counts['contact']}) | race ({counts['race']}) |")
    print("|---|---|---|---|")
    classes = np.array([race_class(d.position) if d.phase == "race" else "" for d in decisions])
    by_class, every_loss = [], []
    try:
        for text, player in zip(args.players, players):
            loss = losses(player, decisions)
            every_loss.append(loss)
            print(table_rows(text, loss, phases), flush=True)
            by_class.append(class_rows(text, loss[phases == "race"], classes[phases == "race"]))
        if len(players) > 1:  # the same decisions for all: a paired difference is far tighter
            print(f"\npaired, each player minus {args.players[0]} (negative: fewer mEMG lost)")
            for text, loss in zip(args.players[1:], every_loss[1:]):
                print(table_rows(text, loss - every_loss[0], phases))
        if args.phase == "race":
            print("\nraces by which sides are home, mEMG (decisions)")
            print("| player | " + " | ".join(RACE_CLASSES) + " |")
            print("|---|---|---|---|---|")
            print("\n".join(by_class))
    finally:
        for player in players:
            getattr(player, "close", lambda: None)()
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    if argv[:1] == ["build"]:
        parser.add_argument("command")
        parser.add_argument("--work", default="decision-set-work", help="folder of the resumable judging")
        parser.add_argument("--out", default=str(DEFAULT_SET))
        parser.add_argument("--gnubg-games", type=int, default=20)
        parser.add_argument("--own-games", type=int, default=20)
        parser.add_argument("--race-games", type=int, default=40,
                            help="extra games whose race decisions alone join the set")
        parser.add_argument("--model", default=None, help="the model whose games give our half (default: shipped)")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--gnubg-plies", type=int, default=2, choices=(1, 2))
        parser.add_argument("--deep", type=int, default=3, help="plays re-valued at the judge's plies")
        parser.add_argument("--jobs", type=int, default=2, help="gnubg processes judging side by side")
        parser.add_argument("--margin", type=float, default=0.02,
                            help="also re-value every play within this of the best at gnubg 1-ply")
        run = build
    elif argv[:1] == ["deepen"]:
        parser.add_argument("command")
        parser.add_argument("--set", default=str(DEFAULT_SET), help="the stored decisions to deepen")
        parser.add_argument("--out", default=str(DEFAULT_SET))
        parser.add_argument("--work", default="decision-set-work", help="folder of the resumable valuing")
        parser.add_argument("--gnubg-plies", type=int, default=2, choices=(1, 2))
        parser.add_argument("--margin", type=float, default=0.12,
                            help="contact plays within this of the best are re-valued (races: all)")
        parser.add_argument("--jobs", type=int, default=2, help="gnubg processes side by side")
        run = deepen
    else:
        if argv[:1] == ["score"]:
            argv = argv[1:]
        parser.add_argument("players", nargs="+", metavar="PLAYER")
        parser.add_argument("--set", default=str(DEFAULT_SET), help="the stored decisions")
        parser.add_argument("--phase", default="all", choices=("all", *PHASES),
                            help="score only the contact or only the race decisions")
        parser.add_argument("--race-net", default=str(RACE_MODEL), metavar="PATH|none",
                            help="the race net the networks play races with (none: their own net)")
        run = score
    args = parser.parse_args(argv)
    try:
        return run(args)
    except TdgammonError as err:
        print(f"decision_set: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
