"""Each quick benchmark runs and ends on its `NAME: figure` line (the figures are not asserted)."""

from __future__ import annotations

import re

import pytest

from scripts.cli import main


@pytest.mark.parametrize("argv", [
    ["movegen", "--repeat", "1"],
    pytest.param(["eval", "--repeat", "1"], marks=pytest.mark.slow),
    ["search", "--positions", "5"],
    ["search", "--positions", "2", "--ply", "3"],
    ["teacher", "--positions", "4"],
    ["cold", "--runs", "1"],
])
def test_bench_prints_its_figure(argv, capsys):
    assert main(["bench", *argv]) in (0, None)
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert re.fullmatch(rf"{argv[0]}: [0-9.]+ .+", last), last


def test_bench_search_refuses_a_screen_of_no_plays(capsys):
    assert main(["bench", "search", "--keep", "0"]) == 2
    assert "--keep must be at least 1" in capsys.readouterr().err


@pytest.mark.parametrize("args", [
    ["eval", "--repeat", "-1"], ["eval", "--chunk", "0"], ["movegen", "--repeat", "0"],
    ["search", "--positions", "-3"], ["teacher", "--positions", "0"], ["selfplay", "--games", "0"],
    ["selfplay", "--workers", "0"], ["actors", "--games", "0"], ["rollout", "--trials", "0"],
    ["cold", "--runs", "0"], ["cube", "--limit", "-1"], ["cube", "--ply", "0"], ["cube", "--worst", "x"],
])
def test_bench_refuses_a_bad_count_in_one_line(args, capsys):
    assert main(["bench", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and args[1] in err[0]


@pytest.mark.gnubg
@pytest.mark.slow
def test_bench_eval_vs_gnubg_ends_on_the_ratio(capsys):
    assert main(["bench", "eval", "--repeat", "1", "--vs-gnubg"]) in (0, None)
    lines = capsys.readouterr().out.strip().splitlines()
    assert re.fullmatch(r"eval: [0-9]+ positions/s", lines[-3])
    assert re.fullmatch(r"eval vs gnubg: [0-9.]+ \(ours [0-9]+ / gnubg [0-9]+ positions/s\); "
                        r"from the position played from [0-9.]+", lines[-1])
    assert re.fullmatch(r"eval from the position played from \(as searches call it\): [0-9]+ positions/s", lines[-4])


def test_bench_eval_without_gnubg_says_so(capsys, monkeypatch):
    import scripts.bench.eval as bench_eval

    monkeypatch.setattr(bench_eval, "gnubg_binary", lambda: None)
    every = bench_eval.oracle_afterstates
    monkeypatch.setattr(bench_eval, "oracle_afterstates", lambda: every()[:512])
    assert main(["bench", "eval", "--repeat", "1", "--vs-gnubg", "--chunk", "256"]) in (0, None)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-2] == "gnubg is not installed: ours only"
    assert re.fullmatch(r"eval: [0-9]+ positions/s", lines[-1])
