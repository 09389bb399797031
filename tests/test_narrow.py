"""Narrowing a net (scripts/lab/narrow_checkpoint.py): it keeps the units that move the
outputs, folds the rest's constant part into the biases, and records itself."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from engine.encoder import encode
from models.checkpoint import Checkpoint, load_checkpoint, save_checkpoint
from scripts.lab.narrow_checkpoint import main as narrow_main, narrow
from training.selfplay import initial_net, seed_state
from training.distill import record_positions


@pytest.fixture(scope="module")
def boards() -> np.ndarray:
    return record_positions(initial_net(8, 5, features=True), 2, seed_state(1, 0))


def net_with_idle_units():
    """8 units: 0 and 1 constant (no incoming weights), 2 silent (no outgoing weights)."""
    net = initial_net(8, 7, features=True)
    with torch.no_grad():
        net.hidden.weight[:2] = 0.0
        net.hidden.bias[:2] = torch.tensor([0.7, -1.3])
        net.out.weight[:, 2] = 0.0
        net.hidden.weight.mul_(3.0)  # spread the other units' activations
    return net


def test_narrowing_drops_idle_units_and_computes_the_same(boards: np.ndarray) -> None:
    net = net_with_idle_units()
    small = narrow(net, 5, boards)
    torch.testing.assert_close(small.hidden.weight, net.hidden.weight[3:])
    x = torch.from_numpy(encode(boards, True))
    with torch.no_grad():
        torch.testing.assert_close(small(x), net(x), rtol=0, atol=1e-6)
        assert not torch.allclose(narrow(net, 3, boards)(x), net(x), atol=1e-3)


def test_narrow_command_writes_a_recorded_checkpoint(boards: np.ndarray, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    src, data, out = tmp_path / "n.pt", tmp_path / "p.npz", tmp_path / "s.pt"
    save_checkpoint(src, Checkpoint(net_with_idle_units(), {"hidden": 8, "features": True}, 100))
    np.savez(data, boards=boards)
    assert narrow_main([str(src), str(data), "--hidden", "5", "--out", str(out)]) == 0
    ckpt = load_checkpoint(out)
    assert (ckpt.net.n_hidden, ckpt.config["hidden"], ckpt.games_trained) == (5, 5, 100)
    assert ckpt.trainer_state["narrowed"] == [{"from": 8, "to": 5, "positions": "p.npz", "seed": 0}]
    capsys.readouterr()
    for bad in (["--hidden", "8"], ["--hidden", "0"]):
        assert narrow_main([str(src), str(data), *bad, "--out", str(tmp_path / "x.pt")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "between 1 and" in err
    assert narrow_main([str(src), str(tmp_path / "none.npz"), "--hidden", "4", "--out", str(tmp_path / "x.pt")]) == 2
    assert "does not exist" in capsys.readouterr().err and not (tmp_path / "x.pt").exists()
