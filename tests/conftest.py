"""Shared test pieces: the external programs some tests need, and the tiers.

Markers (registered in pyproject.toml):
  slow     thousands of games, a pit, a training run, or more than ~3 s
  gnubg    needs GNU Backgammon; skipped, with the reason, when it is not installed
  browser  drives Chromium with Playwright; skipped, with the reason, when Chromium is missing
  ray      starts a local Ray cluster: runs in a child pytest of its own (see below)

`python -m pytest -m "not slow"` is the quick tier; plain `python -m pytest` runs everything.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

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


# A test marked ray runs in a child pytest. Ray's driver can end its whole process (exit
# status 1, no report): on a failed internal check (one ended the suite silently at 64%,
# see training.rollout_ray.cancel_unfinished) or when it loses its raylet. In the parent
# that would end the suite; in a child it fails one test, with the child's output.
CHILD = "TDGAMMON_TEST_CHILD"
ROOT = Path(__file__).resolve().parent.parent


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    if not item.get_closest_marker("ray") or os.environ.get(CHILD):
        return None
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    start = time.time()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", item.nodeid],
                          cwd=ROOT, env={**os.environ, CHILD: "1"}, capture_output=True, text=True)
    stop = time.time()
    output = proc.stdout + proc.stderr
    skipped = re.search(r"^SKIPPED \[\d+\] ([^:]+):(\d+): (.*)$", output, re.MULTILINE)
    if proc.returncode == 0 and skipped:
        outcome, longrepr, when = "skipped", (skipped[1], int(skipped[2]), skipped[3]), "setup"
    elif proc.returncode == 0:
        outcome, longrepr, when = "passed", None, "call"
    else:
        outcome, when = "failed", "call"
        longrepr = (f"the child pytest exited with status {proc.returncode}"
                    f"{':' if output.strip() else ' and no report (its process ended abruptly)'}\n{output[-6000:]}")
    report = pytest.TestReport(item.nodeid, item.location, {k: 1 for k in item.keywords}, outcome, longrepr,
                               when, duration=stop - start, start=start, stop=stop)
    item.ihook.pytest_runtest_logreport(report=report)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True
