"""The Kazaross-XG2 table: bounds, symmetry, Crawford/post-Crawford and game outcomes."""

import itertools

import pytest

from engine.errors import CubeError
from engine.cube.match_equity import max_match_length, mwc, mwc_after, outcome_mwcs


def test_mwc_in_unit_interval_and_symmetric():
    n = max_match_length()
    assert n == 25
    for a, b in itertools.product(range(1, n + 1), repeat=2):
        for post in (False, True):
            v = mwc(a, b, post)
            assert 0.0 <= v <= 1.0
            assert v + mwc(b, a, post) == pytest.approx(1.0, abs=1e-6)


def test_known_values_and_monotonicity():
    assert mwc(1, 1) == 0.5
    assert mwc(1, 2) == pytest.approx(0.67736)      # Crawford game, 1-away vs 2-away
    assert mwc(2, 1, post_crawford=True) == pytest.approx(0.48803)  # post-Crawford 2-away trailer
    assert mwc(7, 7) == 0.5
    for a in range(1, 25):
        for b in range(1, 26):
            assert mwc(a, b) >= mwc(a + 1, b) - 1e-9   # needing more never helps


def test_match_over():
    assert mwc(0, 5) == 1.0 and mwc(-3, 5) == 1.0
    assert mwc(5, 0) == 0.0


def test_out_of_table_raises():
    with pytest.raises(CubeError):
        mwc(26, 3)


def test_crawford_then_post_crawford():
    # Pre-Crawford 3-away vs 4-away: winning 2 leads to the Crawford game (pre table, row 0).
    assert mwc_after(3, 4, 2, crawford=False) == mwc(1, 4)
    # After the Crawford game the post-Crawford row applies.
    assert mwc_after(1, 4, -1, crawford=True) == pytest.approx(mwc(1, 3, post_crawford=True))
    # A post-Crawford game stays post-Crawford.
    assert mwc_after(1, 4, -2, crawford=False) == pytest.approx(1.0 - 0.48803)


def test_outcomes_capped_at_the_match():
    o = outcome_mwcs(2, 5, 1, crawford=False)
    assert list(o[1:3]) == [1.0, 1.0]                  # a gammon wins the 2-away match
    assert o[0] == mwc(1, 5)
    assert o[3] == mwc(2, 4) and o[4] == mwc(2, 3) and o[5] == mwc(2, 2)
    assert all(0.0 <= v <= 1.0 for v in o)
