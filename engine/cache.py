"""Where tdgammon keeps what it can rebuild: the bear-off table, numba's compiled kernels
and the tables kernels read.

Numba checks a cached kernel only against its own file's timestamp, so a kernel calling a
function from another module that has since changed would run stale machine code. Every
kernel is therefore declared with `kernel` instead of `numba.njit`, which caches it under a
directory named for a hash of the sources it may call: engine/ and the package that
defines it. Any edit there starts a fresh cache, and a checkout never runs old code.
Nothing happens on import: the directory is made, and old ones pruned, when the first
kernel of a package is declared. Several checkouts share the cache, so only versions
unused for KEEP_UNUSED_SECONDS are pruned, never one another's working set.

Loading compiled kernels costs a process about half a second of CPU (numba itself, its
registries, the first cached library), more than a one-shot command's work: ranking the
plays of one roll. `interpret_kernels()` makes every kernel a plain Python function
instead, for such a command; numba is then never imported.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

KEPT_UNUSED = 6  # of the cache entries unused for KEEP_UNUSED_SECONDS, this many newest stay
KEEP_UNUSED_SECONDS = 7 * 24 * 3600  # a cache used this recently is never pruned
ENGINE_DIR = Path(__file__).resolve().parent


def cache_root() -> Path:
    """$XDG_CACHE_HOME/tdgammon, or ~/.cache/tdgammon."""
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tdgammon"


def sources_digest(dirs: tuple[Path, ...]) -> str:
    """The first 16 hex digits of a SHA-256 over the names and contents of the dirs' .py files."""
    digest = hashlib.sha256()
    for directory in dirs:
        for path in sorted(directory.rglob("*.py")):
            digest.update(f"{directory.name}/{path.relative_to(directory)}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def kernel_cache_dir(dirs: tuple[Path, ...] = (ENGINE_DIR,)) -> Path:
    """numba's cache directory for these sources: under $NUMBA_CACHE_DIR if set, else cache_root()."""
    base = os.environ.get("NUMBA_CACHE_DIR")
    root = Path(base) if base else cache_root() / "numba"
    return root / f"tdgammon-{sources_digest(dirs)}"


def prepare_cache_dir(directory: Path) -> bool:
    """Make `directory` and prune its siblings (each edit of the sources makes a new one of a
    few MB; prune_unused). Another checkout's caches in use stay. False if unwritable."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        os.utime(directory)
    except OSError:
        return False
    prune_unused(directory.parent.glob("tdgammon-*"))
    return True


def prune_unused(entries: Iterable[Path], keep: int = KEPT_UNUSED) -> None:
    """Remove the cache entries (files or folders, their mtime the last use) unused for
    KEEP_UNUSED_SECONDS, all but the `keep` newest of those: a cache that only grows would
    fill the disk of anyone who trains or edits for long."""
    try:
        used = {entry: entry.stat().st_mtime for entry in entries}
    except OSError:
        return
    horizon = time.time() - KEEP_UNUSED_SECONDS
    idle = sorted((e for e, t in used.items() if t < horizon), key=used.get, reverse=True)
    for stale in idle[keep:]:
        if stale.is_dir():
            shutil.rmtree(stale, ignore_errors=True)
        else:
            stale.unlink(missing_ok=True)


_interpreted = False
_declared = 0


def interpret_kernels() -> bool:
    """Run every kernel as plain Python, without numba, in this process; True if it does.

    For a one-shot command whose work is smaller than loading compiled code. It must come
    before the first kernel is declared (before importing a module that declares one): a
    compiled kernel cannot call a Python one, so after that it changes nothing (False).
    """
    global _interpreted
    if _declared and not _interpreted:
        return False
    _interpreted = True
    return True


def kernels_compiled() -> bool:
    """False after interpret_kernels(): callers with a numpy path of their own take it."""
    return not _interpreted


_prepared: dict[tuple[Path, ...], Path | None] = {}


def _cache_dir_for(func: Callable) -> Path | None:
    package = sys.modules[func.__module__.partition(".")[0]]
    dirs = tuple(dict.fromkeys((ENGINE_DIR, Path(package.__file__).resolve().parent)))
    if dirs not in _prepared:
        directory = kernel_cache_dir(dirs)
        _prepared[dirs] = directory if prepare_cache_dir(directory) else None
    return _prepared[dirs]


# numba's fastmath without 'arcp' and 'afn': those let LLVM divide by an approximate
# reciprocal (rcpps, vrcp14ps), whose bits are the CPU model's own, so a checkpoint's values
# could differ in the last bit from host to host (the likely cause of resumed recipes that
# rarely wrote other data than an uninterrupted run). Exact division: bench eval unchanged.
FAST_MATH = {"nnan", "ninf", "nsz", "contract", "reassoc"}  # a set: what numba takes


def kernel(func: Callable | None = None, /, **options) -> Callable:
    """`numba.njit(cache=True, **options)`, cached under the directory keyed on its sources.

    Numba reads its cache directory when a function is decorated, so it is set for the
    decoration only; an unwritable cache falls back to numba's own (__pycache__).
    """
    def decorate(f: Callable) -> Callable:
        global _declared
        _declared += 1
        if _interpreted:
            return f
        import numba  # here, not at import: an interpreted process never loads it

        directory = _cache_dir_for(f)
        saved = numba.config.CACHE_DIR
        if directory is not None:
            numba.config.CACHE_DIR = str(directory)
        try:
            return numba.njit(cache=True, **options)(f)
        finally:
            numba.config.CACHE_DIR = saved
    return decorate(func) if func is not None else decorate


def cached_table(name: str, build: Callable[[], np.ndarray]) -> np.ndarray:
    """build(), kept on disk beside the kernels of the engine's sources it was built from.

    For a table the kernels read that costs more to build than to load (numba freezes it
    into the compiled code, so it must be there at import). Rebuilt after any edit of
    engine/; a read-only cache only costs the build.
    """
    path = kernel_cache_dir() / f"{name}.npy"
    try:
        return np.load(path)
    except (OSError, ValueError):
        pass
    table = build()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            np.save(fh, table)
        os.replace(tmp, path)
    except OSError:
        pass
    return table
