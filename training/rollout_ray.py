"""`--backend ray`: a rollout's batches as Ray tasks over a cluster (or a local one).

Each batch is a task; a worker keeps its evaluator between tasks. A task whose worker dies
is retried by Ray (max_retries), and since a batch's dice come from (seed, trial ids) the
retry returns exactly what the lost worker would have: the merged result is the same.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from collections.abc import Iterator

from engine.rollout.backends import Job
from engine.rollout.core import RolloutError, RolloutSettings, TrialData, run_trials

MAX_RETRIES = 5
_EVALUATORS: dict = {}


def _remote_batch(factory, board, settings: RolloutSettings, lo: int, hi: int, pid_file: str | None = None) -> TrialData:
    """The task body: run one batch with this worker's (cached) evaluator."""
    if pid_file:  # for tests: which process holds a batch, so it can be killed
        with open(pid_file, "a") as fh:
            fh.write(f"{os.getpid()} {lo}\n")
    key = repr(factory)
    if key not in _EVALUATORS:
        _EVALUATORS[key] = factory()
    return run_trials(board, _EVALUATORS[key], settings, lo, hi)


def check_address(address: str | None) -> None:
    """Refuse a malformed HOST:PORT or one nobody listens on at once (ray.init would retry for minutes)."""
    if address is None or address in ("auto", "local") or "://" in address:
        return
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise RolloutError(f"--ray-address must be auto, local or HOST:PORT, got {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as err:
        raise RolloutError(f"cannot reach the Ray cluster at {address}: {err.strerror or err}") from None


def cancel_unfinished(ray, refs: list) -> None:
    """Cancel the tasks of `refs` not yet finished. Never a finished one: Ray aborts the
    whole driver process when a cancel races a task's completion ("Tried to complete task
    that was not pending", ray-project/ray#54846), which a killed worker makes likely."""
    if not refs:
        return
    _, unfinished = ray.wait(refs, num_returns=len(refs), timeout=0)
    for ref in unfinished:
        try:
            ray.cancel(ref)
        except Exception:  # finished meanwhile
            pass


@contextlib.contextmanager
def _quiet_stderr():
    """Ray's C++ core logs every failed connection attempt on file descriptor 2; the error
    raised after says it once."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class RayBackend:
    """Batches as Ray tasks (one CPU each); `address` None starts a local cluster of `workers` CPUs."""

    def __init__(self, factory, workers: int | None = None, address: str | None = None,
                 pid_file: str | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise RolloutError("--backend ray needs Ray, which is not installed") from None
        check_address(address)
        self.ray, self.factory, self.pid_file = ray, factory, pid_file
        self.started = False
        if not ray.is_initialized():
            try:
                with _quiet_stderr():
                    if address is None or address == "local":
                        ray.init(address="local", num_cpus=workers or None, include_dashboard=False,
                                 log_to_driver=False, logging_level=logging.ERROR)
                    else:
                        ray.init(address=address, include_dashboard=False, log_to_driver=False,
                                 logging_level=logging.ERROR)
            except (ConnectionError, RuntimeError, ValueError) as err:
                raise RolloutError(f"cannot start or join Ray at {address or 'local'}: {err}") from None
            self.started = True
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
