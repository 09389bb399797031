"""tdgammon recipe: validation, the smoke recipe end to end, exact resume after SIGKILL, Ray."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

from engine.errors import ConfigError
from engine.position import Position
from models.checkpoint import load_members
from models.loader import load_network
from scripts.cli import main
from training.recipe import MANIFEST, RecipeRun, sha256
from training.recipe_config import load_recipe
from training.recipe_tasks import SerialExecutor

ROOT = Path(__file__).resolve().parents[1]

STAGE = """seed = 3
hidden = 8
lr = 0.1
lr_end = 0.1
lr_decay_games = 0
games = 200
checkpoint_every = 100
eval_every = 0
"""

TINY = """name = "tiny"
seed = 5
[[member]]
stages = [{ config = "stage.toml", games = 120 }]
[[member]]
seed = 4
stages = [{ config = "stage.toml", games = 100 }, { config = "stage.toml", games = 160 }]
[round_defaults]
games = 4
validation_games = 2
shard_games = 1
near_misses = 1
epochs = 2
[[round]]
[[round]]
widen = 10
[gate]
positions = 10
pit_games = 10
check_games = 10
[screen]
games = 4
positions = 20
held_out = 5
hidden = 8
epochs = 1
"""


def tiny_recipe(folder: Path, text: str = TINY) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "stage.toml").write_text(STAGE)
    (folder / "tiny.toml").write_text(text)
    return folder / "tiny.toml"


def weights(path: Path) -> list[torch.Tensor]:
    return [t for m in load_members(path) for t in m.net.state_dict().values()]


def same_weights(a: Path, b: Path) -> bool:
    return all(torch.equal(x, y) for x, y in zip(weights(a), weights(b), strict=True))


def run_tiny(recipe: Path, out: Path, executor=None) -> dict:
    return RecipeRun(load_recipe(recipe), out, executor or SerialExecutor(), progress=False).run()


@pytest.mark.parametrize("text, fault", [
    ("seed = 1\n", "at least one [[member]]"),
    ('[[member]]\nstages = [{ config = "nope.toml" }]\n', "not found"),
    ('[[member]]\nstages = [{ config = "stage.toml" }]\n[[round]]\nteacher_ply = 4\n', "teacher_ply must be"),
    ('[[member]]\nstages = [{ config = "stage.toml" }]\n[[round]]\nplayers = [3]\n', "member indices"),
    ('[[member]]\nstages = [{ config = "stage.toml", games = 50 }, { config = "stage.toml", games = 40 }]\n',
     "go past"),
    ('[[member]]\nstages = [{ config = "stage.toml" }]\n[gate]\nfoo = 1\n', "unknown key 'foo'"),
    ('[[member]]\nstages = [{ config = "stage.toml" }]\n[screen]\nepochs = 0\n', "screen: epochs"),
])
def test_bad_recipes_are_refused_in_one_line(tmp_path: Path, text: str, fault: str) -> None:
    with pytest.raises(ConfigError, match=fault.replace("[", r"\[")):
        load_recipe(tiny_recipe(tmp_path, text))


def test_recipe_cli_refuses_bad_input_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["recipe", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert main(["recipe", str(tiny_recipe(tmp_path)), "--out", str(tmp_path / "o"), "--workers", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "is a directory" in err[0] and "--workers" in err[1]


def test_shipped_recipes_load() -> None:
    shipped = load_recipe(ROOT / "configs" / "recipe.toml")
    assert len(shipped.members) == 3 and len(shipped.rounds) == 10 and shipped.rounds[5].widen == 512
    assert [m.stages[-1].games for m in shipped.members] == [1_200_000, 1_121_700, 2_400_000]
    load_recipe(ROOT / "configs" / "recipe-smoke.toml")


def test_a_task_loads_a_model_without_leaving_a_file_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    from training import recipe_tasks

    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setattr(recipe_tasks, "_LOADED", {})
    blob = recipe_tasks.ModelBlob.read(ROOT / "models" / "tesauro-198-80.pt")
    evaluator = recipe_tasks._cached("eval", blob)
    assert recipe_tasks._cached("net", blob).n_hidden == 80 and evaluator.evaluate(Position.start().board[None]).shape == (1, 5)
    assert list(temp.iterdir()) == []


@pytest.mark.slow
def test_tiny_recipe_records_every_step_and_a_rerun_changes_nothing(tmp_path: Path) -> None:
    recipe = tiny_recipe(tmp_path / "cfg")
    out = tmp_path / "run"
    final = run_tiny(recipe, out)
    manifest = json.loads((out / MANIFEST).read_text())
    assert list(manifest["steps"])[:4] == ["td/m0/s0", "td/m1/s0", "td/m1/s1", "round0/ensemble"]
    assert {"round2/widen", "round2/gate", "screen", "final"} <= set(manifest["steps"])
    assert load_network(out / "model.pt", race_net=None).screen is not None
    for step in manifest["steps"].values():
        assert step["artefacts"] and all(sha256(out / rel) == digest for rel, digest in step["artefacts"].items())
    gate = json.loads((out / "rounds" / "1" / "gate.json").read_text())
    assert gate["positions"] == 10 and isinstance(gate["kept"], bool)
    assert load_members(out / "model.pt")[0].net.n_hidden == (10 if final["from_round"] == 2 else 8)
    card = (out / "MODEL_CARD.md").read_text()
    assert sha256(out / "model.pt") in card and "round 2: widened to 10 units" in card and "model.screen.pt" in card
    before = (out / "model.pt").read_bytes()
    assert run_tiny(recipe, out) == final and (out / "model.pt").read_bytes() == before


@pytest.mark.slow
def test_sigkill_mid_distillation_then_rerun_gives_the_same_weights(tmp_path: Path) -> None:
    recipe = tiny_recipe(tmp_path / "cfg")
    run_tiny(recipe, tmp_path / "whole")
    out = tmp_path / "killed"
    command = [sys.executable, "-m", "scripts.cli", "recipe", str(recipe), "--out", str(out), "--no-progress"]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    data = out / "rounds" / "1" / "data"
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None and len(list(data.glob("*.npz"))) < 2:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed mid-distillation"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (out / "model.pt").exists()
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert same_weights(out / "model.pt", tmp_path / "whole" / "model.pt")
    whole = json.loads((tmp_path / "whole" / MANIFEST).read_text())["steps"]
    again = json.loads((out / MANIFEST).read_text())["steps"]
    assert again["round1/positions"]["artefacts"] == whole["round1/positions"]["artefacts"]


@pytest.mark.ray
@pytest.mark.slow
def test_ray_backend_with_a_killed_worker_gives_the_local_runs_data(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    from training.recipe_tasks import RayExecutor

    recipe = tiny_recipe(tmp_path / "cfg", TINY.replace("[[round]]\nwiden = 10\n", ""))
    run_tiny(recipe, tmp_path / "local")
    pid_file = tmp_path / "pids"
    killed: list[int] = []
    done = threading.Event()

    def killer() -> None:   # kills the Ray worker that took the first teacher task, once
        while not done.is_set() and not killed:
            if pid_file.exists() and pid_file.read_text().strip():
                pid = int(pid_file.read_text().split()[0])
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            time.sleep(0.005)

    executor = RayExecutor(None, 2, str(pid_file))
    thread = threading.Thread(target=killer)
    thread.start()
    try:
        run_tiny(recipe, tmp_path / "ray", executor)
    finally:
        done.set()
        thread.join()
        executor.close()
    assert killed, "no worker was killed"
    local = json.loads((tmp_path / "local" / MANIFEST).read_text())["steps"]
    ray = json.loads((tmp_path / "ray" / MANIFEST).read_text())["steps"]
    assert ray["round1/positions"]["artefacts"] == local["round1/positions"]["artefacts"]
    assert ray["round1/gate"]["gain_mpd"] == local["round1/gate"]["gain_mpd"]
    assert same_weights(tmp_path / "ray" / "model.pt", tmp_path / "local" / "model.pt")


@pytest.mark.slow
def test_smoke_recipe_beats_random(tmp_path: Path) -> None:
    """configs/recipe-smoke.toml, as CI runs it: every kind of step, a model that beats random."""
    final = RecipeRun(load_recipe(ROOT / "configs" / "recipe-smoke.toml"), tmp_path, SerialExecutor(),
                      progress=False).run()
    assert final["random"]["win_rate"] >= 0.85
    assert (tmp_path / "MODEL_CARD.md").exists()
