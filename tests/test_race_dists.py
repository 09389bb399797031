"""The one-sided race net: its inputs, its odds, its file and its training recursion."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine import bearoff, race_dists
from engine.dice import ALL_ROLLS
from engine.errors import CheckpointError
from engine.movegen import generate
from engine.netfile import save_weights
from engine.race_dists import HEADS, ROLLS, RaceDistNet
from tests.test_features import _board


def _net(hidden: int = 6, seed: int = 0, mean_bias: float = 0.0) -> RaceDistNet:
    rng = np.random.default_rng(seed)
    b2 = np.zeros(HEADS * ROLLS + HEADS, np.float32)
    b2[HEADS * ROLLS:] = mean_bias
    return RaceDistNet(w1=rng.normal(0, 0.3, (race_dists.ONE_INPUTS, hidden)).astype(np.float32),
                       b1=np.zeros(hidden, np.float32),
                       w2=rng.normal(0, 0.3, (hidden, HEADS * ROLLS + HEADS)).astype(np.float32), b2=b2)


def test_inputs_by_hand() -> None:
    board = _board({13: 2, 6: 5, 1: 3}, {8: 4, 2: 1})
    x = race_dists.encode(board[0])[0]
    side = x[96:]
    # 5 checkers off; 26 + 30 + 3 = 59 pips; the two on the 13-point cross two quadrants.
    assert side[0] == pytest.approx(5 / 15) and side[1] == pytest.approx(0.59)
    assert side[2] == pytest.approx(0.4) and side[3] == pytest.approx(2 / 15)
    np.testing.assert_array_equal(x[4 * 12:4 * 12 + 4], [1, 1, 0, 0])   # two on the 13-point
    np.testing.assert_array_equal(x[4 * 5:4 * 5 + 4], [1, 1, 1, 1])     # five on the 6-point
    home = _board({6: 5, 1: 3}, {})
    rolls = race_dists.home_mean_rolls()[bearoff.bearoff_index(home[0], bearoff.BINOM)]
    assert side[4] == pytest.approx(rolls / 10, rel=1e-5)
    assert side[5] == pytest.approx((race_dists.PIPS_PER_ROLL * rolls - 33) / 10, rel=1e-5)
    # 2 x 7 pips to reach home; the rearmost on the 13-point; none in the opponent's home board.
    np.testing.assert_allclose(side[6:], [14 / 50, 13 / 24, 0, 0], rtol=1e-6)
    theirs = race_dists.encode(board[1])[0]
    assert theirs[96] == pytest.approx(10 / 15) and theirs[97] == pytest.approx(0.34)
    back = race_dists.encode(_board({20: 2, 6: 13}, {})[0])[0]
    np.testing.assert_allclose(back[102:], [28 / 50, 20 / 24, 4 / 20, 2 / 5], rtol=1e-6)


def test_both_home_matches_the_databases() -> None:
    boards = np.stack([_board({6: 5, 5: 4, 1: 6}, {4: 3, 2: 2}), _board({3: 2}, {6: 8, 4: 7}),
                       _board({6: 15}, {1: 15}), _board({2: 1}, {1: 1})])
    got = _net().evaluate(boards)
    want = bearoff.apply(boards, np.zeros((len(boards), 5)))
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_race_odds_are_consistent_and_follow_the_pips() -> None:
    net = _net()
    far = _board({13: 5, 8: 5, 6: 5}, {6: 5, 5: 5})            # the side on roll has borne off 5
    near = _board({6: 5, 5: 5}, {13: 5, 12: 5, 11: 5})         # the side that moved has borne off 5
    back = _board({20: 2, 8: 5, 6: 8}, {2: 5, 1: 5})           # two in the opponent's home board
    p = net.evaluate(np.stack([far, near, back]))
    assert np.all(p >= 0) and np.all(p[:, 0] <= 1)
    assert np.all(p[:, 1] <= p[:, 0] + 1e-12) and np.all(p[:, 2] <= p[:, 1] + 1e-12)
    assert np.all(p[:, 3] <= 1 - p[:, 0] + 1e-12) and np.all(p[:, 4] <= p[:, 3] + 1e-12)
    # A side that has borne off a checker loses no gammon.
    assert p[0, 1] == 0.0 and p[1, 3] == 0.0
    assert p[2, 4] > 0.0   # checkers in the opponent's home board: a backgammon is possible
    assert p[0, 4] == 0.0  # none there: none


def test_side_rows_of_home_boards_are_the_tables() -> None:
    row = _board({6: 4, 3: 6, 1: 5}, {})[0]
    d = _net().dists(row[None])[0]
    k = bearoff.bearoff_index(row, bearoff.BINOM)
    np.testing.assert_allclose(d[race_dists.ALL_OFF], bearoff.table()[k])
    np.testing.assert_allclose(d[race_dists.FIRST_OFF], bearoff.gammon_table()[k])
    assert d[race_dists.ZONE_OUT, 0] == 1.0
    np.testing.assert_allclose(_net().dists(_board({13: 15}, {})[0][None])[0].sum(-1), 1.0, rtol=1e-6)


def test_recursion_targets_by_hand() -> None:
    from training.race_dists import targets

    # One checker on the 7-point: every roll can bring it home. A net that rates every
    # position outside home as hopeless makes each roll's best play a home one.
    row = _board({7: 1, 6: 4, 4: 5, 2: 5}, {})[0]
    got = targets(row[None], _net(mean_bias=100.0))[0]
    table, mean = bearoff.table(), bearoff.table() @ np.arange(ROLLS)
    want = np.zeros(ROLLS)
    board = np.zeros((2, 25), dtype=np.int8)
    board[0] = row
    for d1, d2, weight in ALL_ROLLS:
        homes = [bearoff.bearoff_index(b[0], bearoff.BINOM) for b in generate(board, d1, d2)[0]
                 if not b[0, 6:].any()]
        best = table[min(homes, key=lambda k: mean[k])]
        want[1:] += weight / 36 * best[:-1]
    np.testing.assert_allclose(got[race_dists.ALL_OFF], want, atol=1e-6)
    assert got[race_dists.ZONE_OUT, 0] == 1.0


def test_file_round_trip_and_refusals(tmp_path: Path) -> None:
    net = _net()
    path = tmp_path / "race.npz"
    net.save(path)
    assert RaceDistNet.load(path).digest() == net.digest()
    with np.load(path) as data:
        arrays = dict(data)
    arrays["b1"] = arrays["b1"] + 1
    np.savez(tmp_path / "bad.npz", **arrays)
    kindless = tmp_path / "kindless.npz"   # a sound weights file without this net's kind
    save_weights(kindless, net.weights(), version=1)
    (tmp_path / "junk.npz").write_text("not a net")
    np.save(tmp_path / "array.npy", np.zeros(3))
    for name, says in [("bad.npz", "is damaged"), ("kindless.npz", "is not a one-sided net of version 2"),
                       ("junk.npz", "is not a weights file"), ("array.npy", "is not a weights file"),
                       ("missing.npz", "does not exist")]:
        with pytest.raises(CheckpointError, match=says) as err:
            RaceDistNet.load(tmp_path / name)
        assert "\n" not in str(err.value) and str(err.value).count("race net") == 1, str(err.value)


def test_a_tiny_net_trains_and_plays(tmp_path: Path) -> None:
    from engine.search import best_play
    from scripts.lab.train_race_dists import main

    out = tmp_path / "race.npz"
    assert main(["--out", str(out), "--work", str(tmp_path / "work"), "--positions", "60",
                 "--rounds", "1", "--layers", "2", "--hidden", "4", "--epochs", "1"]) == 0
    net = RaceDistNet.load(out)
    assert (tmp_path / "work" / "round-000.npz").exists()
    board = _board({13: 3, 8: 6, 6: 6}, {9: 5, 6: 10})
    after = best_play(board, (6, 5), net)
    assert any(np.array_equal(after.afterstate, p) for p in generate(board, 6, 5)[0])


def test_training_script_refuses_bad_options(capsys) -> None:
    from scripts.lab.train_race_dists import main

    assert main(["--positions", "0"]) == 2
    assert capsys.readouterr().err.strip() == "train_race_dists: --positions must be at least 1"
