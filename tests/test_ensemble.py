"""Ensembles (models.network.TDNetEnsemble, scripts/lab/ensemble.py): the mean of member nets,
kept whole in one file, refused by training with one line, and taken apart losslessly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from engine.encoder import encode
from engine.errors import CheckpointError
from engine.position import Position
from models.checkpoint import load_checkpoint, load_members, load_play_net
from models.loader import load_evaluator
from models.inference import NetworkEvaluator
from models.network import TDNetEnsemble
from scripts.lab.ensemble import main as ensemble_main
from training.config import TrainConfig
from training.trainer import Trainer

ROOT = Path(__file__).resolve().parent.parent
TINY = dict(seed=3, hidden=8, games=25, workers=1, chunk_games=25, checkpoint_every=25,
            eval_every=0, eval_games=0, lr_decay_games=0, features=True)


@pytest.fixture(scope="module")
def members(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two nets of different widths and seeds, trained 25 games each."""
    root = tmp_path_factory.mktemp("members")
    paths = []
    for name, hidden, seed in (("a", 8, 3), ("b", 12, 4)):
        Trainer(TrainConfig(**{**TINY, "hidden": hidden, "seed": seed}), root / name, progress=False).run()
        paths.append(root / name / "checkpoint.pt")
    return paths


@pytest.fixture(scope="module")
def ensemble(members: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ensemble") / "ens.pt"
    assert ensemble_main(["build", *map(str, members), "--out", str(out)]) == 0
    return out


def _boards() -> np.ndarray:
    start = Position.start().board
    odd = start.copy()
    odd[0, 5] -= 2
    odd[0, 3] += 2
    return np.stack([start, odd])


def test_the_ensemble_plays_the_mean_of_its_members(members: list[Path], ensemble: Path) -> None:
    nets = [load_checkpoint(p).net for p in members]
    x = torch.from_numpy(encode(_boards(), True))
    want = (nets[0](x) + nets[1](x)) / 2
    assert not torch.allclose(nets[0](x), nets[1](x))
    torch.testing.assert_close(load_play_net(ensemble)(x), want, rtol=0, atol=1e-7)
    evaluator = load_evaluator(str(ensemble))
    np.testing.assert_allclose(evaluator.evaluate(_boards()),
                               NetworkEvaluator(TDNetEnsemble(nets)).evaluate(_boards()), atol=1e-7)


def test_extract_gives_back_each_member_whole_and_it_resumes(members: list[Path], ensemble: Path,
                                                            tmp_path: Path) -> None:
    for index, path in enumerate(members):
        out = tmp_path / f"m{index}.pt"
        assert ensemble_main(["extract", str(ensemble), str(index), "--out", str(out)]) == 0
        got, want = load_checkpoint(out), load_checkpoint(path)
        assert (got.config, got.games_trained, got.trainer_state) == (want.config, want.games_trained,
                                                                      want.trainer_state)
        for name, value in want.net.state_dict().items():
            assert torch.equal(got.net.state_dict()[name], value)
    config = TrainConfig.from_dict(load_checkpoint(tmp_path / "m1.pt").config)
    Trainer(config, tmp_path / "more", resume=tmp_path / "m1.pt", total_games=50, progress=False).run()
    assert load_checkpoint(tmp_path / "more" / "checkpoint.pt").games_trained == 50


def test_list_and_a_plain_checkpoint_as_one_member(members: list[Path], ensemble: Path,
                                                  capsys: pytest.CaptureFixture) -> None:
    assert ensemble_main(["list", str(ensemble)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["0: 8 hidden, 234 inputs, 25 games", "1: 12 hidden, 234 inputs, 25 games"]
    assert [m.net.n_hidden for m in load_members(members[0])] == [8]


def test_training_refuses_an_ensemble_with_one_line_exit_2(ensemble: Path, tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="ensemble of 2 nets"):
        load_checkpoint(ensemble)
    proc = subprocess.run([sys.executable, "-m", "scripts.cli", "train", "--resume", str(ensemble),
                           "--out", str(tmp_path / "run")], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "scripts.lab.ensemble extract" in proc.stderr
    assert not (tmp_path / "run").exists()


def test_build_refuses_one_net_or_mixed_inputs(members: list[Path], tmp_path: Path,
                                                capsys: pytest.CaptureFixture) -> None:
    Trainer(TrainConfig(**{**TINY, "features": False}), tmp_path / "plain", progress=False).run()
    for inputs in ([members[0]], [members[0], tmp_path / "plain" / "checkpoint.pt"]):
        out = tmp_path / "bad.pt"
        assert ensemble_main(["build", *map(str, inputs), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "two or more nets that read the same inputs" in err
        assert not out.exists()


def test_extract_refuses_a_missing_member(ensemble: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture) -> None:
    assert ensemble_main(["extract", str(ensemble), "2", "--out", str(tmp_path / "m.pt")]) == 2
    assert "has members 0-1, not 2" in capsys.readouterr().err


def test_a_damaged_ensemble_is_refused_with_one_line(ensemble: Path, tmp_path: Path) -> None:
    payload = torch.load(ensemble, weights_only=True)
    bad = tmp_path / "bad.pt"
    torch.save({**payload, "members": payload["members"][:1]}, bad)
    with pytest.raises(CheckpointError, match="does not list its member nets"):
        load_members(bad)
    member = payload["members"][1]
    torch.save({**payload, "members": [payload["members"][0], {**member, "state_dict": {}}]}, bad)
    proc = subprocess.run([sys.executable, "-m", "scripts.cli", "hint", "4HPwATDgc/ABMA", "31",
                           "--model", str(bad)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "weights do not match its architecture" in proc.stderr
