"""Pit two players over many cubeless money games: duplicate dice, statistics, gnubg as a player.

Torch-free: evaluators arrive already built (scripts/cmd_pit.py loads them in each worker).

- Duplicate dice: pair k plays game 2k with A as side 0 and game 2k+1 with B as side 0,
  both from a generator seeded with (seed, k). engine.game.play_game gives side 0 the first
  opening die and draws every later roll by turn number, so in the twin game each player
  gets exactly the rolls (opening included) its opponent had.
- ppg is A's mean points per game. Its 95% interval is 1.96 standard errors, computed over
  per-pair means when duplicate (the pair is the independent unit) and over games otherwise.
- `gnubg[:PLIES]` plays through a real gnubg process (engine/gnubg_driver.py over pipes):
  gnubg.findbestmove at PLIES (gnubg's numbering, default 0), cubeless, no noise.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.errors import TdgammonError
from engine.evaluator import Evaluator
from engine.game import GameRecord, play_game
from engine.matfile import MatGame
from engine.notation import apply_moves
from engine.position import Position
from engine.search import MAX_PLY, MoveFilter, rank_plays
from engine.stats import ci95

GNUBG = "/usr/games/gnubg"
DRIVER = Path(__file__).resolve().parent / "gnubg_driver.py"


@dataclass(frozen=True)
class PlayerSpec:
    """`kind` is 'evaluator' (spec given to the loader) or 'gnubg'; ply is ours (1 to MAX_PLY) or gnubg's plies."""

    text: str
    kind: str
    evaluator_spec: str
    ply: int

    @property
    def label(self) -> str:
        return self.text


def parse_player_spec(text: str, default_ply: int = 1) -> PlayerSpec:
    """`MODEL|pubeval|random[:SEED]` with optional `@PLY` (1 to MAX_PLY), or `gnubg[:PLIES]` (0..4)."""
    if not text:
        raise TdgammonError("a player must be a model path, pubeval, random or gnubg[:PLIES]")
    name, sep, arg = text.partition(":")
    if name.partition("@")[0] == "gnubg":
        if "@" in text:
            raise TdgammonError(f"gnubg sets its depth with gnubg:PLIES, not @: {text!r}")
        plies = 0
        if sep:
            if not arg.isdigit() or not 0 <= int(arg) <= 4:
                raise TdgammonError(f"gnubg:PLIES takes plies 0..4 (gnubg's numbering), got {text!r}")
            plies = int(arg)
        return PlayerSpec(text, "gnubg", "", plies)
    base, at, ply_text = text.rpartition("@")
    if not at:
        base, ply = text, default_ply
    else:
        if not ply_text.isdigit() or not 1 <= int(ply_text) <= MAX_PLY or not base:
            raise TdgammonError(f"a player's ply suffix is @1 to @{MAX_PLY}, got {text!r}")
        ply = int(ply_text)
    if not 1 <= default_ply <= MAX_PLY:
        raise TdgammonError(f"--ply must be 1 to {MAX_PLY}, got {default_ply}")
    return PlayerSpec(text, "evaluator", base, ply)


class SearchPlayer:
    """engine.game Player: the best play by engine.search at its ply."""

    def __init__(self, evaluator: Evaluator, ply: int = 1, name: str | None = None,
                 filter: MoveFilter = MoveFilter()) -> None:
        self.evaluator = evaluator
        self.ply = ply
        self.name = name or f"{evaluator.name}@{ply}"
        self.filter = filter

    def choose(self, position: Position, dice: tuple[int, int], plays) -> int:
        best = rank_plays(position.board, dice, self.evaluator, self.ply, self.filter)[0].afterstate
        return _index_of(plays, best, self.name)


def _index_of(plays, afterstate: np.ndarray, who: str) -> int:
    afterstates = getattr(plays, "afterstates", None)
    if afterstates is None:
        afterstates = np.stack([p.after.board for p in plays])
    hits = np.nonzero((afterstates == afterstate).all(axis=(1, 2)))[0]
    if len(hits) == 0:
        raise RuntimeError(f"{who} chose a play that is not among the legal plays")
    return int(hits[0])


class GnubgProcess:
    """One gnubg process running engine/gnubg_driver.py; best moves over pipes."""

    def __init__(self, gnubg: str | None = None) -> None:
        gnubg = gnubg or GNUBG
        if shutil.which(gnubg) is None:
            raise TdgammonError(f"gnubg is not installed ({gnubg} not found)")
        self.stderr = tempfile.TemporaryFile(mode="w+")  # a file, so gnubg never blocks on it
        self.proc = subprocess.Popen(
            [gnubg, "-t", "-q", "-p", str(DRIVER)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.stderr, text=True, bufsize=1)
        self._read("READY")

    def _read(self, word: str) -> str:
        """The next reply starting with `word`, past gnubg's own output; raises on ERROR."""
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise TdgammonError(f"gnubg exited unexpectedly ({self._last_words()})")
            if line.startswith("ERROR "):
                raise RuntimeError(f"gnubg: {line[6:].rstrip()}")
            if line.startswith(word + " ") or line.rstrip("\n") == word:
                return line.rstrip("\n")

    def best_moves(self, position: Position, dice: tuple[int, int], plies: int) -> list[tuple[int, int]]:
        """gnubg's best play as (from, to) points, 25 = bar, 0 = off; [] when none is legal."""
        self.proc.stdin.write(f"{position.id} {dice[0]} {dice[1]} {plies}\n")
        self.proc.stdin.flush()
        line = self._read("MOVE")
        nums = [int(x) for x in line.split()[1:]]
        return list(zip(nums[0::2], nums[1::2]))

    def equity(self, position: Position, plies: int) -> float:
        """gnubg's cubeless equity for the side on roll of `position`, at PLIES (its numbering)."""
        self.proc.stdin.write(f"EVAL {position.id} {plies}\n")
        self.proc.stdin.flush()
        return float(self._read("EQUITY").split()[1])

    def _last_words(self) -> str:
        """gnubg's exit status and the last line it wrote to stderr: why it stopped."""
        status = self.proc.wait()
        self.stderr.seek(0)
        lines = [line.strip() for line in self.stderr.read().splitlines() if line.strip()]
        return f"status {status}" + (f": {lines[-1]}" if lines else "")

    def close(self) -> None:
        self.stderr.close()
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=10)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


class GnubgPlayer:
    """engine.game Player backed by a gnubg process at `plies` (gnubg's numbering)."""

    def __init__(self, plies: int = 0, process: GnubgProcess | None = None) -> None:
        self.plies = plies
        self.process = process or GnubgProcess()
        self.name = f"gnubg:{plies}"

    def choose(self, position: Position, dice: tuple[int, int], plays) -> int:
        moves = self.process.best_moves(position, dice, self.plies)
        after = apply_moves(position.board, moves)
        return _index_of(plays, after, self.name)

    def close(self) -> None:
        self.process.close()


def reseed(player, seed: list[int]) -> None:
    """Give a random evaluator a fresh generator per game, so results do not depend on workers."""
    evaluator = getattr(player, "evaluator", None)
    if evaluator is not None and isinstance(getattr(evaluator, "rng", None), np.random.Generator):
        evaluator.rng = np.random.default_rng(seed)


def to_mat_game(record: GameRecord, a_is_side0: bool) -> MatGame:
    """The record with A always as side 0 of the .mat file."""
    game = MatGame(result=record.result if a_is_side0 else -record.result)
    for turn in record.turns:
        side = turn.player if a_is_side0 else 1 - turn.player
        game.turns.append((side, turn.dice, turn.play.notation if turn.play is not None else ""))
    return game


@dataclass
class GameResult:
    """One pit unit (a game, or a match with --match), from A's view.

    points: signed, A's points (the cube included), or +-1 for a match won or lost.
    kinds: each game's own result, signed from A's view, whatever the cube made of it:
    1 single game (a pass counts as a single game for the doubler), 2 gammon, 3 backgammon,
    0 cut off. Empty means the points are the result (a cubeless game).
    """

    index: int          # game number; pair = index // 2 when duplicate
    points: int         # signed, from A's view
    mat: MatGame | None = None
    kinds: tuple[int, ...] = ()

    @property
    def game_kinds(self) -> tuple[int, ...]:
        return self.kinds if self.kinds else (self.points,)


@dataclass(frozen=True)
class PitSeating:
    """Game `index` of a pit: its two players in seat order, its dice, and whether A sits first."""

    players: tuple
    rng: np.random.Generator
    a_first: bool

    def for_a(self, value: int) -> int:
        """A signed result of side 0 seen from A."""
        return value if self.a_first else -value


def seat_pit_game(player_a, player_b, seed: int, index: int, duplicate: bool) -> PitSeating:
    """Seat game `index`: A is side 0 in even games of a duplicate pair, side 1 in odd ones.

    The dice come from a generator seeded with (seed, pair), so both games of a pair get
    the same rolls; random evaluators are reseeded per game, so results do not depend on
    which worker plays the game. Cubeless, cube and match pits all seat their games here.
    """
    pair = index // 2 if duplicate else index
    a_first = index % 2 == 0 if duplicate else True
    for k, player in enumerate((player_a, player_b)):
        reseed(player, [seed, index, k, 7])
    players = (player_a, player_b) if a_first else (player_b, player_a)
    return PitSeating(players, np.random.default_rng([seed, pair]), a_first)


def play_pit_game(player_a, player_b, seed: int, index: int, duplicate: bool,
                  keep_record: bool = False) -> GameResult:
    """Game `index` of a cubeless pit (seated by seat_pit_game)."""
    seat = seat_pit_game(player_a, player_b, seed, index, duplicate)
    record = play_game(seat.players[0], seat.players[1], seat.rng)
    points = seat.for_a(record.result)
    return GameResult(index, points, to_mat_game(record, seat.a_first) if keep_record else None)


@dataclass
class PitStats:
    """ppg over the units (games or matches); win rates from the units' points; gammon and
    backgammon rates over every game played (`games_played`, more than `games` in matches)
    from each game's own result kind."""

    games: int = 0
    ppg: float = 0.0
    ci95: float = 0.0
    win_rate: float = 0.0
    gammon_rate: float = 0.0
    backgammon_rate: float = 0.0
    b_win_rate: float = 0.0
    b_gammon_rate: float = 0.0
    b_backgammon_rate: float = 0.0
    unfinished: int = 0
    games_played: int = 0
    extra: dict = field(default_factory=dict)


def summarize(results: list[GameResult], duplicate: bool) -> PitStats:
    """ppg with a 95% interval (per-pair when duplicate), win/gammon/backgammon rates per side."""
    n = len(results)
    if n == 0:
        return PitStats()
    pts = np.array([r.points for r in results], dtype=np.float64)
    kinds = np.array([k for r in results for k in r.game_kinds], dtype=np.int64)
    if duplicate:
        by_pair: dict[int, list[float]] = {}
        for r in results:
            by_pair.setdefault(r.index // 2, []).append(r.points)
        units = np.array([np.mean(v) for v in by_pair.values()])
    else:
        units = pts
    return PitStats(
        games=n, ppg=float(pts.mean()), ci95=ci95(units, single=math.inf),
        win_rate=float((pts > 0).mean()), gammon_rate=float((kinds >= 2).mean()),
        backgammon_rate=float((kinds >= 3).mean()),
        b_win_rate=float((pts < 0).mean()), b_gammon_rate=float((kinds <= -2).mean()),
        b_backgammon_rate=float((kinds <= -3).mean()), unfinished=int((pts == 0).sum()),
        games_played=len(kinds))


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
