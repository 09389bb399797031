"""The cube calibration study: the bias report, the fit, and the calibrated evaluator."""

import json

import numpy as np
import pytest

from engine.evaluator import flip
from engine.position import Position
from scripts.lab.cube_calibration import CalibratedEvaluator, fit, position_type, report
from tests.test_extbot_cube import Fixed

START = Position.start().board


def _rows(tmp_path, ours, truth, kind="contact", n=8):
    rows = [{"position": f"p{i}", "type": kind, "ply1": ours, "ply2": ours, "rollout": truth,
             "se": [0.01] * 5, "trials": 72, "truncate": 16, "cpu_s": 1.0} for i in range(n)]
    (tmp_path / "rollouts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_fit_recovers_a_known_bias_and_report_measures_it(tmp_path):
    ours = [0.70, 0.10, 0.0, 0.05, 0.0]
    truth = [0.75, 0.15, 0.0, 0.05, 0.0]
    _rows(tmp_path, ours, truth)
    k, g_fav, g_dog = fit(tmp_path)["contact"]
    logit = lambda p: np.log(p / (1 - p))  # noqa: E731
    assert k == pytest.approx(logit(0.75) / logit(0.70), abs=1e-3)
    assert g_fav == pytest.approx((0.15 / 0.75) / (0.10 / 0.70), abs=1e-3)
    assert g_dog == pytest.approx((0.05 / 0.25) / (0.05 / 0.30), abs=1e-3)
    assert fit(tmp_path)["race"] == (1.0, 1.0, 1.0)  # no race rows: identity
    row = next(r for r in report(tmp_path)["rows"] if r["ply"] == "ply1" and r["group"] == "contact")
    assert row["n"] == 8 and row["win"][0] == pytest.approx(-0.05)
    # The fitted calibration takes our probabilities onto the rollout's.
    out = CalibratedEvaluator(Fixed(ours), fit(tmp_path)).evaluate(START[None])[0]
    assert out[[0, 1, 3]] == pytest.approx(np.array(truth)[[0, 1, 3]], abs=1e-3)


def test_calibration_is_symmetric_in_the_sides_and_leaves_races_alone():
    params = {"contact": (1.2, 1.1, 0.9), "gammonish": (1.0, 1.0, 1.0), "race": (1.0, 1.0, 1.0)}
    p = np.array([0.7, 0.1, 0.01, 0.05, 0.0])
    a = CalibratedEvaluator(Fixed(p), params).evaluate(START[None])[0]
    b = CalibratedEvaluator(Fixed(flip(p)), params).evaluate(START[None])[0]
    assert b == pytest.approx(flip(a))
    assert a[0] > 0.7  # k > 1 pushes the favourite further from 1/2
    race = np.zeros((2, 25), dtype=np.int8)
    race[0, 0], race[1, 0] = 15, 15  # both sides home: no contact
    assert position_type(race, p) == "race"
    assert CalibratedEvaluator(Fixed(p), params).evaluate(race[None])[0] == pytest.approx(p)
    identity = {t: (1.0, 1.0, 1.0) for t in params}
    assert CalibratedEvaluator(Fixed(p), identity).evaluate(START[None])[0] == pytest.approx(p)


def test_the_diagnosis_runs_on_a_few_benchmark_decisions(capsys):
    from scripts.lab.cube_diagnosis import main

    assert main(["--limit", "40"]) == 0
    out = capsys.readouterr().out
    assert "1-ply vs judge, all" in out and "window" in out
    assert "Janowski on the judge's probabilities" in out
