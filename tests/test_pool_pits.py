"""Pooling pit chunks: games-weighted ppg, standard errors combined."""

import json
import math

import pytest

from scripts.lab.pool_pits import main, pool


def test_two_equal_chunks_pool_to_the_mean_with_a_narrower_interval():
    out = pool([(50, 0.2, 0.8), (50, -0.4, 0.8)])
    assert out["games"] == 100 and out["ppg"] == pytest.approx(-0.1)
    assert out["ci95"] == pytest.approx(0.8 / math.sqrt(2))
    assert pool([])["ci95"] == math.inf


def test_the_command_reads_pit_json_and_priors(tmp_path, capsys):
    f = tmp_path / "1.json"
    f.write_text(json.dumps({"games": 100, "ppg": 0.3, "ci95": 0.4}))
    assert main([str(f), "--prior", "100", "-0.1", "0.4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["games"] == 200 and out["ppg"] == pytest.approx(0.1) and out["chunks"] == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main([str(bad)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
