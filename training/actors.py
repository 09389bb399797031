"""Game generators for the actor/learner trainer: actors and the two backends that host them.

An actor holds a frozen copy of the weights and plays jobs: `games` self-play games whose
dice and exploration come from a stream fixed by the job's first game index, so a job
replayed after a crash (or after a resume) yields the same games. A backend starts the
actors somewhere and moves jobs, weights and trajectories:

- LocalBackend: actor processes on this machine (multiprocessing, no Ray needed);
  weights travel inside each job message.
- RayBackend: Ray actors anywhere in a Ray cluster; each weight version is put once in
  Ray's object store and every job refers to it.

Both report a dead actor by raising ActorDied; the learner restarts it and resubmits its
unfinished jobs. This module does not import torch, so actor processes stay light.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.errors import ConfigError
from engine.evaluator import N_OUTPUTS
from training.kernels import Scratch
from training.ray_cluster import import_ray, join
from training.trajectory import TrajectoryBatch, record_games

WeightArrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
JOB_STREAM = 1 << 40  # RNG streams of jobs, disjoint from the Hogwild workers' streams


@dataclass(frozen=True)
class Job:
    """Games [start, start + games) of the learning order, played with weights `version`."""

    start: int
    games: int
    version: int
    epsilon: float


class ActorDied(RuntimeError):
    """An actor process or Ray actor is gone; its unfinished jobs must be replayed."""

    def __init__(self, actor: int, reason: str) -> None:
        super().__init__(f"actor {actor} died: {reason}")
        self.actor = actor


def job_rng(seed: int, start: int) -> np.ndarray:
    """The splitmix64 state of the job that starts at game `start` of the run `seed`."""
    mixed = np.random.SeedSequence([seed, JOB_STREAM + start]).generate_state(2, dtype=np.uint64)
    return np.array([mixed[0]], dtype=np.uint64)


@dataclass(frozen=True)
class ActorSpec:
    """What every actor of a run needs to know: the net's size, the run's seed and whether
    games end at exact bear-off races."""

    hidden: int
    seed: int
    bearoff: bool = False


class ActorCore:
    """Plays jobs with a cached private copy of one weight version (the same class runs in
    a local process and as a Ray actor)."""

    def __init__(self, spec: ActorSpec) -> None:
        hidden, self.seed = spec.hidden, spec.seed
        self.scratch = Scratch(hidden, bearoff=spec.bearoff)
        self.version = -1
        self.weights: WeightArrays | None = None
        # Load the compiled kernel now (zero games), not inside the first timed job.
        blank = (np.zeros((198, hidden), np.float32), np.zeros(hidden, np.float32),
                 np.zeros((hidden, N_OUTPUTS), np.float32), np.zeros(N_OUTPUTS, np.float32))
        record_games(blank, 0, 0.0, job_rng(self.seed, 0), self.scratch)

    def play(self, job: Job, weights: WeightArrays) -> TrajectoryBatch:
        if job.version != self.version or self.weights is None:
            # A writable contiguous copy: Ray hands out read-only views of the object store.
            self.weights = tuple(np.array(w, dtype=np.float32) for w in weights)  # type: ignore[assignment]
            self.version = job.version
        began = time.thread_time()
        boards, offsets = record_games(self.weights, job.games, job.epsilon,
                                       job_rng(self.seed, job.start), self.scratch)
        return TrajectoryBatch(boards, offsets, job.version, job.start, time.thread_time() - began)

    def pid(self) -> int:
        return os.getpid()


# ------------------------------------------------------------------------------ local
def _local_actor(spec: ActorSpec, jobs: Any, results: Any) -> None:
    """Process body: play jobs until a None arrives. Ctrl-C is the learner's to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    core = ActorCore(spec)
    while True:
        item = jobs.get()
        if item is None:
            return
        job, weights = item
        try:
            results.send(("ok", job.start, core.play(job, weights)))
        except Exception:  # a bug, not a crash: report it to the learner and stop
            results.send(("error", job.start, traceback.format_exc()))
            return


class LocalBackend:
    """Actor processes on this machine.

    Jobs go through a multiprocessing Queue (its feeder thread never blocks the learner);
    results come back through a one-way Pipe whose write end only the actor holds, so an
    actor killed in the middle of a message shows up as end-of-file, never as a hang.
    """

    name = "local"

    def __init__(self, actors: int | None = None) -> None:
        if actors is not None and actors <= 0:
            raise ConfigError(f"--actors must be positive, got {actors}")
        self.n_actors = actors or max(1, (os.cpu_count() or 2) - 1)
        self.ctx = mp.get_context("spawn")  # numba and torch state must not be forked
        self.procs: list[Any] = []
        self.jobs: list[Any] = []
        self.results: list[Any] = []
        self.held: list[dict[int, TrajectoryBatch]] = []
        self.spec = ActorSpec(0, 0)

    def start(self, spec: ActorSpec) -> None:
        self.spec = spec
        for a in range(self.n_actors):
            self.procs.append(None)
            self.jobs.append(None)
            self.results.append(None)
            self.held.append({})
            self._spawn(a)

    def _spawn(self, a: int) -> None:
        jobs = self.ctx.Queue()
        reader, writer = self.ctx.Pipe(duplex=False)
        proc = self.ctx.Process(target=_local_actor, args=(self.spec, jobs, writer),
                                name=f"tdgammon-actor-{a}", daemon=True)
        proc.start()
        writer.close()  # the actor holds the only write end now
        self.procs[a], self.jobs[a], self.results[a], self.held[a] = proc, jobs, reader, {}

    def publish(self, version: int, weights: WeightArrays) -> WeightArrays:
        return weights

    def submit(self, actor: int, job: Job, handle: WeightArrays) -> int:
        self.jobs[actor].put((job, handle))
        return job.start

    def result(self, actor: int, ticket: int) -> TrajectoryBatch:
        held = self.held[actor]
        conn = self.results[actor]
        while ticket not in held:
            try:
                if not conn.poll(0.5):
                    if not self.procs[actor].is_alive() and not conn.poll(0):
                        raise ActorDied(actor, f"exit code {self.procs[actor].exitcode}")
                    continue
                status, start, payload = conn.recv()
            except (EOFError, OSError):
                raise ActorDied(actor, f"exit code {self.procs[actor].exitcode}") from None
            if status == "error":
                raise RuntimeError(f"actor {actor} failed on the job at game {start}:\n{payload}")
            held[start] = payload
        return held.pop(ticket)

    def _discard(self, actor: int) -> None:
        proc = self.procs[actor]
        if proc.is_alive():
            proc.kill()
        proc.join(timeout=10)
        self.jobs[actor].cancel_join_thread()  # items for a dead actor are dropped at exit
        self.jobs[actor].close()
        self.results[actor].close()

    def restart(self, actor: int) -> None:
        self._discard(actor)
        self._spawn(actor)

    def kill(self, actor: int) -> None:
        """Kill one actor abruptly (for tests of fault tolerance)."""
        self.procs[actor].kill()

    def close(self) -> None:
        # Unlearned jobs in flight are worthless now (a resume replays them): stop at once.
        for a in range(len(self.procs)):
            self._discard(a)
        self.procs, self.jobs, self.results, self.held = [], [], [], []


# -------------------------------------------------------------------------------- ray
class RayBackend:
    """Ray actors (one CPU each) in the cluster at `address`, or in a local one."""

    name = "ray"

    def __init__(self, actors: int | None = None, address: str | None = None) -> None:
        if actors is not None and actors <= 0:
            raise ConfigError(f"--actors must be positive, got {actors}")
        self.ray = import_ray()
        self.requested = actors
        self.address = address
        self.started_ray = False
        self.n_actors = actors or 0
        self.handles: list[Any] = []

    def start(self, spec: ActorSpec) -> None:
        ray = self.ray
        if join(ray, self.address, None):   # None: a fresh local cluster, even if `ray start` runs one here
            self.started_ray = True
        if self.requested is None:
            # Every CPU of the cluster but one, which the learner (this process) uses.
            self.n_actors = max(1, int(ray.cluster_resources().get("CPU", 2)) - 1)
        self.remote_cls = ray.remote(num_cpus=1, max_restarts=0)(ActorCore)
        self.spec = spec
        self.handles = [self.remote_cls.remote(spec) for _ in range(self.n_actors)]

    def publish(self, version: int, weights: WeightArrays) -> Any:
        return self.ray.put(weights)

    def submit(self, actor: int, job: Job, handle: Any) -> Any:
        return self.handles[actor].play.remote(job, handle)

    def result(self, actor: int, ticket: Any) -> TrajectoryBatch:
        try:
            return self.ray.get(ticket)
        except self.ray.exceptions.RayActorError as err:
            raise ActorDied(actor, type(err).__name__) from None

    def restart(self, actor: int) -> None:
        self.ray.kill(self.handles[actor])
        self.handles[actor] = self.remote_cls.remote(self.spec)

    def kill(self, actor: int) -> None:
        """Kill one actor abruptly (for tests of fault tolerance)."""
        self.ray.kill(self.handles[actor])

    def close(self) -> None:
        for handle in self.handles:
            self.ray.kill(handle)
        self.handles = []
        if self.started_ray:
            self.ray.shutdown()
