"""Hand-crafted feature inputs: textbook values, agreement with the move generator, encoding."""

from __future__ import annotations

import numpy as np
import pytest

from engine.encoder import MAX_ACTIVE, N_FEATURE_INPUTS, N_INPUTS, encode, encode_sparse_features
from engine.features import (EXTRA_PER_SIDE, N_FEATURES, NEW_PER_SIDE, PER_SIDE, double_shots,
                             escapes, shot_stats, shots, write_features)
from engine.game import RandomPlayer, play_game
from engine.movegen import generate
from engine.position import Position


def _board(mine: dict[int, int], theirs: dict[int, int]) -> np.ndarray:
    """An afterstate from point -> count maps, each side in its own numbering (25 = bar)."""
    board = np.zeros((2, 25), dtype=np.int8)
    for row, points in enumerate((mine, theirs)):
        for point, n in points.items():
            board[row, point - 1] = n
    return board


def _features(board: np.ndarray) -> np.ndarray:
    out = np.zeros(N_FEATURES, dtype=np.float32)
    write_features(board, out, 0)
    return out


def _brute_force_shots(board: np.ndarray, pip_loss: bool = False, hits: int = 1) -> float:
    """Share of the opponent's rolls with a legal play that sends `hits` of our checkers to
    the bar; with pip_loss, the mean over the rolls of the most pips such a play costs us."""
    theirs_to_roll = board[::-1].copy()
    pips = np.arange(1, 26)
    total = 0
    for d1 in range(1, 7):
        for d2 in range(d1, 7):
            after, _ = generate(theirs_to_roll, d1, d2)
            if len(after) and np.any(after[:, 1, 24] >= board[0, 24] + hits):
                gain = (after[:, 1].astype(int) @ pips).max() - int(board[0].astype(int) @ pips)
                total += (1 if d1 == d2 else 2) * (gain if pip_loss else 1)
    return total / 36


def _extra(board: np.ndarray, side: int = 0) -> np.ndarray:
    """The version-2 values of one side (0: us)."""
    start = 2 * PER_SIDE + side * EXTRA_PER_SIDE
    return _features(board)[start:start + EXTRA_PER_SIDE]


def _new(board: np.ndarray, side: int = 0) -> np.ndarray:
    """The version-3 values of one side (0: us)."""
    start = 2 * (PER_SIDE + EXTRA_PER_SIDE) + side * NEW_PER_SIDE
    return _features(board)[start:start + NEW_PER_SIDE]


@pytest.fixture(scope="module")
def game_afterstates() -> list[np.ndarray]:
    boards = []
    for g in range(25):
        rng = np.random.default_rng(g)
        record = play_game(RandomPlayer(rng), RandomPlayer(np.random.default_rng(g + 100)),
                           np.random.default_rng(g))
        boards += [t.play.after.board.copy() for t in record.turns if t.play is not None]
    return boards


def test_a_blot_six_away_is_hit_by_17_rolls() -> None:
    board = _board({13: 1, 1: 14}, {18: 15})  # our 13 is their 12: 6 pips from their 18
    assert shots(board[0], board[1]) == pytest.approx(17 / 36)
    assert _features(board)[0] == pytest.approx(17 / 36)


def test_blocked_and_entering_shots() -> None:
    # A blot 6 away with points 2..5 away made: only the direct 6s and 3-3 (via 3, blocked) fail.
    board = _board({13: 1, 14: 2, 15: 2, 16: 2, 17: 2, 1: 6}, {18: 15})
    assert shots(board[0], board[1]) == pytest.approx(_brute_force_shots(board))
    # Two of theirs on the bar against a closed home board except a blot on our 1: they hit with 1s only.
    board = _board({1: 1, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 24: 4}, {25: 2, 1: 13})
    assert shots(board[0], board[1]) == pytest.approx(11 / 36) == _brute_force_shots(board)


def test_shots_agree_with_the_move_generator(game_afterstates) -> None:
    # The count ignores the rule to use both dice (as gnubg's does), so a few may differ, upward.
    assert len(game_afterstates) > 1000
    exact = 0
    for board in game_afterstates:
        ours, truth = shots(board[0], board[1]), _brute_force_shots(board)
        assert ours >= truth - 1e-9
        exact += abs(ours - truth) < 1e-9
    assert exact >= 0.99 * len(game_afterstates)


def test_pip_loss_of_a_lone_blot() -> None:
    board = _board({13: 1, 1: 14}, {18: 15})  # hit on our 13, the blot goes back 12 pips
    assert shot_stats(board[0], board[1]) == pytest.approx((17 / 36, 17 / 36 * 12, 0.0))
    assert _extra(board)[0] == pytest.approx(17 / 36 * 12 / 24)


def test_pip_loss_agrees_with_the_move_generator_for_one_blot(game_afterstates) -> None:
    lone = [b for b in game_afterstates if np.sum(b[0, :24] == 1) == 1]
    assert len(lone) > 200
    exact = 0
    for board in lone:
        ours, truth = shot_stats(board[0], board[1])[1], _brute_force_shots(board, pip_loss=True)
        assert ours >= truth - 1e-9
        exact += abs(ours - truth) < 1e-9
    assert exact >= 0.99 * len(lone)


def test_contain_is_the_tightest_grip_on_our_back_points(game_afterstates) -> None:
    assert _extra(Position.start().board)[1] == 0.0  # from our 24: 13 pips to jump their 13
    assert _extra(_board({1: 15}, {1: 15}))[1] == 1.0  # nothing of theirs in front
    # Their lone point on our 23 stops only 1-1 from our 24; on our 13 it is 11 pips in
    # front of our 24, which only 3-3, 4-4, 5-5 and 6-6 jump (6-5 lands on it).
    assert _extra(_board({1: 15}, {2: 2, 1: 13}))[1] == pytest.approx(35 / 36)
    assert _extra(_board({1: 15}, {12: 2, 1: 13}))[1] == pytest.approx(4 / 36)
    # The table agrees with escapes() counted against their points within 12 pips.
    for board in game_afterstates[:500]:
        direct = []
        for p in range(15, 24):
            theirs = board[1].copy()
            theirs[24 - p + 12:24] = 0  # their points beyond 12 pips in front of our index p
            direct.append(escapes(board[0], theirs, p))
        assert _extra(board)[1] == pytest.approx(min(direct))


def test_double_shots_agree_with_the_move_generator(game_afterstates) -> None:
    # Unlike the single shots, the double count needs no slack: it matches on every board.
    doubled = 0
    for board in game_afterstates:
        truth = _brute_force_shots(board, hits=2)
        assert double_shots(board[0], board[1]) == pytest.approx(truth)
        doubled += truth > 0
    assert doubled > 500


def test_double_shots_by_hand() -> None:
    # Our blots on our 13 and 16 are their 12 and 9, 6 and 9 pips from their lone checker
    # on their 18: it hits both with 6-3 (12*, 9*) and 3-3 (15, 12*, 9*).
    board = _board({13: 1, 16: 1, 1: 13}, {18: 1, 1: 14})
    assert double_shots(board[0], board[1]) == pytest.approx(3 / 36)
    assert _new(board)[0] == pytest.approx(3 / 36)
    assert double_shots(*_board({13: 1, 1: 14}, {18: 15})) == 0.0  # one blot


def test_version_3_values_at_the_start_and_by_hand() -> None:
    for side in (0, 1):
        new = _new(Position.start().board, side)
        assert new[0] == 0.0                         # no blots
        assert new[1] == pytest.approx(1 / 6)        # the anchor on the 24 point
        assert new[2] == pytest.approx(2 / 6)        # the 5 point wanted: spares on the 6 and 8
        # 167 pips: the mean index is 167 / 15 - 1; the 13 and 24 points are behind it.
        mean = 167 / 15 - 1
        assert new[4] == pytest.approx((5 * (12 - mean) ** 2 + 2 * (23 - mean) ** 2) / 7 / 400)
    advanced = _board({20: 2, 24: 2, 6: 11}, {1: 15})
    assert _new(advanced)[1] == pytest.approx(5 / 6)  # the 20 point beats the 24
    assert _new(_board({6: 15}, {1: 15}))[1] == 0.0
    # All of 6, 5, 4, 7, 3 made: the 8 point is wanted. Builders: the blot on the 9 and the
    # pairs on the 10 and 13 (beyond the 8 a pair may break); not the 15, 7 pips away.
    built = _board({6: 2, 5: 2, 4: 2, 7: 2, 3: 2, 9: 1, 10: 2, 13: 2, 15: 1}, {1: 15})
    assert _new(built)[2] == pytest.approx(3 / 6)


def test_mobility_sums_the_escapes_of_checkers_outside_home(game_afterstates) -> None:
    assert _new(_board({24: 1, 6: 14}, {1: 15}))[3] == pytest.approx(18 / 100)  # free: 18 x 1
    primed = _board({24: 1, 6: 14}, {p: 2 for p in range(2, 8)} | {1: 3})
    assert _new(primed)[3] == 0.0
    for board in game_afterstates[:300]:
        total = 0.0
        for i in range(6, 25):
            theirs = board[1].copy()
            theirs[min(24, 24 - i + 12):24] = 0  # their points beyond 12 pips in front
            total += (i - 5) * board[0, i] * escapes(board[0], theirs, i)
        assert _new(board)[3] == pytest.approx(total / 100)


def test_escapes() -> None:
    free = _board({24: 1, 1: 14}, {1: 15})
    assert escapes(free[0], free[1], 23) == 1.0
    primed = _board({24: 1, 1: 14}, {p: 2 for p in range(2, 8)} | {1: 3})  # a full prime in front
    assert escapes(primed[0], primed[1], 23) == 0.0
    # One point held 3 in front: escape with anything that jumps it and lands past it.
    one = _board({24: 1, 1: 14}, {4: 2, 1: 13})  # their 4 is our 21
    value = escapes(one[0], one[1], 23)
    assert 0.0 < value < 1.0


def test_dance_counts_closed_points_only_when_on_the_bar() -> None:
    theirs = {1: 2, 2: 2, 3: 2, 13: 9}  # three closed points in their home board
    on_bar = _features(_board({25: 1, 6: 14}, theirs))
    assert on_bar[7] == pytest.approx(0.25) and on_bar[3] == pytest.approx(25 / 24)
    assert _features(_board({24: 1, 6: 14}, theirs))[7] == 0.0


def test_start_position_values() -> None:
    f = _features(Position.start().board)
    for side in (0, PER_SIDE):
        mine = f[side:side + PER_SIDE]
        assert mine[0] == 0.0                        # no blots
        assert mine[3] == 1.0                        # back checkers on the 24 point
        assert mine[4] == 1.0                        # ... which are an anchor
        assert mine[6] == pytest.approx(1 / 6)       # the 6 point
        assert mine[7] == 0.0                        # nobody on the bar
        assert mine[8] == pytest.approx(1.0)         # 167 pips
    for side in (0, 1):
        extra = _extra(Position.start().board, side)
        assert extra[0] == 0.0                       # nothing to lose to hits
        assert extra[2] == pytest.approx(1 / 6)      # one point held in their home board
        assert extra[3] == pytest.approx(10 / 15)    # ten checkers outside the home board


def test_race_has_no_contact() -> None:
    race = _board({1: 5, 2: 5, 3: 5}, {1: 5, 2: 5, 3: 5})
    f = _features(race)
    assert f[2] == 0.0 and f[PER_SIDE + 2] == 0.0
    contact = _board({1: 14, 24: 1}, {2: 15})  # their 2 is our 23: one pip to pass
    assert _features(contact)[2] == pytest.approx(1 / 152)


def test_sparse_and_dense_feature_encodings_agree(game_afterstates) -> None:
    idx = np.empty(MAX_ACTIVE, dtype=np.int64)
    val = np.empty(MAX_ACTIVE, dtype=np.float32)
    dense = encode(np.stack(game_afterstates[:300]), features=True)
    assert dense.shape == (300, N_FEATURE_INPUTS)
    np.testing.assert_array_equal(dense[:, :N_INPUTS], encode(np.stack(game_afterstates[:300])))
    for board, row in zip(game_afterstates[:300], dense):
        k = encode_sparse_features(board, idx, val)
        rebuilt = np.zeros(N_FEATURE_INPUTS, dtype=np.float32)
        rebuilt[idx[:k]] = val[:k]
        np.testing.assert_array_equal(rebuilt, row)
