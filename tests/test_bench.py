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
])
def test_bench_prints_its_figure(argv, capsys):
    assert main(["bench", *argv]) in (0, None)
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert re.fullmatch(rf"{argv[0]}: [0-9.]+ .+", last), last
