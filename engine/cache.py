"""Where tdgammon keeps what it can rebuild: the bear-off table and numba's compiled kernels.

Numba checks a cached kernel only against its own file's timestamp, so a kernel calling a
function from another module that has since changed would run stale machine code. Every
kernel is therefore declared with `kernel` instead of `numba.njit`, which caches it under a
directory named for a hash of the sources it may call: engine/ and the package that
defines it. Any edit there starts a fresh cache, and a checkout never runs old code.
Nothing happens on import: the directory is made, and old ones pruned, when the first
kernel of a package is declared.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import numba

KEPT_KERNEL_CACHES = 6  # older source versions' caches beyond this many are deleted
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
    """Make `directory` and delete all but the KEPT_KERNEL_CACHES most recently used
    siblings (each edit of the sources makes a new one of a few MB); False if unwritable."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        os.utime(directory)
        versions = sorted(directory.parent.glob("tdgammon-*"), key=lambda d: d.stat().st_mtime, reverse=True)
    except OSError:
        return False
    for stale in versions[KEPT_KERNEL_CACHES:]:
        shutil.rmtree(stale, ignore_errors=True)
    return True


_prepared: dict[tuple[Path, ...], Path | None] = {}


def _cache_dir_for(func: Callable) -> Path | None:
    package = sys.modules[func.__module__.partition(".")[0]]
    dirs = tuple(dict.fromkeys((ENGINE_DIR, Path(package.__file__).resolve().parent)))
    if dirs not in _prepared:
        directory = kernel_cache_dir(dirs)
        _prepared[dirs] = directory if prepare_cache_dir(directory) else None
    return _prepared[dirs]


def kernel(func: Callable | None = None, /, **options) -> Callable:
    """`numba.njit(cache=True, **options)`, cached under the directory keyed on its sources.

    Numba reads its cache directory when a function is decorated, so it is set for the
    decoration only; an unwritable cache falls back to numba's own (__pycache__).
    """
    def decorate(f: Callable) -> Callable:
        directory = _cache_dir_for(f)
        saved = numba.config.CACHE_DIR
        if directory is not None:
            numba.config.CACHE_DIR = str(directory)
        try:
            return numba.njit(cache=True, **options)(f)
        finally:
            numba.config.CACHE_DIR = saved
    return decorate(func) if func is not None else decorate
