"""Fuzz: Position IDs, Match IDs and dice through the command line (`scripts.cli.main`).

Every run ends with exit 0, or exit 2 and exactly one line on stderr (`tdgammon CMD: error:
...`, bounded), never a traceback or an internal error. pubeval stands in for the network
(the checks are about input, not about the model).
"""

from __future__ import annotations

import base64

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.position import Position
from scripts.cli import main

TRIED: dict[str, int] = {}
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

# Position IDs: random Base64 of the right length (mostly impossible boards), real ones
# mutated by a character, and arbitrary text.
POSITION_IDS = st.one_of(
    st.text(alphabet=B64, min_size=14, max_size=14),
    st.binary(min_size=10, max_size=10).map(lambda b: base64.b64encode(b).decode()[:14]),
    st.tuples(st.sampled_from(["4HPwATDgc/ABMA", "sGfwATDgc/ABMA", "AAAAAAAAAAAAAA", "/wAAAAAAAAAAAA"]),
              st.integers(0, 13), st.sampled_from(B64)).map(lambda t: t[0][:t[1]] + t[2] + t[0][t[1] + 1:]),
    st.text(max_size=40).filter(lambda s: not s.startswith("-")),
)
DICE = st.one_of(
    st.tuples(st.integers(-1, 9), st.integers(-1, 9)).map(lambda d: f"{d[0]}{d[1]}"),
    st.tuples(st.integers(0, 7), st.integers(0, 7), st.sampled_from(["-", " ", ",", "/", ""])).map(
        lambda d: f"{d[0]}{d[2]}{d[1]}"),
    st.text(max_size=20).filter(lambda s: not s.startswith("-")),
)
MATCH_IDS = st.one_of(
    st.text(alphabet=B64, min_size=12, max_size=12),
    st.binary(min_size=9, max_size=9).map(lambda b: base64.b64encode(b).decode()),
    st.text(max_size=30).filter(lambda s: not s.startswith("-")),
)


def run(capsys, argv: list[str]) -> None:
    code = main(argv)
    out, err = capsys.readouterr()
    lines = err.splitlines()
    if code == 0:
        assert not lines, (argv, err)
        return
    assert code == 2, (argv, code, err)
    assert len(lines) == 1, (argv, err)
    assert lines[0].startswith(f"tdgammon {argv[0]}: error: "), (argv, err)
    assert "Traceback" not in err and "internal error" not in err and len(lines[0]) <= 500


def count(name: str) -> None:
    TRIED[name] = TRIED.get(name, 0) + 1


@FUZZ
@given(POSITION_IDS)
def test_fuzz_show_position_ids(capsys, pid):
    count("show")
    run(capsys, ["show", pid])


@FUZZ
@given(POSITION_IDS, DICE)
def test_fuzz_moves_position_ids_and_dice(capsys, pid, dice):
    count("moves")
    run(capsys, ["moves", pid, dice, "--json"])


@FUZZ
@given(POSITION_IDS, DICE)
def test_fuzz_hint_position_ids_and_dice(capsys, pid, dice):
    count("hint")
    run(capsys, ["hint", pid, dice, "--evaluator", "pubeval", "--json"])


@FUZZ
@given(POSITION_IDS)
def test_fuzz_eval_position_ids(capsys, pid):
    count("eval")
    run(capsys, ["eval", pid, "--evaluator", "pubeval", "--json"])


@FUZZ
@given(MATCH_IDS)
def test_fuzz_eval_match_ids(capsys, match_id):
    count("eval_match_id")
    run(capsys, ["eval", Position.start().id, "--evaluator", "pubeval", "--match-id", match_id])


@FUZZ
@given(st.lists(st.tuples(POSITION_IDS, DICE), min_size=1, max_size=4))
def test_fuzz_moves_batch(capsys, monkeypatch, items):
    import io

    count("moves_batch")
    text = "".join(f"{p} {d}\n" for p, d in items if "\n" not in p + d and "\r" not in p + d)
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    run(capsys, ["moves", "--batch"])


def test_fuzz_cli_counts(capsys):
    with capsys.disabled():
        print(f"\nfuzz cli cases tried: {TRIED}")
