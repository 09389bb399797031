"""The shipped model: a real checkpoint that beats pubeval and random (issues 3 and 6)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from models.checkpoint import load_checkpoint
from models.paths import DEFAULT_MODEL, TESAURO_MODEL
from training.config import TrainConfig, load_config
from training.selfplay import Weights, benchmark

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def test_shipped_checkpoint_describes_itself() -> None:
    ckpt = load_checkpoint(DEFAULT_MODEL)
    assert ckpt.games_trained >= 1_000_000
    assert ckpt.config["hidden"] == ckpt.net.n_hidden
    assert len(ckpt.trainer_state["rng_states"]) == ckpt.config["workers"]


def test_shipped_checkpoint_was_made_by_the_two_stage_recipe() -> None:
    """The model card's recipe: stage 2's config is the checkpoint's own, to its last game
    (read as today's TrainConfig, so keys added since it was saved take their defaults)."""
    ckpt = load_checkpoint(DEFAULT_MODEL)
    stage1, stage2 = (load_config(CONFIGS / name) for name in ("default.toml", "default-stage2.toml"))
    assert TrainConfig.from_dict(ckpt.config) == stage2
    assert ckpt.games_trained == stage2.games > stage1.games
    assert ckpt.net.n_hidden == stage1.hidden == stage2.hidden


def test_the_previous_default_recipe_still_loads() -> None:
    """configs/h80*.toml: the 80-unit net shipped until session 7 (the model card has it)."""
    stages = [load_config(CONFIGS / name) for name in ("h80.toml", "h80-stage2.toml", "h80-stage3.toml")]
    assert [s.hidden for s in stages] == [80, 80, 80]
    assert stages[0].games < stages[1].games < stages[2].games


def test_pubeval_loses_to_the_shipped_network_and_random_loses_to_both() -> None:
    """1-ply over 2,000 games (measured +0.53 ppg over 10,000 with `tdgammon pit`)."""
    weights = Weights(load_checkpoint(DEFAULT_MODEL).net)
    vs_pubeval = benchmark(weights, "pubeval", 2000, seed=5)
    assert vs_pubeval.mean() > 0.25 and (vs_pubeval > 0).mean() > 0.57
    vs_random = benchmark(weights, "random", 500, seed=5)
    assert (vs_random > 0).mean() > 0.97 and np.mean(vs_random) > 2.0


def test_the_previous_198_input_model_still_plays() -> None:
    """models/tesauro-198-80.pt: Tesauro's inputs only (measured +0.43 ppg vs pubeval)."""
    ckpt = load_checkpoint(TESAURO_MODEL)
    assert not ckpt.net.features and ckpt.net.hidden.in_features == 198
    assert load_checkpoint(DEFAULT_MODEL).net.features
    vs_pubeval = benchmark(Weights(ckpt.net), "pubeval", 1000, seed=6)
    assert vs_pubeval.mean() > 0.2
