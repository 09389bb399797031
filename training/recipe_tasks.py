"""The recipe's independent pieces of work, and the executors that run them anywhere.

Teacher values, gate judgements and pit games are independent per position and per
game, so they are cut into shards: each is a pure function of its arguments (models
travel as bytes with their SHA-256, seeds are derived from the recipe's), so it gives
the same answer in this process, in a worker process, or on a Ray node, and a shard
whose worker dies is simply run again. `map` yields results in the order of the jobs.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from training.ray_cluster import MAX_RETRIES, cancel_unfinished, import_ray, join, note_pid


@dataclass(frozen=True)
class ModelBlob:
    """A model file's bytes: what a task on any machine needs to load it."""

    name: str
    sha256: str
    data: bytes

    @classmethod
    def read(cls, path: Path) -> ModelBlob:
        data = Path(path).read_bytes()
        return cls(Path(path).name, hashlib.sha256(data).hexdigest(), data)


_LOADED: dict[tuple[str, str], Any] = {}


def _cached(kind: str, blob: ModelBlob):
    """A net ("net") or an evaluator ("eval") of the blob, loaded once per process.

    The bytes go through a file only while they load (the loaders read paths), in a
    folder removed right after, so no model is left behind on any machine."""
    key = (kind, blob.sha256)
    if key not in _LOADED:
        import torch

        torch.set_num_threads(1)   # one thread a worker: the shards share the cores, and results stay exact
        from models.checkpoint import load_checkpoint
        from models.loader import load_network

        with tempfile.TemporaryDirectory(prefix="tdgammon-recipe-") as folder:
            path = Path(folder) / f"{blob.sha256[:24]}.pt"
            path.write_bytes(blob.data)
            _LOADED[key] = load_checkpoint(path).net if kind == "net" else load_network(path)
    return _LOADED[key]


def derived_seed(*parts: int) -> int:
    """A 32-bit seed for one shard of one step: independent streams from the recipe's seed."""
    return int(np.random.SeedSequence(list(parts)).generate_state(1, dtype=np.uint32)[0])


# -- the tasks --------------------------------------------------------------------------------
def positions_task(student: ModelBlob, teacher: ModelBlob, games: int, seed: int, near_misses: int,
                   teacher_ply: int) -> tuple[np.ndarray, np.ndarray]:
    """The student's 1-ply self-play afterstates of `games` games (and near misses), each
    valued by the teacher's search: (boards int8 (n, 2, 25), targets float32 (n, 5))."""
    from models.inference import NetworkEvaluator
    from training.distill import near_misses as find_near_misses
    from training.distill import record_positions, search_targets
    from training.selfplay import seed_state

    net = _cached("net", student)
    boards = record_positions(net, games, seed_state(seed, 0))
    if near_misses:
        boards = np.concatenate([boards, find_near_misses(boards, NetworkEvaluator(net), near_misses,
                                                          np.random.default_rng(seed))])
    return boards, search_targets(boards, _cached("eval", teacher), teacher_ply)


def gate_task(candidate: ModelBlob, previous: ModelBlob, boards: np.ndarray, dice: np.ndarray,
              judge_ply: int) -> np.ndarray:
    """Equity the candidate's 1-ply play gains over the previous model's in each position
    (the side on roll of board[::-1] plays `dice`), judged by the previous model at judge_ply."""
    from engine.evaluator import equity
    from engine.search import afterstate_values, best_play

    new, old = _cached("eval", candidate), _cached("eval", previous)
    gains = np.zeros(len(boards))
    for k, (board, (d1, d2)) in enumerate(zip(boards, dice)):
        position = np.ascontiguousarray(board[::-1])
        a = best_play(position, (int(d1), int(d2)), new, 1)
        b = best_play(position, (int(d1), int(d2)), old, 1)
        if a is None or b is None or np.array_equal(a.afterstate, b.afterstate):
            continue
        values = equity(afterstate_values(np.stack([a.afterstate, b.afterstate]), old, judge_ply))
        gains[k] = values[0] - values[1]
    return gains


def pit_task(a: ModelBlob | str, b: ModelBlob | str, seed: int, lo: int, hi: int) -> np.ndarray:
    """A's points in games lo..hi-1 of a 1-ply duplicate-dice pit against B (a model, or an
    evaluator spec such as "pubeval" or "random:7")."""
    from engine.pit.harness import SearchPlayer, play_pit_game
    from models.loader import load_evaluator

    players = [SearchPlayer(_cached("eval", x) if isinstance(x, ModelBlob) else load_evaluator(x), 1)
               for x in (a, b)]
    return np.array([play_pit_game(players[0], players[1], seed, i, True).points for i in range(lo, hi)],
                    dtype=np.int64)


# -- the executors ----------------------------------------------------------------------------
def _run_logged(fn: Callable, args: tuple, pid_file: str | None):
    """The task body on a worker; with pid_file, first note which process holds it (tests kill it)."""
    note_pid(pid_file)
    return fn(*args)


class SerialExecutor:
    """Every task in this process, one after the other: the reference the others equal."""

    name = "local"
    workers = 1

    def map(self, fn: Callable, jobs: list[tuple]) -> Iterator[Any]:
        for args in jobs:
            yield fn(*args)

    def close(self) -> None:
        pass


class ProcessExecutor:
    """Tasks over `workers` processes of this machine."""

    name = "local"

    def __init__(self, workers: int) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.workers = workers
        self.pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))

    def map(self, fn: Callable, jobs: list[tuple]) -> Iterator[Any]:
        futures = [self.pool.submit(fn, *args) for args in jobs]
        try:
            for future in futures:
                yield future.result()
        finally:
            for future in futures:
                future.cancel()

    def close(self) -> None:
        self.pool.shutdown(cancel_futures=True)


class RayExecutor:
    """Tasks as Ray tasks of one CPU each; a task whose worker dies is retried (MAX_RETRIES).
    `address` None starts a local cluster of `workers` CPUs."""

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None,
                 pid_file: str | None = None) -> None:
        ray = import_ray()
        self.started = join(ray, address, workers)
        self.ray, self.pid_file = ray, pid_file
        self.workers = int(ray.cluster_resources().get("CPU", 1))
        self.task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(_run_logged)

    def map(self, fn: Callable, jobs: list[tuple]) -> Iterator[Any]:
        refs = [self.task.remote(fn, args, self.pid_file) for args in jobs]
        done = 0
        try:
            for ref in refs:
                yield self.ray.get(ref)
                done += 1
        finally:
            cancel_unfinished(self.ray, refs[done:])   # the caller stopped early

    def close(self) -> None:
        if self.started:
            self.ray.shutdown()
            self.started = False


def make_executor(backend: str, workers: int, address: str | None = None, pid_file: str | None = None):
    """`local` with 1 worker runs in this process; more start worker processes; `ray` joins or starts a cluster."""
    if backend == "ray":
        return RayExecutor(address, workers, pid_file)
    return SerialExecutor() if workers == 1 else ProcessExecutor(workers)
