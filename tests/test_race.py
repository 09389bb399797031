"""The evaluator that routes races to the race net, and the loader that builds it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine import race
from engine.errors import CheckpointError
from engine.evaluator import N_OUTPUTS
from engine.position import Position
from tests.test_features import _board
from tests.test_race_dists import _net


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


def test_loader_wraps_networks_with_the_race_net(tmp_path: Path) -> None:
    from models.loader import load_network
    from models.paths import TESAURO_MODEL

    path = tmp_path / "race.npz"
    _net().save(path)
    assert isinstance(load_network(TESAURO_MODEL, path), race.WithRaceNet)
    assert not isinstance(load_network(TESAURO_MODEL, None), race.WithRaceNet)
    with pytest.raises(CheckpointError):
        load_network(TESAURO_MODEL, tmp_path / "missing.npz")


def test_race_pit_of_a_net_against_itself_is_even(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from models.paths import TESAURO_MODEL
    from scripts.lab import race_pit

    path = tmp_path / "race.npz"
    _net().save(path)
    args = ["--model", str(TESAURO_MODEL), "--race-net", str(path), "--games", "2", "--seed", "3"]
    assert race_pit.main(args + ["--against", str(path)]) == 0
    out = capsys.readouterr().out
    assert "with race.npz vs race.npz: 2 games" in out and "ppg +0.0000" in out  # the same play on both sides
    assert race_pit.main(args + ["--against", str(tmp_path / "missing.npz")]) == 2
    assert "does not exist" in capsys.readouterr().err
