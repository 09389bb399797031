"""The training loop: TD(lambda) self-play with progress, TensorBoard, checkpoints, resume.

Sections: (1) start or resume, (2) the loop of self-play chunks, (3) benchmarks and
logging, (4) checkpoints, written every `checkpoint_every` games, at the end, and when
SIGINT or SIGTERM arrives (the current chunk finishes first, so no game is half-learned).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from engine.errors import CheckpointError, TdgammonError
from engine.pit.stats import ci95
from models.checkpoint import Checkpoint, load_checkpoint, save_checkpoint
from training.config import TrainConfig
from training.selfplay import SelfPlay, Weights, benchmark, initial_net, seed_state

CHECKPOINT_NAME = "checkpoint.pt"
# A net's records of what was done to it outside training (scripts.lab.distill fit,
# scripts.lab.widen_checkpoint): a resumed run keeps them as they were.
HISTORY_KEYS = ("distilled", "widened")


@dataclass
class BenchmarkResult:
    games: int
    ppg_vs_pubeval: float
    ci95_vs_pubeval: float
    win_rate_vs_pubeval: float
    win_rate_vs_random: float

    def summary(self) -> str:
        return (f"pubeval {self.ppg_vs_pubeval:+.3f}±{self.ci95_vs_pubeval:.3f} ppg, "
                f"random {100 * self.win_rate_vs_random:.1f}% wins")


def run_benchmarks(weights: Weights, games: int, seed: int, bearoff: bool = False) -> BenchmarkResult:
    """1-ply net vs pubeval and vs random; ppg with a 95% normal interval."""
    pub = benchmark(weights, "pubeval", games, seed, bearoff)
    rnd = benchmark(weights, "random", games, seed, bearoff)
    return BenchmarkResult(games, float(pub.mean()), ci95(pub), float((pub > 0).mean()),
                           float((rnd > 0).mean()))


class Trainer:
    def __init__(self, config: TrainConfig, out: Path, resume: Path | None = None,
                 total_games: int | None = None, progress: bool = True) -> None:
        self.config = config
        self.out = Path(out)
        self.total_games = total_games if total_games is not None else config.games
        self.progress = progress
        self.stop_requested = False
        self.wall_time_this_run = 0.0
        self.last_bench: BenchmarkResult | None = None
        # -- (1) start or resume ------------------------------------------------------
        if resume is not None:
            ckpt = load_checkpoint(resume)
            if ckpt.net.n_hidden != config.hidden:
                raise CheckpointError(f"checkpoint {resume} has {ckpt.net.n_hidden} hidden units, "
                                      f"the config asks for {config.hidden}")
            if ckpt.net.features != config.features:
                raise CheckpointError(f"checkpoint {resume} has features={ckpt.net.features}, "
                                      f"the config asks for features={config.features}")
            rngs, self.wall_time, self.history = _resume_state(ckpt.trainer_state, resume)
            if len(rngs) != config.workers:   # scripts.commands.train warns that exactness is lost
                rngs = [int(seed_state(config.seed, 7919 * ckpt.games_trained + w)[0])
                        for w in range(config.workers)]
            self.games = ckpt.games_trained
            net = ckpt.net
        else:
            self.games = 0
            self.wall_time = 0.0
            self.history = {}
            rngs = [int(seed_state(config.seed, w)[0]) for w in range(config.workers)]
            net = initial_net(config.hidden, config.seed, config.features)
        self.weights = Weights(net)
        self.selfplay = SelfPlay(self.weights, config.workers, rngs, config.bearoff_target,
                                 config.new_inputs_lr_scale)
        self.snapshots_passed = self.games // config.snapshot_every if config.snapshot_every else 0

    # -- (4) checkpoints ----------------------------------------------------------------
    def checkpoint(self) -> Path:
        path = self.out / CHECKPOINT_NAME
        save_checkpoint(path, Checkpoint(self.weights.to_net(), self.config.to_dict(),
                                         self.games, self._trainer_state()))
        every = self.config.snapshot_every
        if every and self.games // every > self.snapshots_passed:
            # The first checkpoint at or past each multiple of snapshot_every (a resumed run's
            # count need not hit the multiple exactly); named by its real games count.
            shutil.copyfile(path, self.out / f"checkpoint-{self.games:09d}.pt")
            self.snapshots_passed = self.games // every
        return path

    def _trainer_state(self) -> dict:
        """What a resume needs besides the weights (subclasses add their own entries), and
        the net's history (HISTORY_KEYS), kept as it came."""
        return {"rng_states": self.selfplay.rng_states(), "wall_time": self.wall_time,
                "lr": self.config.lr_at(self.games), **self.history}

    def _extra_scalars(self) -> dict[str, float]:
        """More TensorBoard scalars for each log step (the distributed trainer's policy lag)."""
        return {}

    def _request_stop(self, signum: int, frame: object) -> None:
        self.stop_requested = True

    # -- (2) the loop -------------------------------------------------------------------
    def run(self) -> BenchmarkResult | None:
        cfg = self.config
        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise TdgammonError(f"cannot use {self.out} as the run directory: {err.strerror}") from None
        from torch.utils.tensorboard import SummaryWriter  # heavy import, only when training

        # Handlers first: a signal that arrives once the run's files exist must stop it cleanly.
        old_handlers = {sig: signal.signal(sig, self._request_stop)
                        for sig in (signal.SIGINT, signal.SIGTERM)}
        writer = SummaryWriter(str(self.out), purge_step=self.games)
        _drop_metrics_after(self.out / "metrics.jsonl", self.games)
        metrics = open(self.out / "metrics.jsonl", "a")
        diverged = None if self._weights_finite() else "the starting weights are"
        bar = tqdm(total=self.total_games, initial=self.games, unit="game",
                   disable=not self.progress, dynamic_ncols=True)
        window_games, window_time, td_running = 0, 0.0, None
        try:
            while diverged is None and self.games < self.total_games and not self.stop_requested:
                per_worker = min(cfg.chunk_games, max(1, (self.total_games - self.games) // cfg.workers))
                start = time.perf_counter()
                try:
                    games, moves, td_sum = self.selfplay.train(per_worker, cfg.lr_at(self.games),
                                                               cfg.td_lambda, cfg.epsilon)
                except Exception:
                    if self._weights_finite():
                        raise
                    diverged = "the weights are"   # the kernels fail on NaN (a division by zero)
                    break
                elapsed = time.perf_counter() - start
                if not math.isfinite(td_sum) or not self._weights_finite():
                    # Stop before anything records this chunk: the last checkpoint stays as it was.
                    diverged = "the TD error is" if not math.isfinite(td_sum) else "the weights are"
                    break
                self.wall_time += elapsed
                self.wall_time_this_run += elapsed
                before = self.games
                self.games += games
                window_games += games
                window_time += elapsed
                td = td_sum / max(moves, 1)
                td_running = td if td_running is None else 0.9 * td_running + 0.1 * td
                bar.update(games)
                if self._crossed(before, cfg.checkpoint_every) or self._crossed(before, cfg.eval_every):
                    self._log(writer, metrics, before, window_games / window_time,
                              moves / max(games, 1), td_running)
                    window_games, window_time = 0, 0.0
                    if self._crossed(before, cfg.checkpoint_every):
                        self.checkpoint()
                postfix = {"g/s": f"{games / elapsed:.0f}", "td": f"{td_running:.4f}"}
                if self.last_bench:
                    postfix["bench"] = self.last_bench.summary()
                bar.set_postfix(postfix, refresh=False)
        finally:
            bar.close()
            if diverged is None and self._weights_finite():   # never save NaN over a good state
                self.checkpoint()
            writer.close()
            metrics.close()
            self.selfplay.close()
            for sig, handler in old_handlers.items():
                signal.signal(sig, handler)
        if diverged is not None:
            kept = self.out / CHECKPOINT_NAME
            raise TdgammonError(
                f"training stopped at game {self.games}: {diverged} NaN or infinite (learning rate "
                f"{cfg.lr_at(self.games):g}); nothing was written, "
                + (f"{kept} keeps the last good state" if kept.exists() else "there is no checkpoint"))
        return self.last_bench

    def _weights_finite(self) -> bool:
        return all(bool(np.isfinite(a).all()) for a in self.weights.as_tuple())

    # -- (3) benchmarks and logging -----------------------------------------------------
    def _log(self, writer, metrics, before: int, rate: float, moves_per_game: float,
             td_running: float) -> None:
        """TensorBoard scalars and a metrics.jsonl line; the benchmarks when they are due."""
        cfg = self.config
        extra = self._extra_scalars()
        scalars = {"losses/td_error": td_running, "charts/games_per_s": rate,
                   "charts/learning_rate": cfg.lr_at(self.games),
                   "charts/moves_per_game": moves_per_game, **extra}
        record = {"games": self.games, "td_error": td_running, "games_per_s": rate,
                  "wall_time": self.wall_time}
        record.update({name.split("/")[-1]: value for name, value in extra.items()})
        if cfg.eval_every and self._crossed(before, cfg.eval_every):
            b = self.last_bench = run_benchmarks(self.weights, cfg.eval_games,
                                                 cfg.seed + self.games, cfg.bearoff_target)
            scalars.update({"eval/ppg_vs_pubeval": b.ppg_vs_pubeval,
                            "eval/win_rate_vs_pubeval": b.win_rate_vs_pubeval,
                            "eval/win_rate_vs_random": b.win_rate_vs_random})
            record.update(ppg_vs_pubeval=b.ppg_vs_pubeval, ci95_vs_pubeval=b.ci95_vs_pubeval,
                          win_rate_vs_pubeval=b.win_rate_vs_pubeval,
                          win_rate_vs_random=b.win_rate_vs_random)
        for name, value in scalars.items():
            writer.add_scalar(name, value, self.games)
        metrics.write(json.dumps(record) + "\n")
        metrics.flush()
        writer.flush()

    def _crossed(self, before: int, every: int) -> bool:
        """True when the games count passed a multiple of `every` in the last chunk."""
        return every > 0 and before // every != self.games // every


def _resume_state(state: dict, resume: Path) -> tuple[list[int], float, dict[str, list]]:
    """The workers' dice states (64-bit splitmix64 states; none in an older file), the wall
    time and the net's history of a checkpoint's trainer state; CheckpointError if malformed."""
    rngs = state.get("rng_states", [])
    wall_time = state.get("wall_time", 0.0)
    history = {key: state[key] for key in HISTORY_KEYS if key in state}
    if (not isinstance(rngs, list)
            or not all(isinstance(r, int) and not isinstance(r, bool) and 0 <= r < 2**64 for r in rngs)
            or isinstance(wall_time, bool) or not isinstance(wall_time, (int, float))
            or not math.isfinite(wall_time) or not all(isinstance(v, list) for v in history.values())):
        raise CheckpointError(f"checkpoint {resume} has a malformed trainer state")
    return rngs, float(wall_time), {key: list(value) for key, value in history.items()}


def _drop_metrics_after(path: Path, games: int) -> None:
    """Keep the metrics records up to `games` (the checkpoint's count), in place.

    A record is written just before its checkpoint; a run killed between the two leaves a
    record the resumed run writes again, and a kill mid-line leaves a torn one. Both go."""
    if not path.exists():
        return
    kept, dropped = [], 0
    with open(path) as fh:
        for line in fh:
            try:
                record = json.loads(line)
                keep = line.endswith("\n") and int(record["games"]) <= games
            except (ValueError, TypeError, KeyError):
                keep = False
            if keep:
                kept.append(line)
            else:
                dropped += 1
    if dropped:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text("".join(kept))
        os.replace(tmp, path)
