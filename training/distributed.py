"""The actor/learner trainer: actors play self-play games, one learner applies TD(lambda).

The learning order is a fixed sequence of jobs of `chunk_games` games. The learner keeps
`JOBS_PER_ACTOR * actors` jobs in flight, learns their trajectories strictly in job order
(whatever order they arrive in) and republishes its weights to the actors at the first
job boundary after every `staleness_games` games. A job is played with the weights
published when it was submitted, so a game learned at count L was chosen by weights at
most `staleness_games + JOBS_PER_ACTOR * actors * chunk_games` games old; TensorBoard
shows the measured lag as charts/policy_lag_games.

Because a job's dice come from its first game index and its weights from a deterministic
point of the schedule, a run depends only on its seed, config and actor count: not on
timing, on the backend (local processes or Ray), on actors that die and are replayed,
nor on a stop and resume (the checkpoint records the jobs in flight and their weights).

DistributedTrainer reuses Trainer's loop, logging, benchmarks, signals and checkpoints;
the ActorLearner below takes the place of the Hogwild SelfPlay.
"""

from __future__ import annotations

import time
from collections import deque
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from engine.errors import CheckpointError
from models.checkpoint import load_checkpoint
from training.actors import ActorDied, ActorSpec, Job, WeightArrays
from training.config import TrainConfig
from training.kernels import Scratch
from training.selfplay import Weights
from training.trainer import Trainer
from training.trajectory import TrajectoryBatch, learn

JOBS_PER_ACTOR = 2   # one job playing, one queued: actors never wait for the learner
MAX_RESTARTS = 100   # a run whose actors keep dying has a real problem: stop it


class Backend(Protocol):
    name: str
    n_actors: int

    def start(self, spec: ActorSpec) -> None: ...
    def publish(self, version: int, weights: WeightArrays) -> Any: ...
    def submit(self, actor: int, job: Job, handle: Any) -> Any: ...
    def result(self, actor: int, ticket: Any) -> TrajectoryBatch: ...
    def restart(self, actor: int) -> None: ...
    def kill(self, actor: int) -> None: ...
    def close(self) -> None: ...


def lag_bound(config: TrainConfig, actors: int) -> int:
    """The largest policy lag (in games) the schedule allows."""
    return config.staleness_games + JOBS_PER_ACTOR * actors * config.chunk_games


class ActorLearner:
    """Learns, in order, the trajectories that a backend's actors play; a stand-in for SelfPlay."""

    def __init__(self, weights: Weights, config: TrainConfig, backend: Backend, learned: int,
                 state: dict[str, Any] | None = None) -> None:
        self.weights = weights
        self.config = config
        self.backend = backend
        self.learned = learned
        self.scratch = Scratch(weights.hidden, weights.inputs, config.bearoff_target,
                               config.new_inputs_lr_scale)
        self.restarts = 0
        self.learn_seconds = 0.0  # wall time spent in the TD kernel (the rest is waiting for actors)
        self.learn_cpu = 0.0      # CPU time of the learner's TD kernel
        self.actor_cpu = 0.0      # CPU time the actors spent on the jobs learned
        self.lag_sum, self.lag_max, self.lag_n = 0.0, 0, 0
        self.published: dict[int, tuple[WeightArrays, Any]] = {}
        self.queue: deque[list[Any]] = deque()  # [job, actor, ticket]
        self.front: TrajectoryBatch | None = None
        backend.start(ActorSpec(weights.hidden, config.seed, config.bearoff_target))
        self.depth = JOBS_PER_ACTOR * backend.n_actors
        self.turn = 0
        if state:
            for version, arrays in state["published"].items():
                self._publish(int(version), tuple(t.numpy().copy() for t in arrays))
            self.version = int(state["version"])
            self.next_start = int(state["next_start"])
            for start, games, version in state["jobs"]:
                self._submit(Job(int(start), int(games), int(version), config.epsilon))
        else:
            self.version = learned
            self.next_start = learned
            self._publish(learned, self._snapshot())
        self._fill()

    # -- publishing and submitting ------------------------------------------------------
    def _snapshot(self) -> WeightArrays:
        return tuple(a.copy() for a in self.weights.as_tuple())  # type: ignore[return-value]

    def _publish(self, version: int, arrays: WeightArrays) -> None:
        self.published[version] = (arrays, self.backend.publish(version, arrays))

    def _submit(self, job: Job) -> None:
        actor = self.turn % self.backend.n_actors
        self.turn += 1
        ticket = self.backend.submit(actor, job, self.published[job.version][1])
        self.queue.append([job, actor, ticket])

    def _fill(self) -> None:
        while len(self.queue) < self.depth:
            self._submit(Job(self.next_start, self.config.chunk_games, self.version,
                             self.config.epsilon))
            self.next_start += self.config.chunk_games

    def _restart(self, actor: int) -> None:
        """Replace a dead actor and replay its unfinished jobs (their partial games are lost)."""
        self.restarts += 1
        if self.restarts > MAX_RESTARTS:
            raise RuntimeError(f"actors died {self.restarts} times; giving up")
        self.backend.restart(actor)
        for entry in self.queue:
            if entry[1] == actor:
                job = entry[0]
                entry[2] = self.backend.submit(actor, job, self.published[job.version][1])

    # -- the SelfPlay interface that Trainer.run drives ---------------------------------
    def train(self, max_games: int, alpha: float, lam: float, epsilon: float) -> tuple[int, int, float]:
        """Learn up to max_games games of the front job; returns (games, moves, summed |TD error|).

        The learning rate is the schedule's at the job's first game (not `alpha`), so that a
        job split by a stop and resume learns exactly as in one piece.
        """
        job, actor, ticket = self.queue[0]
        while self.front is None:
            try:
                self.front = self.backend.result(actor, ticket)
            except ActorDied:
                self._restart(actor)
                job, actor, ticket = self.queue[0]
        first = self.learned - job.start
        take = min(job.games - first, max_games)
        offsets = self.front.offsets[first:first + take + 1]
        part = TrajectoryBatch(self.front.boards[offsets[0]:offsets[-1]], offsets - offsets[0],
                               job.version, job.start)
        began, began_cpu = time.perf_counter(), time.thread_time()
        result = learn(self.weights.as_tuple(), part, self.config.lr_at(job.start), lam,
                       self.scratch)
        self.learn_seconds += time.perf_counter() - began
        self.learn_cpu += time.thread_time() - began_cpu
        lags = self.learned - job.version + np.arange(take)
        self.lag_sum += float(lags.sum())
        self.lag_n += take
        self.lag_max = max(self.lag_max, int(lags.max()))
        self.learned += take
        if self.learned == job.start + job.games:
            self.actor_cpu += self.front.cpu_seconds
            self.queue.popleft()
            self.front = None
            K = self.config.staleness_games
            if self.learned // K != self.version // K:
                self.version = self.learned
                self._publish(self.version, self._snapshot())
                live = {entry[0].version for entry in self.queue} | {self.version}
                self.published = {v: p for v, p in self.published.items() if v in live}
            self._fill()
        return result

    def scalars(self) -> dict[str, float]:
        """Policy lag since the last call (mean and max, in games) and actor restarts."""
        out = {"charts/policy_lag_games": self.lag_sum / max(self.lag_n, 1),
               "charts/policy_lag_games_max": float(self.lag_max),
               "charts/actor_restarts": float(self.restarts)}
        self.lag_sum, self.lag_max, self.lag_n = 0.0, 0, 0
        return out

    def state(self) -> dict[str, Any]:
        """What a resume needs to continue exactly: the jobs in flight and their weights."""
        return {"version": self.version, "next_start": self.next_start,
                "actors": self.backend.n_actors, "backend": self.backend.name,
                "jobs": [[e[0].start, e[0].games, e[0].version] for e in self.queue],
                "published": {str(v): [torch.from_numpy(a.copy()) for a in arrays]
                              for v, (arrays, _) in self.published.items()}}

    def rng_states(self) -> list[int]:
        return []  # the actors' dice come from the job indices

    def close(self) -> None:
        self.backend.close()


class DistributedTrainer(Trainer):
    """Trainer whose games come from actors on `backend` (local processes or Ray)."""

    def __init__(self, config: TrainConfig, out: Path, backend: Backend, resume: Path | None = None,
                 total_games: int | None = None, progress: bool = True) -> None:
        super().__init__(config, out, resume=resume, total_games=total_games, progress=progress)
        self.selfplay.close()  # the Hogwild threads are not used
        state = load_checkpoint(resume).trainer_state.get("distributed") if resume else None
        self.selfplay = ActorLearner(self.weights, config, backend, self.games,
                                     _checked_state(state, self.weights, resume))

    def _trainer_state(self) -> dict[str, Any]:
        state = super()._trainer_state()
        state["distributed"] = self.selfplay.state()
        return state

    def _extra_scalars(self) -> dict[str, float]:
        return self.selfplay.scalars()


def _checked_state(state: Any, weights: Weights, path: Path | None) -> dict[str, Any] | None:
    """A checkpoint's actor/learner state as written by ActorLearner.state(), or one
    CheckpointError line: a hand-made state must not raise deep inside the learner."""
    if state is None:
        return None
    shapes = [a.shape for a in weights.as_tuple()]
    try:
        published = state["published"]
        ok = (isinstance(published, dict) and len(published) > 0
              and all(isinstance(t, torch.Tensor) and bool(torch.isfinite(t).all())
                      for arrays in published.values() for t in arrays)
              and all([tuple(t.shape) for t in arrays] == shapes for arrays in published.values())
              and int(state["version"]) in {int(v) for v in published}
              and 0 <= int(state["next_start"]) < 2**62
              and all(0 <= int(start) < 2**62 and 0 < int(games) <= 10**6 and int(version) in {int(v) for v in published}
                      for start, games, version in state["jobs"]))
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError):
        ok = False
    if not ok:
        raise CheckpointError(f"checkpoint {path}: its actor/learner state is malformed (not written by tdgammon train)")
    return state
