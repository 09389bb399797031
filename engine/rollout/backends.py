"""Where a rollout's batches run: in this process or on worker processes of this machine
(training.rollout_ray runs them on Ray with the same interface).

A backend runs a list of jobs and yields their TrialData in the list's order. Jobs start
in that order as workers free up, so a caller that lists the batches it wants first gets
them first; closing the iterator cancels the jobs not started. A trial's dice and play
depend on its id alone, so a batch may be cut into pieces and run anywhere.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from engine.evaluator import Evaluator
from engine.rollout.core import RolloutError, RolloutSettings, TrialData, run_trials

EvaluatorFactory = Callable[[], Evaluator]


def batch_ranges(settings: RolloutSettings) -> list[tuple[int, int]]:
    """The rollout's batches in order: [0, B), [B, 2B), ..., the last cut at the trial count."""
    b, n = settings.batch, settings.trials
    return [(lo, min(lo + b, n)) for lo in range(0, n, b)]


def split_range(lo: int, hi: int, pieces: int) -> list[tuple[int, int]]:
    """[lo, hi) in at most `pieces` contiguous, nearly equal, non-empty ranges: a trial's
    dice and play depend on its id alone, so the pieces' trials are the batch's."""
    bounds = np.linspace(lo, hi, min(pieces, hi - lo) + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


@dataclass(frozen=True)
class Job:
    """One batch of trials [lo, hi) of one board (a position, a play's afterstate, a cube line)."""

    board: np.ndarray
    settings: RolloutSettings
    lo: int
    hi: int


_WORKER_EVALUATOR: Evaluator | None = None


def _worker_init(factory: EvaluatorFactory) -> None:
    global _WORKER_EVALUATOR
    _exit_with_parent()
    _WORKER_EVALUATOR = factory()


def _exit_with_parent(poll: float = 1.0) -> None:
    """End this worker when its parent dies without shutting the pool down (killed hard):
    every worker holds the task queue's write end, so the queue never closes and an
    orphaned worker would otherwise wait forever."""
    import threading

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="exit-with-parent").start()


def _worker_batch(board: np.ndarray, settings: RolloutSettings, lo: int, hi: int) -> TrialData:
    return run_trials(board, _WORKER_EVALUATOR, settings, lo, hi)


class LocalBackend:
    """In this process (workers=1) or on `workers` processes of this machine."""

    def __init__(self, factory: EvaluatorFactory, workers: int = 1, evaluator: Evaluator | None = None) -> None:
        if workers < 1:
            raise RolloutError(f"workers must be at least 1, got {workers}")
        self.factory, self.workers, self._evaluator = factory, workers, evaluator
        self._pool: ProcessPoolExecutor | None = None

    def run(self, jobs: list[Job]) -> Iterator[TrialData]:
        if not jobs:
            return
        if self.workers == 1:
            if self._evaluator is None:
                self._evaluator = self.factory()
            for job in jobs:
                yield run_trials(job.board, self._evaluator, job.settings, job.lo, job.hi)
            return
        if self._pool is None:
            import multiprocessing as mp

            self._pool = ProcessPoolExecutor(self.workers, mp_context=mp.get_context("spawn"),
                                             initializer=_worker_init, initargs=(self.factory,))
        futures = [self._pool.submit(_worker_batch, job.board, job.settings, job.lo, job.hi) for job in jobs]
        try:
            for fut in futures:
                yield fut.result()
        finally:
            for fut in futures:
                fut.cancel()

    def close(self, abort: bool = False) -> None:
        if self._pool is not None:
            if abort:  # our own worker processes, by id
                for proc in list(getattr(self._pool, "_processes", {}).values()):
                    proc.terminate()
            self._pool.shutdown(wait=not abort, cancel_futures=True)
            self._pool = None
