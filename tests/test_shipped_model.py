"""The shipped model: an ensemble of three self-play nets, each widened to 512 units,
distilled from our own search in ten rounds, fitted in an eleventh to our own rollouts
of back games and in a twelfth to our own rollouts of disputed positions, that beats
pubeval and random. What it was made from is read from the
checkpoint itself, as the model card promises it."""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from engine.pit.harness import SearchPlayer, play_pit_game
from engine.pit.stats import summarize
from models.checkpoint import load_checkpoint, load_members
from models.loader import load_evaluator, screen_path
from models.paths import DEFAULT_MODEL, TESAURO_MODEL
from training.config import TrainConfig, load_config
from training.selfplay import Weights, benchmark

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
WIDE = 512
ROUNDS = 10
ROUND_11_SHA256 = "6534d4c174fcfc0925b5f20505a3391c9a0df4afde5d9a2b129b669560974819"  # the teacher of the twelfth fit
# A record names a model by its file name and the start of its SHA-256 (scripts.lab.distill
# identify), and a positions file by its file name: never a directory of the machine it was made on.
MODEL = re.compile(r"[^/\\]+\.pt \(sha256 [0-9a-f]{16}\)")
DATA = re.compile(r"[^/\\]+\.npz")


def _recipes() -> list[TrainConfig]:
    """Each member's recipe, as the model card gives it, to its last game (trained at its
    own width, then widened)."""
    stage2, h80_stage3 = (load_config(CONFIGS / name) for name in ("default-stage2.toml", "h80-stage3.toml"))
    return [replace(c, hidden=WIDE) for c in (stage2, replace(stage2, games=1_121_700), h80_stage3)]


def _strings(value: object) -> list[str]:
    """Every string in a checkpoint's payload (keys and values), tensors aside."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _strings(k) + _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def test_shipped_model_is_three_self_play_nets_each_describing_itself() -> None:
    """Member 0 is the two-stage recipe's net (stage 2's config is its own), member 1 the
    same recipe from another start, member 2 the 80-unit net of configs/h80*.toml (read as
    today's TrainConfig, so keys added since they were saved take their defaults); each
    played at least a million self-play games, then was widened to 512 units."""
    members = load_members(DEFAULT_MODEL)
    assert len(members) == 3
    assert [TrainConfig.from_dict(m.config) for m in members] == _recipes()
    for member in members:
        assert member.games_trained == member.config["games"] >= 1_000_000
        assert member.net.n_hidden == member.config["hidden"] == WIDE and member.net.features
        assert len(member.trainer_state["rng_states"]) == member.config["workers"]
    trained = [load_config(CONFIGS / name).hidden for name in ("default.toml", "default.toml", "h80.toml")]
    assert [m.trainer_state["widened"] for m in members] == [
        [{"from": hidden, "to": WIDE, "seed": 1}] for hidden in trained]


def test_each_member_was_distilled_in_ten_rounds_then_fitted_to_rollouts_twice() -> None:
    """The model card's last steps: scripts.lab.distill fit, each round on new positions valued
    by a new teacher (the previous round's ensemble; the tenth by it at 2-ply and by its member 0
    at 3-ply), the same data for every member, each fit lowering the held-out error. Records
    made before near misses existed (before c391b0f, 2026-12-01) have no near_misses, nor those
    before the 3-ply teacher (5177359, 2026-12-05) teacher_plies: they had none, and 2-ply.
    The eleventh fit: each member's own values of its self-play positions and the same back
    games valued by the round 10 ensemble's rollouts, measured on back games of other games.
    The twelfth: its own values again and the same disputed positions valued by the round 11
    ensemble's rollouts (eight times over), measured on disputed positions of later games."""
    members = load_members(DEFAULT_MODEL)
    records = [m.trainer_state["distilled"] for m in members]
    assert [len(r) for r in records] == [ROUNDS + 2] * 3
    for i, rs in enumerate(records):
        last = rs[ROUNDS + 1]
        assert set(last["data"]) == {f"anchor13-{i}.npz", "ro1401-train.npz", "ro1402-train.npz"}
        assert last["data"].count("ro1401-train.npz") == last["data"].count("ro1402-train.npz") == 8
        assert last["teacher_rollouts"] == [0, 36]
        assert any(t.startswith(f"m{i}.pt ") for t in last["teachers"])
        assert f"E11.pt (sha256 {ROUND_11_SHA256[:16]})" in last["teachers"]
        assert last["val_mse"][-1] < 0.9 * last["val_mse"][0]
    tenth = records[0][ROUNDS - 1]["teachers"]
    for i, rs in enumerate(records):
        last = rs[ROUNDS]
        assert set(last["data"]) == {f"anchor{i}.npz", "bg0.npz", "bg1.npz"}
        assert last["data"].count("bg0.npz") == last["data"].count("bg1.npz") == 10
        assert any(t.startswith(f"m{i}.pt ") for t in last["teachers"])
        assert last["val_mse"][-1] < 0.5 * last["val_mse"][0]
    assert all(t.startswith("default.pt ") and t not in tenth for t in set.intersection(
        *[set(rs[ROUNDS]["teachers"]) for rs in records]))
    records = [rs[:ROUNDS] for rs in records]
    fitted = [[{k: v for k, v in r.items() if not k.startswith("val_")} for r in rs] for rs in records]
    assert fitted[0] == fitted[1] == fitted[2]
    teachers = [t for r in records[0] for t in r["teachers"]]
    assert len(set(teachers)) == len(teachers) == ROUNDS + 1
    assert [r.get("teacher_plies", [2]) for r in records[0]] == [[2]] * (ROUNDS - 1) + [[2, 3]]
    assert [len(r["teachers"]) for r in records[0]] == [1] * (ROUNDS - 1) + [2]
    assert [r.get("near_misses", [0]) for r in records[0]] == [[0]] * 4 + [[2]] + [[4]] * 5
    for record in records[0]:
        assert all(MODEL.fullmatch(t) for t in record["teachers"]), record["teachers"]
        assert record["data"] and all(DATA.fullmatch(d) for d in record["data"]), record["data"]
        assert record["positions"] >= 500_000
    for rs in records:
        for r in rs:
            assert len(r["val_mse"]) == r["epochs"] + 1  # before the fit, then after each epoch
            assert r["val_mse"][-1] < 0.9 * r["val_mse"][0]
        assert rs[0]["val_mse"][-1] < 0.7 * rs[0]["val_mse"][0]


def test_the_step_size_schedule_and_the_held_out_games() -> None:
    """Rounds 1-5 with Adam at 3e-4; the sixth, after widening, with the step falling from 3e-3
    to 0, the seventh (6 epochs) and the rest (8) from 1e-3 to 0, the two rollout fits (3) from
    2e-4 to 0, each from the seventh on measured on positions of other games (a validation file
    none of the data files is)."""
    for member in load_members(DEFAULT_MODEL):
        records = member.trainer_state["distilled"]
        assert [(r["epochs"], r["lr"], r.get("lr_end")) for r in records] == (
            [(6, 3e-4, None)] * 5 + [(6, 3e-3, 0.0), (6, 1e-3, 0.0)] + [(8, 1e-3, 0.0)] * 3 + [(3, 2e-4, 0.0)] * 2)
        assert ["validate" in r for r in records] == [False] * 6 + [True] * 6
        for r in records[6:]:
            assert DATA.fullmatch(r["validate"]) and r["validate"] not in r["data"]


@pytest.mark.parametrize("path", [DEFAULT_MODEL, TESAURO_MODEL, screen_path(DEFAULT_MODEL)],
                         ids=["default", "tesauro-198-80", "default.screen"])
def test_shipped_files_name_no_directories(path: Path) -> None:
    """Every string a shipped checkpoint holds is free of paths: no absolute path, no directory
    of the machine that built it, in the payload or in the file's raw bytes."""
    payload = torch.load(path, map_location="cpu", weights_only=True)
    for s in _strings(payload):
        assert not s.startswith(("/", "~")) and "/" not in s and "\\" not in s, s
    raw = Path(path).read_bytes()
    for folder in ("work", "root", "home", "tmp", "Users"):
        assert f"/{folder}/".encode() not in raw, folder
    assert b"runs/" not in raw


def test_the_model_card_names_the_shipped_files_by_sha256() -> None:
    card = (DEFAULT_MODEL.parent / "MODEL_CARD.md").read_text()
    for path in (DEFAULT_MODEL, screen_path(DEFAULT_MODEL)):
        assert hashlib.sha256(path.read_bytes()).hexdigest() in card, path.name


def test_the_previous_default_recipe_still_loads() -> None:
    """configs/h80*.toml: the 80-unit net, the default alone until the 128-unit net replaced it
    (30e1dda, 2026-12-01; the model card has it)."""
    stages = [load_config(CONFIGS / name) for name in ("h80.toml", "h80-stage2.toml", "h80-stage3.toml")]
    assert [s.hidden for s in stages] == [80, 80, 80]
    assert stages[0].games < stages[1].games < stages[2].games


@pytest.mark.slow
def test_pubeval_loses_to_each_member_and_random_loses_to_all() -> None:
    """1-ply over 1,000 games each with the numba benchmark (measured +0.54 ppg over 10,000
    with `tdgammon pit` for member 0, +0.56 for the ensemble)."""
    for member in load_members(DEFAULT_MODEL):
        weights = Weights(member.net)
        vs_pubeval = benchmark(weights, "pubeval", 1000, seed=5)
        assert vs_pubeval.mean() > 0.25 and (vs_pubeval > 0).mean() > 0.57
        vs_random = benchmark(weights, "random", 300, seed=5)
        assert (vs_random > 0).mean() > 0.97 and np.mean(vs_random) > 2.0


@pytest.mark.slow
def test_the_ensemble_beats_pubeval_through_the_pit() -> None:
    """The shipped file as every command plays it (load_evaluator: the members' mean)."""
    ours = SearchPlayer(load_evaluator(None), 1, "default")
    pubeval = SearchPlayer(load_evaluator("pubeval"), 1, "pubeval")
    stats = summarize([play_pit_game(ours, pubeval, 5, i, duplicate=True) for i in range(200)], True)
    assert stats.ppg > 0.2 and stats.win_rate > 0.55


@pytest.mark.slow
def test_the_previous_198_input_model_still_plays() -> None:
    """models/tesauro-198-80.pt: Tesauro's inputs only (measured +0.43 ppg vs pubeval)."""
    ckpt = load_checkpoint(TESAURO_MODEL)
    assert not ckpt.net.features and ckpt.net.hidden.in_features == 198
    vs_pubeval = benchmark(Weights(ckpt.net), "pubeval", 1000, seed=6)
    assert vs_pubeval.mean() > 0.2
