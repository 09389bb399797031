"""numba's kernel cache is keyed on the sources, so an edit anywhere never runs stale kernels."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numba

from engine import cache

ROOT = Path(__file__).resolve().parent.parent


def _package(tmp_path: Path, kernels: str) -> tuple[Path, Path]:
    engine_dir, training_dir = tmp_path / "engine", tmp_path / "training"
    for directory in (engine_dir, training_dir):
        directory.mkdir(exist_ok=True)
    (engine_dir / "movegen.py").write_text("def f(): return 1\n")
    (training_dir / "kernels.py").write_text(kernels)
    return engine_dir, training_dir


def test_any_source_edit_changes_the_digest(tmp_path: Path) -> None:
    dirs = _package(tmp_path, "def g(): return 2\n")
    before = cache.sources_digest(dirs)
    assert cache.sources_digest(dirs) == before
    _package(tmp_path, "def g(): return 3\n")
    edited = cache.sources_digest(dirs)
    assert edited != before
    (dirs[0] / "new.py").write_text("")
    assert cache.sources_digest(dirs) != edited


def test_importing_engine_points_numba_at_the_keyed_directory(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"} | {"XDG_CACHE_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", "import engine.movegen, numba; print(numba.config.CACHE_DIR)"],
                         cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert out == str(tmp_path / "tdgammon" / "numba" / f"tdgammon-{cache.sources_digest()}")
    assert Path(out).is_dir()


def test_numba_cache_dir_from_the_environment_is_still_keyed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert cache.kernel_cache_dir() == tmp_path / f"tdgammon-{cache.sources_digest()}"


def test_only_the_most_recent_versions_are_kept(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(numba.config, "CACHE_DIR", numba.config.CACHE_DIR)
    old = [tmp_path / f"tdgammon-old{i}" for i in range(6)]
    for age, directory in enumerate(old):
        directory.mkdir()
        os.utime(directory, (1e9 - age, 1e9 - age))
    (tmp_path / "someone-else").mkdir()
    cache.configure_numba()
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == sorted([cache.kernel_cache_dir().name, "someone-else"]
                          + [d.name for d in old[:cache.KEPT_KERNEL_CACHES - 1]])
    assert numba.config.CACHE_DIR == str(cache.kernel_cache_dir())
