"""numba's kernel cache is keyed on the sources, so an edit anywhere never runs stale kernels."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from engine import cache

ROOT = Path(__file__).resolve().parent.parent


def _package(tmp_path: Path, kernels: str) -> tuple[Path, Path]:
    engine_dir, training_dir = tmp_path / "engine", tmp_path / "training"
    for directory in (engine_dir, training_dir, engine_dir / "cube"):
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
    (dirs[0] / "cube" / "new.py").write_text("")
    assert cache.sources_digest(dirs) != edited


def _cache_dirs_after_import(tmp_path: Path, code: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"} | {"XDG_CACHE_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    return out


def test_importing_the_packages_has_no_side_effects(tmp_path: Path) -> None:
    out = _cache_dirs_after_import(tmp_path, "import engine, training, models, scripts, numba; "
                                             "print(numba.config.CACHE_DIR or '-')")
    assert out == ["-"]
    assert not (tmp_path / "tdgammon").exists()


def test_kernels_are_cached_under_the_directory_keyed_on_their_sources(tmp_path: Path) -> None:
    out = _cache_dirs_after_import(
        tmp_path, "import engine.movegen as m, training.kernels as k; "
                  "print(m.generate_into._cache._cache_path, k.td_step._cache._cache_path)")
    engine_dir = tmp_path / "tdgammon" / "numba" / f"tdgammon-{cache.sources_digest((cache.ENGINE_DIR,))}"
    training_dir = tmp_path / "tdgammon" / "numba" / (
        "tdgammon-" + cache.sources_digest((cache.ENGINE_DIR, ROOT / "training")))
    assert Path(out[0]).is_relative_to(engine_dir) and engine_dir.is_dir()
    assert Path(out[1]).is_relative_to(training_dir) and training_dir.is_dir()


def test_numba_cache_dir_from_the_environment_is_still_keyed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert cache.kernel_cache_dir() == tmp_path / f"tdgammon-{cache.sources_digest((cache.ENGINE_DIR,))}"


def test_only_the_most_recent_idle_versions_are_kept(tmp_path: Path) -> None:
    old = [tmp_path / f"tdgammon-old{i}" for i in range(cache.KEPT_UNUSED + 2)]
    for age, directory in enumerate(old):
        directory.mkdir()
        os.utime(directory, (1e9 - age, 1e9 - age))
    (tmp_path / "someone-else").mkdir()
    fresh = tmp_path / "tdgammon-fresh"
    assert cache.prepare_cache_dir(fresh)
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == sorted([fresh.name, "someone-else"] + [d.name for d in old[:cache.KEPT_UNUSED]])


def test_caches_in_use_by_other_checkouts_are_kept(tmp_path: Path) -> None:
    # Several checkouts (one cache per package each) share the root: none prunes another's.
    recent = [tmp_path / f"tdgammon-busy{i}" for i in range(3 * cache.KEPT_UNUSED)]
    for directory in recent:
        directory.mkdir()
    assert cache.prepare_cache_dir(tmp_path / "tdgammon-mine")
    assert all(d.is_dir() for d in recent)
