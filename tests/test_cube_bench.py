"""The cube benchmark: its data file, its error arithmetic, `bench cube`, and gnubg's cube answers."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from engine.cube.equity import CENTRE, ME_OWNS, CubeInfo
from engine.position import Position
from scripts.bench.cube import BENCHMARK, Case, judge_class, load_cases, score, summary
from scripts.cli import main
from scripts.lab.cube_benchmark import candidate_positions, cube_states

START = Position.start()


def case(nd, dt, dp=1.0):
    return Case(START, CubeInfo(), (nd, dt, dp), None, (0.5, 0.1, 0.0, 0.1, 0.0), "own")


def test_the_shipped_benchmark_holds_600_positions_each_centred_and_owned():
    doc = json.loads(BENCHMARK.read_text())
    assert len(doc["positions"]) >= 600
    assert {r["origin"] for r in doc["positions"]} == {"gnubg", "own"}
    money = load_cases(BENCHMARK, "money")
    assert len(money) == 2 * len(doc["positions"])
    assert {(c.cube.value, c.cube.owner) for c in money} == {(1, CENTRE), (2, ME_OWNS)}
    for length in (3, 5, 7):
        assert len(load_cases(BENCHMARK, str(length))) == len(doc["positions"])
    assert BENCHMARK.stat().st_size < 2_000_000


def test_errors_follow_the_judge():
    # Double/take (ND 0.5 < DT 0.8 < DP 1): no double costs 0.3; passing costs DP - DT = 0.2.
    s = score(case(0.5, 0.8), double=False, take=False)
    assert s.judge_action == "Double, take"
    assert s.doubler == pytest.approx(0.3) and s.taker == pytest.approx(0.2) and s.wrong
    assert score(case(0.5, 0.8), double=True, take=True).error == 0.0
    # Too good (ND 1.2 > DP): doubling cashes 1 instead of 1.2.
    s = score(case(1.2, 1.6), double=True, take=False)
    assert s.judge_action == "Too good" and s.doubler == pytest.approx(0.2) and s.taker == 0.0
    assert judge_class(0.2, -0.3, 1.0) == "No double"
    assert judge_class(0.9, 1.3, 1.0) == "Double, pass"
    totals = summary([score(case(0.5, 0.8), False, False), score(case(0.5, 0.8), True, True)])
    assert totals["mEMG"] == pytest.approx(250.0) and totals["wrong"] == 1
    assert totals["confusions"] == [["Double, take", "No double/pass", 1]]


def test_cube_states_and_positions_of_a_game():
    rng = np.random.default_rng(3)
    states = cube_states("4HPwATDgc/ABMA", rng)
    assert states[0] == CubeInfo() and states[1] == CubeInfo(value=2, owner=ME_OWNS)
    assert [s.match_length for s in states[2:]] == [3, 5, 7]
    assert all(s.may_double() and not s.crawford for s in states)

    class Record:
        turns = [type("T", (), {"position": Position.start()})() for _ in range(10)]
    assert len(candidate_positions(Record(), rng, 4)) == 4
    assert len(candidate_positions(Record(), rng, 40)) == 9   # the opening excluded


def test_bench_cube_prints_its_figure(capsys):
    assert main(["bench", "cube", "--model", "pubeval", "--ply", "1", "--limit", "6"]) in (0, None)
    out = capsys.readouterr().out
    assert "gnubg 0-ply:" in out and "by position type" in out
    assert re.fullmatch(r"cube: [0-9.]+ mEMG/decision", out.strip().splitlines()[-1])


def test_bench_cube_lists_the_decisions_that_lose_the_most(capsys):
    assert main(["bench", "cube", "--model", "pubeval", "--ply", "1", "--limit", "20", "--worst", "3",
                 "--json"]) in (0, None)
    doc = json.loads(capsys.readouterr().out)
    rows = doc["worst"]
    assert len(rows) == 3 and rows[0]["mEMG"] >= rows[1]["mEMG"] >= rows[2]["mEMG"]
    assert rows[0]["mEMG"] == pytest.approx(rows[0]["doubler"] + rows[0]["taker"])
    # The worst decision's error is the largest of the scored ones: their mean is no more.
    assert doc["ours"]["mEMG"] <= rows[0]["mEMG"] + 1e-9


@pytest.mark.parametrize("argv", [["--set", "9"], ["--limit", "-1"], ["--worst", "-2"], ["--data", "/nonexistent.json"]])
def test_bench_cube_bad_input_is_one_line(argv, capsys):
    assert main(["bench", "cube", "--model", "pubeval", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.gnubg
def test_gnubg_cube_analysis_matches_its_recorded_answers():
    """The driver's CUBE request reads owner and score the way gnubg's recorded analyses do."""
    from engine.gnubg.process import GnubgProcess

    data = Path(__file__).parent / "data" / "gnubg-cube-decisions.json"
    cases = [c for c in json.loads(data.read_text())["cases"] if not c["beavers"]][:12]
    process = GnubgProcess()
    try:
        for c in cases:
            cube = CubeInfo(value=c["cube"], owner=c["owner"], jacoby=c["jacoby"], match_length=c["match"],
                            score=tuple(c["score"]), crawford=c["crawford"])
            g = process.cube_analysis(Position.from_id(c["position"]), cube, 0)
            assert g.no_double == pytest.approx(c["gnubg"]["no_double"], abs=1e-4), c
            assert g.double_take == pytest.approx(c["gnubg"]["double_take"], abs=1e-4), c
            assert g.action == c["gnubg"]["action"], c
    finally:
        process.close()


@pytest.mark.gnubg
@pytest.mark.slow
def test_pit_with_the_cube_against_gnubg(capsys):
    assert main(["pit", "pubeval", "gnubg", "--cube", "--games", "2", "--workers", "1", "--json",
                 "--no-progress"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cube"] and out["games"] == 2
