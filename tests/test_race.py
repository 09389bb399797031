"""The race network's inputs, its file, and the evaluator that routes races to it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine import bearoff, race
from engine.errors import CheckpointError
from engine.evaluator import N_OUTPUTS
from engine.position import Position


def _board(mine: dict[int, int], theirs: dict[int, int]) -> np.ndarray:
    board = np.zeros((2, 25), dtype=np.int8)
    for side, points in enumerate((mine, theirs)):
        for point, count in points.items():
            board[side, point - 1] = count
    return board


def _net(hidden: int = 4, seed: int = 0) -> race.RaceNet:
    rng = np.random.default_rng(seed)
    return race.RaceNet(w1=rng.normal(0, 0.1, (race.RACE_INPUTS, hidden)).astype(np.float32),
                        b1=np.zeros(hidden, np.float32),
                        w2=rng.normal(0, 0.1, (hidden, N_OUTPUTS)).astype(np.float32),
                        b2=np.zeros(N_OUTPUTS, np.float32))


def test_race_inputs_by_hand() -> None:
    board = _board({13: 2, 6: 5, 1: 3}, {8: 4, 2: 1})
    x = race.encode(board[None])[0]
    side = x[96:race.SIDE_INPUTS]
    # 5 checkers off; 26 + 30 + 3 = 59 pips; the two on the 13-point cross two quadrants.
    assert side[0] == pytest.approx(5 / 15) and side[1] == pytest.approx(0.59)
    assert side[2] == pytest.approx(0.4) and side[3] == pytest.approx(2 / 15)
    np.testing.assert_array_equal(x[4 * 12:4 * 12 + 4], [1, 1, 0, 0])   # two on the 13-point
    np.testing.assert_array_equal(x[4 * 5:4 * 5 + 4], [1, 1, 1, 1])     # five on the 6-point
    home = _board({6: 5, 1: 3}, {})
    rolls = race.home_mean_rolls()[bearoff.bearoff_index(home[0], bearoff.BINOM)]
    assert side[4] == pytest.approx(rolls / 10, rel=1e-5)
    assert side[5] == pytest.approx((race.PIPS_PER_ROLL * rolls - 33) / 10, rel=1e-5)
    theirs = x[race.SIDE_INPUTS:]
    assert theirs[96] == pytest.approx(10 / 15) and theirs[97] == pytest.approx(0.34)


def test_routes_send_each_position_to_its_judge() -> None:
    contact = Position.start().board
    running = _board({13: 15}, {10: 15})
    home = _board({1: 3}, {6: 15})
    assert list(race.routes(np.stack([contact, running, home]))) == [0, 1, 2]


class _Constant:
    name = "constant"

    def __init__(self) -> None:
        self.seen = 0

    def evaluate(self, afterstates: np.ndarray) -> np.ndarray:
        self.seen += len(afterstates)
        return np.full((len(afterstates), N_OUTPUTS), 0.25)


def test_with_race_net_routes_rows() -> None:
    contact = _Constant()
    net = _net()
    evaluator = race.WithRaceNet(contact, net)
    boards = np.stack([Position.start().board, _board({13: 15}, {10: 15}), _board({1: 1}, {6: 2})])
    probs = evaluator.evaluate(boards)
    assert contact.seen == 1
    np.testing.assert_allclose(probs[0], 0.25)
    np.testing.assert_allclose(probs[1], net.evaluate(boards[1:2])[0])
    np.testing.assert_allclose(probs[2], [1 - 4 / 36, 0, 0, 0, 0])
    assert evaluator.evaluate(np.zeros((0, 2, 25), dtype=np.int8)).shape == (0, N_OUTPUTS)


def test_with_race_net_keeps_contact_decisions_on_the_contact_net() -> None:
    contact = _Constant()
    net = _net()
    evaluator = race.WithRaceNet(contact, net)
    running = np.stack([_board({13: 15}, {10: 15}), _board({12: 15}, {10: 15})])
    # The same race afterstates: after a contact position (a play that broke contact) the
    # contact net answers; after a race, the race net.
    probs = evaluator.evaluate(running, pre_move_race=np.array([False, True]))
    assert contact.seen == 1
    np.testing.assert_allclose(probs[0], 0.25)
    np.testing.assert_allclose(probs[1], net.evaluate(running[1:2])[0])


def test_race_net_file_round_trip_and_damage(tmp_path: Path) -> None:
    net = _net()
    path = tmp_path / "race.npz"
    net.save(path)
    loaded = race.RaceNet.load(path)
    boards = np.stack([_board({13: 15}, {10: 15}), _board({20: 2, 8: 13}, {7: 15})])
    np.testing.assert_array_equal(loaded.forward(boards), net.forward(boards))
    with np.load(path) as data:
        arrays = dict(data)
    arrays["b2"] = arrays["b2"] + 1.0
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(CheckpointError, match="damaged"):
        race.RaceNet.load(tmp_path / "bad.npz")
    (tmp_path / "junk.npz").write_text("not a net")
    with pytest.raises(CheckpointError, match="cannot read"):
        race.RaceNet.load(tmp_path / "junk.npz")


def test_loader_wraps_networks_with_the_race_net(tmp_path: Path) -> None:
    from models.loader import load_network
    from models.paths import TESAURO_MODEL

    path = tmp_path / "race.npz"
    _net().save(path)
    assert isinstance(load_network(TESAURO_MODEL, path), race.WithRaceNet)
    assert not isinstance(load_network(TESAURO_MODEL, None), race.WithRaceNet)
    with pytest.raises(CheckpointError):
        load_network(TESAURO_MODEL, tmp_path / "missing.npz")


@pytest.mark.slow
def test_a_tiny_race_net_trains_and_plays(tmp_path: Path) -> None:
    """The recipe end to end on a few games: race positions only, targets from our own
    search, a net saved after each round that the loader plays."""
    from models.checkpoint import load_play_net
    from models.paths import TESAURO_MODEL
    from training.race import RaceConfig, is_net_race, race_positions, train_race_net

    cfg = RaceConfig(games=30, max_positions=400, hidden=8, rounds=1, epochs=2)
    position_net = load_play_net(TESAURO_MODEL)
    boards = race_positions(position_net, cfg.games, cfg.max_positions, cfg.seed)
    assert 0 < len(boards) <= 400 and all(is_net_race(b) for b in boards)
    lines: list[str] = []
    path = tmp_path / "race.npz"
    net = train_race_net(cfg, position_net, _Constant(), log=lines.append, save=path)
    assert [line.split(":")[0] for line in lines[1:]] == ["round 0", "round 1"]
    assert race.RaceNet.load(path).digest() == net.digest()


def test_race_config_refuses_bad_keys(tmp_path: Path) -> None:
    from engine.errors import ConfigError
    from training.race import load_race_config

    path = tmp_path / "race.toml"
    path.write_text("hidden = 0\n")
    with pytest.raises(ConfigError, match="hidden"):
        load_race_config(path)
    path.write_text("hiden = 8\n")
    with pytest.raises(ConfigError, match="unknown key 'hiden'"):
        load_race_config(path)
    assert load_race_config(Path(__file__).resolve().parent.parent / "configs" / "race.toml").hidden == 64
