"""Agreement with gnubg's own analysis of stored matches (scripts/lab/gnubg_analysis.py made the data).

gnubg analysed each match at its 1-ply (our 2-ply), cubeful; we analyse the same .mat files
at 2-ply and compare: each player's checker error rate within 25% of gnubg's, at least 80%
of the plays gnubg values 0.08 or worse marked at least doubtful, a Spearman rank
correlation of the per-decision checker errors of at least 0.7. gnubg is the yardstick only.
"""

import json
from pathlib import Path

import pytest

from scripts.lab.gnubg_analysis import BIG_ERROR, compare

DATA = Path(__file__).resolve().parent / "data"

pytestmark = pytest.mark.slow


def test_agreement_with_gnubg():
    report = compare(DATA, ply=2)
    assert len(report) == len(list(DATA.glob("gnubg-analysis-*.json"))) >= 2
    big = marked = 0
    for name, r in report.items():
        for player, (theirs, ours) in r["rates"].items():
            assert abs(ours - theirs) <= 0.25 * theirs, (name, player, theirs, ours)
        checker = r["checker"]
        assert checker["matched"] == checker["of_gnubg"]
        assert checker["spearman"] >= 0.7, (name, checker)
        big += checker["big_errors"]
        marked += checker["big_marked"]
    assert big and marked >= 0.8 * big, (marked, big, BIG_ERROR)
