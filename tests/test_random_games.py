"""Thousands of seeded random games: invariants at every turn and a legal result at the end."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from engine.dice import ALL_ROLLS
from engine.evaluator import WIN
from engine.game import EvaluatorPlayer, GameRecord, RandomPlayer, play_game
from engine.notation import legal_plays
from engine.position import CHECKERS, ME, OPP, Position

N_GAMES = 2000


def _check_game(record: GameRecord) -> None:
    assert record.result in (-3, -2, -1, 1, 2, 3), f"game not finished: {record.result}"
    assert record.turns[0].player == record.starter
    assert record.turns[0].position == Position.start()
    first = record.turns[0].dice
    assert first[0] != first[1] and sorted(first) == sorted(record.opening)
    assert first[0] == record.opening[record.starter]
    boards = np.stack([turn.position.board for turn in record.turns]).astype(np.int64)
    movers = np.array([turn.player for turn in record.turns])
    assert (movers == (record.starter + np.arange(len(movers))) % 2).all(), "turns alternate"
    assert (boards >= 0).all()
    on_board = boards.sum(axis=2)  # (turns, 2): (mover, last mover)
    assert (on_board <= CHECKERS).all() and (on_board > 0).all()
    assert not ((boards[:, ME, :24] > 0) & (boards[:, OPP, 23::-1] > 0)).any(), "shared point"
    # 15 a side: the mover's count carries over to the next turn's opponent row, minus
    # what it bore off; nothing else changes the number of checkers on the board.
    borne_off = np.array([_borne_off(turn) for turn in record.turns])
    assert (on_board[1:, OPP] == on_board[:-1, ME] - borne_off[:-1]).all()
    assert (on_board[1:, ME] == on_board[:-1, OPP]).all()
    for turn, following in zip(record.turns, record.turns[1:]):
        after = turn.play.after if turn.play is not None else turn.position
        assert following.position == after.swap(), "the next turn does not start from the play"
    last = record.turns[-1]
    winner_view = last.play.after
    assert winner_view.board[ME].sum() == 0, "the last mover did not bear off all 15"
    points = winner_view.result()
    assert record.result == (points if last.player == 0 else -points)
    assert record.winner == last.player
    # A terminal position has no plays: the winner has nothing left to move.
    for d1, d2, _ in ALL_ROLLS:
        assert legal_plays(winner_view, (d1, d2)) == []
    final0 = record.final
    assert final0 == (winner_view if last.player == 0 else winner_view.swap())


def _borne_off(turn) -> int:
    if turn.play is None:
        return 0
    return sum(1 for _, dst in turn.play.steps if dst < 0)


@pytest.mark.slow
def test_thousands_of_random_games_end_legally():
    rng = np.random.default_rng(20261129)
    players = (RandomPlayer(np.random.default_rng(1)), RandomPlayer(np.random.default_rng(2)))
    results = Counter()
    dances = 0
    for _ in range(N_GAMES):
        record = play_game(*players, rng)
        _check_game(record)
        results[record.result] += 1
        dances += sum(1 for t in record.turns if t.play is None)
    # Random play reaches every kind of result, both ways, and dances happen.
    assert set(results) == {-3, -2, -1, 1, 2, 3}, results
    assert dances > 0
    wins0 = sum(n for r, n in results.items() if r > 0)
    assert 0.45 * N_GAMES < wins0 < 0.55 * N_GAMES


def test_same_seed_replays_the_same_game():
    def transcript(seed: int) -> list:
        rng = np.random.default_rng(seed)
        record = play_game(RandomPlayer(np.random.default_rng(seed + 1)),
                           RandomPlayer(np.random.default_rng(seed + 2)), rng)
        return [(t.player, t.position.id, t.dice, t.play.notation if t.play else "")
                for t in record.turns] + [record.result]
    assert transcript(5) == transcript(5)
    assert transcript(5) != transcript(6)


def test_swapping_players_with_the_same_seed_swaps_the_dice():
    """Duplicate dice (engine.pit.harness relies on it): same seed, sides swapped, same roll per turn."""
    a = play_game(RandomPlayer(np.random.default_rng(1)), RandomPlayer(np.random.default_rng(2)),
                  np.random.default_rng(99), max_turns=40)
    b = play_game(RandomPlayer(np.random.default_rng(3)), RandomPlayer(np.random.default_rng(4)),
                  np.random.default_rng(99), max_turns=40)
    assert a.opening == b.opening and a.starter == b.starter
    turns = min(len(a.turns), len(b.turns))
    assert [t.dice for t in a.turns[:turns]] == [t.dice for t in b.turns[:turns]]


class _RaceEvaluator:
    """Prefers afterstates with fewer pips left (a crude but deterministic judge)."""

    name = "pips"

    def evaluate(self, afterstates: np.ndarray) -> np.ndarray:
        pips = afterstates[:, 0, :] @ np.arange(1, 26)
        probs = np.zeros((len(afterstates), 5))
        probs[:, WIN] = 1.0 / (1.0 + pips / 100.0)
        return probs


def test_evaluator_player_picks_the_best_equity_and_beats_random():
    player = EvaluatorPlayer(_RaceEvaluator())
    start = Position.start()
    plays = legal_plays(start, (6, 5))
    best = player.choose(start, (6, 5), plays)
    pips = [p.after.pips()[0] for p in plays]
    assert pips[best] == min(pips)
    rng = np.random.default_rng(3)
    wins = sum(play_game(player, RandomPlayer(np.random.default_rng(4)), rng).result > 0
               for _ in range(100))
    assert wins > 70


def test_max_turns_cuts_a_game_off_unfinished():
    rng = np.random.default_rng(0)
    record = play_game(RandomPlayer(rng), RandomPlayer(rng), rng, max_turns=5)
    assert len(record.turns) == 5 and record.result == 0 and not record.finished
    assert record.winner is None


def test_a_player_choosing_out_of_range_is_an_error():
    class Bad:
        name = "bad"

        def choose(self, position, dice, plays):
            return len(plays)

    with pytest.raises(IndexError):
        play_game(Bad(), Bad(), np.random.default_rng(0))
