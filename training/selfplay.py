"""Python face of the kernels: weights, per-worker state, training chunks and benchmarks."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from engine.encoder import N_INPUTS
from engine.pubeval import load_weights
from models.network import TDNet
from training import kernels
from training.kernels import OPP_PUBEVAL, OPP_RANDOM, NetArrays, Schedule, Scratch


class Weights:
    """The network as four float32 arrays, updated in place by training (the shared weights)."""

    def __init__(self, net: TDNet) -> None:
        arrays = net.to_numpy()
        self.w1, self.b1, self.w2, self.b2 = arrays["w1"], arrays["b1"], arrays["w2"], arrays["b2"]
        self.hidden = net.n_hidden
        self.inputs = self.w1.shape[0]  # more than N_INPUTS: the net reads engine.features too

    def as_tuple(self) -> NetArrays:
        return NetArrays(self.w1, self.b1, self.w2, self.b2)

    def to_net(self) -> TDNet:
        net = TDNet(self.hidden, features=self.inputs > N_INPUTS)
        net.load_numpy({"w1": self.w1, "b1": self.b1, "w2": self.w2, "b2": self.b2})
        return net


def _copy(net: NetArrays) -> NetArrays:
    return NetArrays(*(a.copy() for a in net))


def initial_net(hidden: int, seed: int, features: bool = False) -> TDNet:
    """A freshly initialised network; the seed fixes its weights."""
    gen = torch.Generator().manual_seed(seed)
    net = TDNet(hidden, features)
    with torch.no_grad():
        for param in net.parameters():
            bound = 1.0 / np.sqrt(param.shape[-1] if param.dim() > 1 else net.n_hidden)
            param.copy_((torch.rand(param.shape, generator=gen) * 2 - 1) * bound)
    return net


def seed_state(seed: int, stream: int) -> np.ndarray:
    """A splitmix64 state for one stream of one run."""
    mixed = np.random.SeedSequence([seed, stream]).generate_state(2, dtype=np.uint64)
    return np.array([mixed[0]], dtype=np.uint64)


class SelfPlay:
    """Self-play TD(lambda) by one worker thread or several.

    One thread trains the shared weights in place, exactly reproducible from its seed.
    Several (Hogwild) threads each train a private copy and, after every game, add what they
    changed to the shared weights and take the others' changes back (kernels.publish,
    under a lock): a worker sees the others' learning a game late. Updating the one shared
    array from every thread at every move, as plain Hogwild does, made the threads fight
    over its cache lines (74-222 games/s from one chunk to the next, docs/benchmarks.md).
    """

    def __init__(self, weights: Weights, workers: int, rng_states: list[int],
                 bearoff: bool = False, new_inputs_lr: float = 1.0) -> None:
        self.weights = weights
        self.scratch = [Scratch(weights.hidden, weights.inputs, bearoff, new_inputs_lr)
                        for _ in range(workers)]
        self.rngs = [np.array([s], dtype=np.uint64) for s in rng_states]
        self.pool = ThreadPoolExecutor(max_workers=workers) if workers > 1 else None
        self.lock = threading.Lock()
        # Each worker's own weights and their value at its last publish.
        self.private = [(_copy(weights.as_tuple()), _copy(weights.as_tuple()))
                        for _ in range(workers)] if workers > 1 else []

    def rng_states(self) -> list[int]:
        return [int(r[0]) for r in self.rngs]

    def _train(self, worker: int, games: int, alpha: float, lam: float, epsilon: float) -> None:
        s = self.scratch[worker]
        sched = Schedule(float(alpha), float(lam), float(epsilon))
        shared = self.weights.as_tuple()
        if not self.private:
            kernels.train_games(shared, games, sched, self.rngs[worker], s.moves, s.td, s.end)
            return
        own, base = self.private[worker]
        with self.lock:   # start from the shared weights as they are now (someone may have set them)
            for shared_array, own_array, base_array in zip(shared, own, base):
                np.copyto(own_array, shared_array)
                np.copyto(base_array, shared_array)
        for _ in range(games):
            kernels.train_games(own, 1, sched, self.rngs[worker], s.moves, s.td, s.end)
            with self.lock:
                kernels.publish(shared, own, base)

    def train(self, games_per_worker: int, alpha: float, lam: float, epsilon: float) -> tuple[int, int, float]:
        """Play games_per_worker games on every worker; returns (games, moves, summed |TD error|)."""
        for s in self.scratch:
            s.td.stats[:] = 0.0
        if self.pool is None:
            self._train(0, games_per_worker, alpha, lam, epsilon)
        else:
            futures = [self.pool.submit(self._train, w, games_per_worker, alpha, lam, epsilon)
                       for w in range(len(self.scratch))]
            for f in futures:
                f.result()
        totals = np.sum([s.td.stats for s in self.scratch], axis=0)
        return int(totals[0]), int(totals[1]), float(totals[2])

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()


def benchmark(weights: Weights, opponent: str, games: int, seed: int,
              bearoff: bool = False) -> np.ndarray:
    """The net's signed points in `games` 1-ply games vs 'random' or 'pubeval' (alternating
    who starts); with `bearoff` the net plays exact bear-off races by the database."""
    kind = {"random": OPP_RANDOM, "pubeval": OPP_PUBEVAL}[opponent]
    race_w, contact_w = load_weights()
    s = Scratch(weights.hidden, weights.inputs, bearoff)
    points = np.zeros(games, dtype=np.float64)
    rng = seed_state(seed, 1_000_000 + kind)
    kernels.play_benchmark(weights.as_tuple(), kind, race_w, contact_w, games, rng, s.moves, s.end, points)
    return points
