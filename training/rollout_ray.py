"""`--backend ray`: a rollout's batches as Ray tasks over a cluster (or a local one).

Each batch is a task; a worker keeps its evaluator between tasks. A task whose worker dies
is retried by Ray (max_retries), and since a batch's dice come from (seed, trial ids) the
retry returns exactly what the lost worker would have: the merged result is the same.
"""

from __future__ import annotations

from collections.abc import Iterator

from engine.rollout.backends import Job
from engine.rollout.core import RolloutSettings, TrialData, run_trials
from training.ray_cluster import MAX_RETRIES, cancel_unfinished, import_ray, join, note_pid

_EVALUATORS: dict = {}


def _remote_batch(factory, board, settings: RolloutSettings, lo: int, hi: int, pid_file: str | None = None) -> TrialData:
    """The task body: run one batch with this worker's (cached) evaluator."""
    note_pid(pid_file, lo)
    key = repr(factory)
    if key not in _EVALUATORS:
        _EVALUATORS[key] = factory()
    return run_trials(board, _EVALUATORS[key], settings, lo, hi)


class RayBackend:
    """Batches as Ray tasks (one CPU each); `address` None starts a local cluster of `workers` CPUs."""

    def __init__(self, factory, workers: int | None = None, address: str | None = None,
                 pid_file: str | None = None) -> None:
        ray = import_ray()
        self.started = join(ray, address, workers)
        self.ray, self.factory, self.pid_file = ray, factory, pid_file
        self.workers = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))  # how far to split a batch
        self.task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(_remote_batch)
        self.factory_ref = ray.put(factory)

    def run(self, jobs: list[Job]) -> Iterator[TrialData]:
        refs = [self.task.remote(self.factory_ref, job.board, job.settings, job.lo, job.hi, self.pid_file)
                for job in jobs]
        try:
            for ref in refs:
                yield self.ray.get(ref)
        finally:
            cancel_unfinished(self.ray, refs)  # what a stop rule left unstarted

    def close(self, abort: bool = False) -> None:
        if self.started:
            self.ray.shutdown()
            self.started = False
