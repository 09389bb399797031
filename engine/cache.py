"""Where tdgammon keeps what it can rebuild: the bear-off table and numba's compiled kernels.

Numba checks a cached kernel only against its own file's timestamp, so a kernel calling a
function from another module that has since changed would run stale machine code. The
kernels are therefore cached under a directory named for a hash of every engine/ and
training/ source: any edit there starts a fresh cache, and a checkout never runs old code.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import numba

KEPT_KERNEL_CACHES = 4  # older source versions' caches beyond this many are deleted
PACKAGE_DIRS = (Path(__file__).resolve().parent, Path(__file__).resolve().parent.parent / "training")


def cache_root() -> Path:
    """$XDG_CACHE_HOME/tdgammon, or ~/.cache/tdgammon."""
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tdgammon"


def sources_digest(dirs: tuple[Path, ...] = PACKAGE_DIRS) -> str:
    """The first 16 hex digits of a SHA-256 over the names and contents of the dirs' .py files."""
    digest = hashlib.sha256()
    for directory in dirs:
        for path in sorted(directory.glob("*.py")):
            digest.update(f"{directory.name}/{path.name}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def kernel_cache_dir() -> Path:
    """numba's cache directory for these sources: under $NUMBA_CACHE_DIR if set, else cache_root()."""
    base = os.environ.get("NUMBA_CACHE_DIR")
    root = Path(base) if base else cache_root() / "numba"
    return root / f"tdgammon-{sources_digest()}"


def configure_numba() -> None:
    """Point numba's cache at kernel_cache_dir(); must run before any kernel is decorated.

    Each edit of the sources makes a new directory of a few MB, so all but the
    KEPT_KERNEL_CACHES most recently used are deleted.
    """
    directory = kernel_cache_dir()
    numba.config.CACHE_DIR = str(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        os.utime(directory)
        versions = sorted(directory.parent.glob("tdgammon-*"), key=lambda d: d.stat().st_mtime, reverse=True)
    except OSError:
        return  # an unwritable cache: numba falls back to __pycache__
    for stale in versions[KEPT_KERNEL_CACHES:]:
        shutil.rmtree(stale, ignore_errors=True)
