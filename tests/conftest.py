"""Shared test pieces: the external programs some tests need, and the tiers.

Markers (registered in pyproject.toml):
  slow     thousands of games, a pit, a training run, or more than ~3 s
  gnubg    needs GNU Backgammon; skipped, with the reason, when it is not installed
  browser  drives Chromium with Playwright; skipped, with the reason, when Chromium is missing

`python -m pytest -m "not slow"` is the quick tier; plain `python -m pytest` runs everything.
"""

from __future__ import annotations

import os
import shutil

import pytest

# The gnubg binary: on PATH, else where Debian's package puts it.
GNUBG = shutil.which("gnubg") or ("/usr/games/gnubg" if os.path.exists("/usr/games/gnubg") else None)
requires_gnubg = pytest.mark.skipif(GNUBG is None, reason="GNU Backgammon (gnubg) is not installed")

CHROMIUM = os.environ.get("TDGAMMON_CHROMIUM", "/usr/bin/chromium")
HAVE_CHROMIUM = os.path.exists(CHROMIUM) or shutil.which(CHROMIUM) is not None
requires_chromium = pytest.mark.skipif(
    not HAVE_CHROMIUM, reason=f"Chromium not found at {CHROMIUM} (apt-get install chromium)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test marked gnubg or browser skips, with the reason, when its program is missing."""
    for item in items:
        if item.get_closest_marker("gnubg"):
            item.add_marker(requires_gnubg)
        if item.get_closest_marker("browser"):
            item.add_marker(requires_chromium)
