"""Joining a Ray cluster, as every user of Ray does: self-play actors (training.actors),
rollouts (training.rollout_ray) and the recipe's executor (training.recipe_tasks). One
place for the address check, the start, the retry count and the one safe way to cancel."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from typing import Any

from engine.errors import TdgammonError

MAX_RETRIES = 5   # a task whose worker dies is run again this many times at most


def import_ray() -> Any:
    """The ray module, or TdgammonError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise TdgammonError("--backend ray needs Ray: pip install -e '.[distributed]'") from None
    return ray


def check_address(address: str | None) -> None:
    """Refuse a malformed HOST:PORT or one nobody listens on at once (ray.init would retry for minutes)."""
    if address is None or address in ("auto", "local") or "://" in address:
        return
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise TdgammonError(f"--ray-address must be auto, local or HOST:PORT, got {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as err:
        raise TdgammonError(f"cannot reach the Ray cluster at {address}: {err.strerror or err}") from None


def join(ray: Any, address: str | None, workers: int | None) -> bool:
    """Join the cluster at `address`, or start a local one of `workers` CPUs when it is None
    or "local"; False when this process had already joined one (then it is not ours to stop)."""
    check_address(address)
    if ray.is_initialized():
        return False
    try:
        with _quiet_stderr():
            if address in (None, "local"):
                ray.init(address="local", num_cpus=workers or None, include_dashboard=False,
                         log_to_driver=False, logging_level=logging.ERROR)
            else:
                ray.init(address=address, include_dashboard=False, log_to_driver=False,
                         logging_level=logging.ERROR)
    except (ConnectionError, RuntimeError, ValueError) as err:
        raise TdgammonError(f"cannot start or join Ray at {address or 'local'}: {err}") from None
    return True


def cancel_unfinished(ray: Any, refs: list) -> None:
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


def note_pid(pid_file: str | None, tag: object = "") -> None:
    """For tests: append which process runs a task (and a tag of it), so a test can kill it mid-run."""
    if pid_file:
        with open(pid_file, "a") as fh:
            fh.write(f"{os.getpid()} {tag}".rstrip() + "\n")


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
