"""Trainer: kernels against torch, config validation, learning, determinism, resume, signals."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from engine.encoder import N_INPUTS, encode, encode_sparse, encode_sparse_features
from engine.errors import CheckpointError, ConfigError
from engine.features import FEATURE_COUNTS, FEATURES_VERSION
from engine.game import EvaluatorPlayer, play_game
from engine.position import Position
from models.checkpoint import load_checkpoint
from models.inference import NetworkEvaluator
from training.config import TrainConfig, load_config
from training.kernels import FLIP_PERM, FLIP_SIGN, Scratch, add_gradient, forward_sparse
from training.selfplay import SelfPlay, Weights, benchmark, initial_net, seed_state
from training.trainer import Trainer

ROOT = Path(__file__).resolve().parent.parent
TINY = dict(seed=3, hidden=8, games=200, workers=1, chunk_games=25, checkpoint_every=100,
            eval_every=0, eval_games=0, lr_decay_games=0)


def _odd_board() -> np.ndarray:
    board = Position.start().board.copy()
    board[0, 5] -= 2
    board[0, 3] += 2
    board[1, 23] -= 1
    board[1, 24] += 1
    return board


# -- kernels ----------------------------------------------------------------------------
@pytest.mark.parametrize("features", [False, True])
@pytest.mark.parametrize("flipped", [False, True])
def test_trace_gradient_matches_autograd(flipped: bool, features: bool) -> None:
    net = initial_net(16, 3, features)
    weights = Weights(net)
    s = Scratch(16, weights.inputs)
    enc, td = s.moves.cand, s.td
    board = _odd_board()
    m = (encode_sparse_features if features else encode_sparse)(board, enc.idx, enc.val)
    forward_sparse(weights.as_tuple(), enc, m)
    x = torch.from_numpy(encode(board, features))[None]
    np.testing.assert_allclose(enc.y, net(x)[0].detach().numpy(), atol=1e-6)
    add_gradient(weights.w2, td, enc, m, flipped)
    for k in range(5):
        net.zero_grad()
        y = net(x)[0]
        (FLIP_SIGN[k] * y[FLIP_PERM[k]] if flipped else y[k]).backward()
        np.testing.assert_allclose(td.e_w1[k], net.hidden.weight.grad.numpy().T, atol=1e-7)
        np.testing.assert_allclose(td.e_b1[k], net.hidden.bias.grad.numpy(), atol=1e-7)
        np.testing.assert_allclose(td.e_w2[k], net.out.weight.grad.numpy().T, atol=1e-6)
        np.testing.assert_allclose(td.e_b2[k], net.out.bias.grad.numpy(), atol=1e-6)


@pytest.mark.parametrize("features", [False, True])
def test_self_play_move_choice_agrees_with_torch(features: bool) -> None:
    """choose_net scores the candidates with a carried accumulator (engine.layers): the
    chosen afterstate's outputs and hidden layer are torch's to 1e-5, its sparse inputs
    the encoder's, and no candidate scores more than 1e-5 above it by torch's reckoning."""
    from engine.dice import ALL_ROLLS
    from engine.movegen import generate
    from training.kernels import choose_net, ruled_equity

    net = initial_net(64, 5, features)
    weights = Weights(net)
    s = Scratch(64, weights.inputs)
    rng = seed_state(0, 0)
    boards = [Position.start().board, _odd_board(), Position.from_id("4PPgASTgc/ABMA").board]
    for board in boards:
        for d1, d2, _ in ALL_ROLLS:
            chosen = board.copy()
            m = choose_net(weights.as_tuple(), chosen, d1, d2, 0.0, rng, s.moves, s.end)
            afterstates, _ = generate(board, d1, d2)
            x = torch.from_numpy(encode(afterstates, features))
            with torch.no_grad():
                y = net(x).numpy()
                hidden = torch.sigmoid(net.hidden(x)).numpy()
            k = int(np.nonzero((afterstates == chosen).all(axis=(1, 2)))[0][0])
            np.testing.assert_allclose(s.moves.best.y, y[k], rtol=0, atol=1e-5)
            np.testing.assert_allclose(s.moves.best.hidden, hidden[k], rtol=0, atol=1e-5)
            idx, val = np.empty_like(s.moves.best.idx), np.empty_like(s.moves.best.val)
            n = (encode_sparse_features if features else encode_sparse)(chosen, idx, val)
            assert m == n
            np.testing.assert_array_equal(s.moves.best.idx[:m], idx[:n])
            np.testing.assert_array_equal(s.moves.best.val[:m], val[:n])
            scores = [ruled_equity(a, y[j]) for j, a in enumerate(afterstates)]
            assert max(scores) <= scores[k] + 1e-5


def test_new_inputs_lr_scales_only_the_newest_features_traces() -> None:
    """new_inputs_lr multiplies the traces (so the updates) of the inputs the newest features
    version added, and leaves every other input's, the hidden biases' and the outputs' alone."""
    net = initial_net(16, 3, True)
    weights = Weights(net)
    board = _odd_board()
    traces = []
    for scale in (1.0, 4.0):
        s = Scratch(16, weights.inputs, new_inputs_lr=scale)
        enc = s.moves.cand
        m = encode_sparse_features(board, enc.idx, enc.val)
        forward_sparse(weights.as_tuple(), enc, m)
        add_gradient(weights.w2, s.td, enc, m, False)
        traces.append(s.td)
    new = N_INPUTS + FEATURE_COUNTS[FEATURES_VERSION - 1]
    plain, scaled = traces
    assert np.abs(plain.e_w1[:, new:]).max() > 0          # the odd board sets some new inputs
    np.testing.assert_allclose(scaled.e_w1[:, new:], 4.0 * plain.e_w1[:, new:], rtol=1e-6)
    np.testing.assert_array_equal(scaled.e_w1[:, :new], plain.e_w1[:, :new])
    np.testing.assert_array_equal(scaled.e_b1, plain.e_b1)
    np.testing.assert_array_equal(scaled.e_w2, plain.e_w2)
    assert (Scratch(16).td.input_lr == 1.0).all()            # 198 inputs: nothing is new


# -- configuration ----------------------------------------------------------------------
def test_shipped_configs_load() -> None:
    assert load_config(ROOT / "configs" / "default.toml").games >= 1_000_000
    assert load_config(ROOT / "configs" / "default.toml").features
    assert not load_config(ROOT / "configs" / "tesauro.toml").features
    assert load_config(ROOT / "configs" / "smoke.toml").workers == 1
    from training.recipe_config import load_recipe

    for path in sorted((ROOT / "configs").glob("*.toml")):   # every config the docs quote still loads
        if path.name.startswith("recipe"):
            assert load_recipe(path).members, path.name
        else:
            assert load_config(path).games > 0, path.name


@pytest.mark.parametrize("data, message", [
    ({"hiden": 80}, "unknown key 'hiden'"),
    ({"hidden": "80"}, "'hidden' must be int"),
    ({"hidden": 8.0}, "'hidden' must be int"),
    ({"lr": True}, "'lr' must be float"),
    ({"features": 1}, "'features' must be bool"),
    ({"td_lambda": 1.5}, "td_lambda"),
    ({"workers": 0}, "workers"),
    ({"new_inputs_lr_scale": 0.0}, "new_inputs_lr_scale"),
])
def test_config_rejects_bad_values(data: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        TrainConfig.from_dict(data)


def test_learning_rate_schedule() -> None:
    cfg = TrainConfig(lr=0.1, lr_end=0.02, lr_decay_games=1000)
    assert cfg.lr_at(0) == pytest.approx(0.1)
    assert cfg.lr_at(500) == pytest.approx(0.06)
    assert cfg.lr_at(5000) == pytest.approx(0.02)


def test_cli_bad_config_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("seed = 1\nhidden_units = 40\n")
    proc = subprocess.run([sys.executable, "-m", "scripts.cli", "train", "--config", str(bad),
                           "--out", str(tmp_path / "run")], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "unknown key 'hidden_units'" in proc.stderr


def test_cli_out_that_is_a_file_is_one_line_exit_2(tmp_path: Path) -> None:
    taken = tmp_path / "notes.txt"
    taken.write_text("mine\n")
    proc = subprocess.run([sys.executable, "-m", "scripts.cli", "train", "--config", "configs/smoke.toml",
                           "--out", str(taken), "--no-progress"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "cannot use" in proc.stderr
    assert taken.read_text() == "mine\n"


# -- determinism, resume, checkpoints ---------------------------------------------------
def _weights_of(path: Path) -> list[np.ndarray]:
    return [t.numpy() for t in load_checkpoint(path).net.state_dict().values()]


def test_same_seed_same_weights_and_resume_equals_uninterrupted(tmp_path: Path) -> None:
    cfg = TrainConfig(**TINY)
    Trainer(cfg, tmp_path / "a", progress=False).run()
    Trainer(cfg, tmp_path / "b", progress=False).run()
    Trainer(cfg, tmp_path / "c", total_games=100, progress=False).run()
    resumed = Trainer(cfg, tmp_path / "c", resume=tmp_path / "c" / "checkpoint.pt", progress=False)
    assert resumed.games == 100
    resumed.run()
    a, b, c = (_weights_of(tmp_path / d / "checkpoint.pt") for d in "abc")
    assert load_checkpoint(tmp_path / "c" / "checkpoint.pt").games_trained == 200
    for x, y, z in zip(a, b, c):
        np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(x, z)
    assert not any(p.suffix == ".tmp" for p in (tmp_path / "a").iterdir())


def test_snapshots_survive_a_resume_off_the_multiple(tmp_path: Path) -> None:
    cfg = TrainConfig(**{**TINY, "snapshot_every": 100, "checkpoint_every": 50})
    Trainer(cfg, tmp_path, total_games=75, progress=False).run()
    wider = TrainConfig(**{**TINY, "snapshot_every": 100, "checkpoint_every": 50, "workers": 2})
    Trainer(wider, tmp_path, resume=tmp_path / "checkpoint.pt", total_games=300, progress=False).run()
    snaps = sorted(tmp_path.glob("checkpoint-*.pt"))
    counts = [int(p.stem.split("-")[1]) for p in snaps]
    assert counts[:2] == [125, 225] and len(counts) == 3 and counts[2] >= 300  # the last: the end of the run
    assert all(load_checkpoint(p).games_trained == c for p, c in zip(snaps, counts))


def test_bearoff_target_ends_games_at_exact_races() -> None:
    weights = Weights(initial_net(8, 5))
    moves = {}
    for bearoff in (False, True):
        play = SelfPlay(Weights(weights.to_net()), 1, [int(seed_state(5, 0)[0])], bearoff)
        games, moves[bearoff], _ = play.train(200, 0.05, 0.7, 0.0)
        assert games == 200
    # Each game stops at its first exact bear-off race: fewer moves, yet most of a game remains.
    assert 0.7 * moves[False] < moves[True] < 0.97 * moves[False]


def test_corrupt_or_mismatched_checkpoint_is_refused(tmp_path: Path) -> None:
    cfg = TrainConfig(**TINY)
    Trainer(cfg, tmp_path / "run", total_games=25, progress=False).run()
    good = tmp_path / "run" / "checkpoint.pt"
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(CheckpointError, match="corrupt or truncated"):
        Trainer(cfg, tmp_path / "x", resume=truncated, progress=False)
    with pytest.raises(CheckpointError, match="hidden units"):
        Trainer(TrainConfig(**{**TINY, "hidden": 9}), tmp_path / "y", resume=good, progress=False)
    with pytest.raises(CheckpointError, match="features=True"):
        Trainer(TrainConfig(**{**TINY, "features": True}), tmp_path / "y", resume=good, progress=False)
    proc = subprocess.run([sys.executable, "-m", "scripts.cli", "train", "--resume", str(truncated),
                           "--out", str(tmp_path / "z")], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0


@pytest.mark.slow
def test_sigterm_checkpoints_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    cfg = tmp_path / "long.toml"
    cfg.write_text("seed = 5\nhidden = 8\ngames = 10000000\nworkers = 1\nchunk_games = 10\n"
                   "checkpoint_every = 100000\neval_every = 0\n")
    proc = subprocess.Popen([sys.executable, "-m", "scripts.cli", "train", "--config", str(cfg),
                             "--out", str(out), "--no-progress"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not (out / "metrics.jsonl").exists() and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(2.0)  # let it play some games past start-up
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert "stopped by signal" in stdout
    games = load_checkpoint(out / "checkpoint.pt").games_trained
    assert games > 0 and games % 10 == 0
    trainer = Trainer(load_config(cfg), out, resume=out / "checkpoint.pt", total_games=games + 20,
                      progress=False)
    trainer.run()
    assert load_checkpoint(out / "checkpoint.pt").games_trained == games + 20


# -- learning ---------------------------------------------------------------------------
@pytest.mark.slow
def test_workers_hand_on_every_game_to_the_shared_weights() -> None:
    """Workers train private copies and publish after each game: two workers run one after
    the other end where one worker with each of their dice streams ends, to rounding."""
    start = initial_net(8, 6)
    rngs = [int(seed_state(6, w)[0]) for w in range(2)]
    two = SelfPlay(Weights(start), 2, rngs)
    for worker in range(2):
        two._train(worker, 3, 0.1, 0.7, 0.0)
    one = Weights(start)
    for rng in rngs:
        SelfPlay(one, 1, [rng]).train(3, 0.1, 0.7, 0.0)
    untrained = Weights(initial_net(8, 6)).as_tuple()
    for got, want, before in zip(two.weights.as_tuple(), one.as_tuple(), untrained):
        assert np.abs(want - before).max() > 1e-3   # the six games did learn
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    two.close()


def test_smoke_config_learns(tmp_path: Path) -> None:
    """The smoke run beats random in >= 90% of 400 games and beats its own untrained start."""
    cfg = load_config(ROOT / "configs" / "smoke.toml")
    Trainer(cfg, tmp_path / "smoke", progress=False).run()
    trained = Weights(load_checkpoint(tmp_path / "smoke" / "checkpoint.pt").net)
    vs_random = benchmark(trained, "random", 400, seed=11)
    assert (vs_random > 0).mean() >= 0.90
    start = NetworkEvaluator(initial_net(cfg.hidden, cfg.seed), "untrained")
    learned = NetworkEvaluator(trained.to_net(), "trained")
    rng = np.random.default_rng(2)
    points = [play_game(EvaluatorPlayer(learned), EvaluatorPlayer(start), rng).result
              for _ in range(100)]
    assert np.mean(points) > 0.3 and np.mean(np.array(points) > 0) > 0.6


# -- widening a trained net -------------------------------------------------------------
def test_widened_checkpoint_computes_the_same_and_trains_on(tmp_path: Path) -> None:
    from scripts.lab.widen_checkpoint import main as widen_main

    cfg = TrainConfig(**{**TINY, "features": True})
    Trainer(cfg, tmp_path / "run", total_games=50, progress=False).run()
    narrow = tmp_path / "run" / "checkpoint.pt"
    wide = tmp_path / "wide.pt"
    assert widen_main([str(narrow), "--hidden", "12", "--out", str(wide)]) == 0
    a, b = load_checkpoint(narrow), load_checkpoint(wide)
    assert (b.net.n_hidden, b.config["hidden"], b.games_trained) == (12, 12, 50)
    assert b.trainer_state["widened"] == [{"from": 8, "to": 12, "seed": 1}]
    x = torch.rand(64, a.net.hidden.in_features)
    with torch.no_grad():
        torch.testing.assert_close(b.net(x), a.net(x), rtol=0, atol=1e-6)
    # Every new unit copies a trained one, with its own share of that unit's outgoing weights.
    same = (b.net.hidden.weight[8:, None, :] == a.net.hidden.weight[None]).all(dim=2)
    assert (same.sum(dim=1) == 1).all()
    source = same.float().argmax(dim=1)
    ratio = b.net.out.weight[:, 8:] / a.net.out.weight[:, source]
    assert ((ratio > 0) & (ratio < 1)).all() and ratio.std() > 0.05
    Trainer(TrainConfig(**{**cfg.to_dict(), "hidden": 12}), tmp_path / "wide", resume=wide,
            total_games=100, progress=False).run()
    trained = load_checkpoint(tmp_path / "wide" / "checkpoint.pt")
    assert torch.isfinite(trained.net.out.weight).all() and trained.games_trained == 100
    assert trained.trainer_state["widened"] == b.trainer_state["widened"]


def test_widen_refuses_a_narrower_net(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from scripts.lab.widen_checkpoint import main as widen_main

    Trainer(TrainConfig(**TINY), tmp_path / "run", total_games=25, progress=False).run()
    assert widen_main([str(tmp_path / "run" / "checkpoint.pt"), "--hidden", "8",
                       "--out", str(tmp_path / "w.pt")]) == 2
    assert "must exceed" in capsys.readouterr().err and not (tmp_path / "w.pt").exists()


# -- averaging snapshots ----------------------------------------------------------------
def test_averaged_checkpoint_is_the_mean_and_resumes(tmp_path: Path) -> None:
    from scripts.lab.average_checkpoints import main as average_main

    cfg = TrainConfig(**{**TINY, "checkpoint_every": 25, "snapshot_every": 25})
    Trainer(cfg, tmp_path / "run", total_games=50, progress=False).run()
    snapshots = [tmp_path / "run" / f"checkpoint-{n:09d}.pt" for n in (25, 50)]
    out = tmp_path / "mean.pt"
    assert average_main([*map(str, snapshots), "--out", str(out)]) == 0
    a, b, mean = (load_checkpoint(p) for p in (*snapshots, out))
    assert not torch.equal(a.net.out.weight, b.net.out.weight)
    for name, value in mean.net.state_dict().items():
        torch.testing.assert_close(value, (a.net.state_dict()[name] + b.net.state_dict()[name]) / 2)
    assert (mean.games_trained, mean.config, mean.trainer_state) == (50, b.config, b.trainer_state)
    Trainer(cfg, tmp_path / "more", resume=out, total_games=75, progress=False).run()
    assert load_checkpoint(tmp_path / "more" / "checkpoint.pt").games_trained == 75


def test_average_refuses_different_nets(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from scripts.lab.average_checkpoints import main as average_main

    for name, hidden in (("a", 8), ("b", 12)):
        Trainer(TrainConfig(**{**TINY, "hidden": hidden}), tmp_path / name, total_games=25,
                progress=False).run()
    assert average_main([str(tmp_path / "a" / "checkpoint.pt"), str(tmp_path / "b" / "checkpoint.pt"),
                         "--out", str(tmp_path / "m.pt")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot average" in err and not (tmp_path / "m.pt").exists()
