"""Actor/learner training: trajectories and their replay, local processes and Ray actors,
learning, determinism across backends, dead actors, resume, and the missing-Ray error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.encoder import encode
from engine.position import Position
from models.checkpoint import load_checkpoint
from training import trajectory
from training.actors import LocalBackend
from training.config import TrainConfig, load_config
from training.distributed import DistributedTrainer, lag_bound
from engine.bearoff import exact_race
from training.kernels import Schedule, Scratch, train_games
from training.selfplay import Weights, benchmark, initial_net, seed_state
from training.trajectory import TrajectoryBatch, learn, record_games

try:
    import ray
except ImportError:
    ray = None

needs_ray = pytest.mark.skipif(ray is None, reason="Ray is not installed (pip install -e '.[distributed]')")

ROOT = Path(__file__).resolve().parent.parent
TINY = dict(seed=3, hidden=8, games=400, workers=1, chunk_games=25, checkpoint_every=100,
            eval_every=0, eval_games=0, lr_decay_games=0, staleness_games=100)


def _weights_of(path: Path) -> list[np.ndarray]:
    return [t.numpy() for t in load_checkpoint(path).net.state_dict().values()]


def _assert_same_weights(a: Path, b: Path) -> None:
    for x, y in zip(_weights_of(a), _weights_of(b)):
        np.testing.assert_array_equal(x, y)


def _metrics(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


# -- trajectories and their replay ------------------------------------------------------
@pytest.mark.parametrize("bearoff", [False, True])
def test_recorded_game_replays_like_the_hogwild_kernel_at_zero_lr(bearoff: bool) -> None:
    """With alpha = 0 train_games plays the same game from the same dice: the recorded
    afterstates must give the same moves and the same TD errors when replayed (also when
    games end at exact bear-off races)."""
    weights = Weights(initial_net(16, 4))
    s = Scratch(16, bearoff=bearoff)
    train_games(weights.as_tuple(), 3, Schedule(0.0, 0.7, 0.0), seed_state(9, 0), s.moves, s.td, s.end)
    boards, offsets = record_games(weights.as_tuple(), 3, 0.0, seed_state(9, 0),
                                   Scratch(16, bearoff=bearoff))
    assert offsets[0] == 0 and offsets[-1] == len(boards) == s.td.stats[1]
    games, moves, td = learn(weights.as_tuple(), TrajectoryBatch(boards, offsets, 0, 0), 0.0, 0.7,
                             Scratch(16, bearoff=bearoff))
    assert (games, moves) == (3, int(s.td.stats[1]))
    assert td == pytest.approx(s.td.stats[2], rel=1e-6)
    start = Position.start().board
    for g in range(3):
        game = boards[offsets[g]:offsets[g + 1]]
        assert all(b.sum() <= 30 and b[0].sum() + b[1].sum() >= 1 for b in game)
        if bearoff:  # ends at the first exact bear-off race (or a gammon, which has none)
            assert exact_race(game[-1]) or game[-1][0].sum() == 0
            assert not any(exact_race(b) for b in game[:-1])
        else:
            assert game[-1][0].sum() == 0                      # the last mover has borne off
        assert np.abs(game[0].astype(int) - start).sum() > 0  # the opening play moved checkers


def test_record_replays_from_the_rng_copy_when_the_buffer_is_too_small(monkeypatch) -> None:
    weights = Weights(initial_net(8, 2)).as_tuple()
    big, big_off = record_games(weights, 4, 0.1, seed_state(1, 5), Scratch(8))
    monkeypatch.setattr(trajectory, "INITIAL_CAPACITY", 4)
    rng = seed_state(1, 5)
    small, small_off = record_games(weights, 4, 0.1, rng, Scratch(8))
    np.testing.assert_array_equal(big, small)
    np.testing.assert_array_equal(big_off, small_off)
    assert rng[0] != seed_state(1, 5)[0]


def _dense_reference(weights: tuple[np.ndarray, ...], game: np.ndarray, alpha: float,
                     lam: float) -> list[np.ndarray]:
    """TD(lambda) over one game written out densely in float64, independent of the kernels:
    fixed view of the opening mover, traces of the 5 outputs, w += alpha sum_k delta_k e_k,
    then decay, then the new gradient (with the output weights already updated)."""
    w1, b1, w2, b2 = (a.astype(np.float64).copy() for a in weights)
    params = [w1, b1, w2, b2]
    traces = [np.zeros((5,) + p.shape) for p in params]
    prev = None
    for t, board in enumerate(game):
        flipped = t % 2 == 1
        finished = board[0].sum() == 0
        if finished:
            gammon = board[1].sum() == 15
            y = np.array([1.0, gammon, gammon and board[1, 18:].sum() > 0, 0.0, 0.0])
        else:
            x = encode(board).astype(np.float64)
            h = 1 / (1 + np.exp(-(x @ w1 + b1)))
            y = 1 / (1 + np.exp(-(h @ w2 + b2)))
        cur = np.array([1 - y[0], y[3], y[4], y[1], y[2]]) if flipped else y.copy()
        if prev is not None:
            delta = cur - prev
            for p, e in zip(params, traces):
                p += alpha * np.tensordot(delta, e, axes=1)
                e *= lam
        if finished:
            break
        for k in range(5):
            m = [0, 3, 4, 1, 2][k] if flipped else k
            dy = (-1.0 if flipped and k == 0 else 1.0) * y[m] * (1 - y[m])
            traces[3][k, m] += dy
            traces[2][k, :, m] += dy * h
            back = dy * w2[:, m] * h * (1 - h)
            traces[1][k] += back
            traces[0][k] += np.outer(x, back)
        prev = cur
    return params


def test_learner_replay_matches_a_dense_float64_reference() -> None:
    weights = Weights(initial_net(8, 6))
    boards, offsets = record_games(weights.as_tuple(), 1, 0.0, seed_state(2, 0), Scratch(8))
    expected = _dense_reference(weights.as_tuple(), boards, 0.1, 0.7)
    learn(weights.as_tuple(), TrajectoryBatch(boards, offsets, 0, 0), 0.1, 0.7, Scratch(8))
    for got, want in zip(weights.as_tuple(), expected):
        np.testing.assert_allclose(got, want, atol=2e-5)
    assert not np.allclose(weights.w1, initial_net(8, 6).to_numpy()["w1"])


def test_staleness_games_is_validated() -> None:
    from engine.errors import ConfigError

    with pytest.raises(ConfigError, match="staleness_games"):
        TrainConfig.from_dict({"staleness_games": 0})
    assert TrainConfig().staleness_games > 0


# -- local actor processes --------------------------------------------------------------
class _KillingBackend:
    """Kills actor 0 (SIGKILL or ray.kill) when the learner first waits on it after 100 games."""

    def __init__(self, inner) -> None:
        self.inner, self.calls, self.killed = inner, 0, False
        self.name, self.n_actors = inner.name, inner.n_actors

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def start(self, spec) -> None:
        self.inner.start(spec)
        self.n_actors = self.inner.n_actors

    def result(self, actor, ticket):
        self.calls += 1
        if actor == 0 and not self.killed and self.calls > 4:
            self.inner.kill(0)
            self.killed = True
        return self.inner.result(actor, ticket)


@pytest.fixture(scope="module")
def local_reference(tmp_path_factory) -> Path:
    """TINY with two local actor processes, uninterrupted: the run every other must equal."""
    out = tmp_path_factory.mktemp("reference")
    trainer = DistributedTrainer(TrainConfig(**TINY), out, LocalBackend(2), progress=False)
    trainer.run()
    return out / "checkpoint.pt"


@pytest.mark.slow
def test_local_run_is_deterministic_and_bounds_the_policy_lag(local_reference: Path) -> None:
    run = local_reference.parent
    assert load_checkpoint(local_reference).games_trained == 400
    cfg = TrainConfig(**TINY)
    lags = [m["policy_lag_games_max"] for m in _metrics(run)]
    assert 0 < max(lags) <= lag_bound(cfg, 2)
    assert any(m["policy_lag_games"] > 0 for m in _metrics(run))
    assert load_checkpoint(local_reference).trainer_state["distributed"]["actors"] == 2


@pytest.mark.slow
def test_killed_local_actor_is_replaced_and_the_run_is_unchanged(local_reference: Path,
                                                                 tmp_path: Path) -> None:
    backend = _KillingBackend(LocalBackend(2))
    trainer = DistributedTrainer(TrainConfig(**TINY), tmp_path / "run", backend, progress=False)
    trainer.run()
    assert backend.killed and trainer.selfplay.restarts >= 1
    _assert_same_weights(local_reference, tmp_path / "run" / "checkpoint.pt")


@pytest.mark.slow
def test_local_stop_and_resume_equals_uninterrupted(local_reference: Path, tmp_path: Path) -> None:
    cfg = TrainConfig(**TINY)
    out = tmp_path / "run"
    DistributedTrainer(cfg, out, LocalBackend(2), total_games=160, progress=False).run()  # mid-job
    assert load_checkpoint(out / "checkpoint.pt").games_trained == 160
    resumed = DistributedTrainer(cfg, out, LocalBackend(2), resume=out / "checkpoint.pt",
                                 progress=False)
    assert resumed.games == 160
    resumed.run()
    _assert_same_weights(local_reference, out / "checkpoint.pt")


@pytest.mark.slow
@pytest.mark.parametrize("field, value", [("published", 5), ("published", {}), ("version", "x"),
                                          ("jobs", [[0, 25, 99]]), ("jobs", [[0, -1, 0]])])
def test_a_hand_made_actor_state_is_refused_in_one_line(local_reference: Path, tmp_path: Path,
                                                        field: str, value: object) -> None:
    from engine.errors import CheckpointError
    from models.checkpoint import Checkpoint, save_checkpoint

    ckpt = load_checkpoint(local_reference)
    state = dict(ckpt.trainer_state["distributed"])
    if field == "jobs" or field == "version":
        state["version"] = int(next(iter(state["published"]))) if field == "jobs" else value
    state[field] = value
    crafted = tmp_path / "crafted.pt"
    save_checkpoint(crafted, Checkpoint(ckpt.net, ckpt.config, ckpt.games_trained,
                                        {**ckpt.trainer_state, "distributed": state}))
    with pytest.raises(CheckpointError, match="actor/learner state is malformed"):
        DistributedTrainer(TrainConfig(**TINY), tmp_path / "run", LocalBackend(1), resume=crafted, progress=False)


def _check_smoke_learned(run: Path, cfg: TrainConfig, actors: int) -> None:
    """The bar of test_training.py::test_smoke_config_learns: >= 90% wins vs random in 400 games."""
    trained = Weights(load_checkpoint(run / "checkpoint.pt").net)
    assert (benchmark(trained, "random", 400, seed=11) > 0).mean() >= 0.90
    metrics = _metrics(run)
    assert metrics[-1]["games"] == cfg.games
    assert all(0 <= m["policy_lag_games"] <= m["policy_lag_games_max"] <= lag_bound(cfg, actors)
               for m in metrics)


@pytest.mark.slow
def test_local_backend_learns_the_smoke_config(tmp_path: Path) -> None:
    cfg = load_config(ROOT / "configs" / "smoke.toml")
    DistributedTrainer(cfg, tmp_path / "smoke", LocalBackend(2), progress=False).run()
    _check_smoke_learned(tmp_path / "smoke", cfg, 2)


# -- Ray ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ray_cluster():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.mark.ray
@pytest.mark.slow
@needs_ray
def test_ray_learns_the_smoke_config(ray_cluster, tmp_path: Path) -> None:
    from training.actors import RayBackend

    cfg = load_config(ROOT / "configs" / "smoke.toml")
    DistributedTrainer(cfg, tmp_path / "smoke", RayBackend(2), progress=False).run()
    _check_smoke_learned(tmp_path / "smoke", cfg, 2)


@pytest.mark.ray
@pytest.mark.slow
@needs_ray
def test_ray_actor_killed_mid_run_is_replaced_and_equals_the_local_run(
        ray_cluster, local_reference: Path, tmp_path: Path) -> None:
    """ray.kill on one actor: training goes on, the lost job is replayed, and since a job's
    games depend only on its index and weights the result equals the local-process run."""
    from training.actors import RayBackend

    backend = _KillingBackend(RayBackend(2))
    trainer = DistributedTrainer(TrainConfig(**TINY), tmp_path / "run", backend, progress=False)
    trainer.run()
    assert backend.killed and trainer.selfplay.restarts >= 1
    assert max(m["actor_restarts"] for m in _metrics(tmp_path / "run")) >= 1
    _assert_same_weights(local_reference, tmp_path / "run" / "checkpoint.pt")


# -- command line -------------------------------------------------------------------------
def _cli(args: list[str], hide_ray: bool = False) -> subprocess.CompletedProcess:
    code = ("import sys\n" + ("sys.modules['ray'] = None  # import ray now fails\n" if hide_ray else "")
            + "from scripts.cli import main\nsys.exit(main(sys.argv[1:]))\n")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def test_ray_backend_without_ray_is_one_line_exit_2(tmp_path: Path) -> None:
    proc = _cli(["train", "--config", "configs/smoke.toml", "--out", str(tmp_path / "r"),
                 "--backend", "ray"], hide_ray=True)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().count("\n") == 0
    assert "needs Ray" in proc.stderr and "pip install" in proc.stderr
    assert not (tmp_path / "r").exists()


def test_actor_options_need_an_actor_backend(tmp_path: Path) -> None:
    proc = _cli(["train", "--config", "configs/smoke.toml", "--out", str(tmp_path / "r"),
                 "--actors", "2"])
    assert proc.returncode == 2 and "--backend local or ray" in proc.stderr
    assert proc.stderr.strip().count("\n") == 0


@pytest.mark.slow
@needs_ray
def test_unreachable_ray_address_is_one_line_exit_2(tmp_path: Path) -> None:
    proc = _cli(["train", "--config", "configs/smoke.toml", "--out", str(tmp_path / "r"),
                 "--backend", "ray", "--ray-address", "127.0.0.1:1"])
    assert proc.returncode == 2 and "cannot reach the Ray cluster at 127.0.0.1:1" in proc.stderr
    assert proc.stderr.strip().count("\n") == 0
