"""`tdgammon moves` and `tdgammon show`: outputs, the JSON format, and one-line errors with exit 2."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.position import encode_position_id
from scripts.cli import main

START = "4HPwATDgc/ABMA"
ROOT = Path(__file__).resolve().parent.parent
ORACLE = ROOT / "tests" / "data" / "gnubg-legal-moves.jsonl"


def _too_many_checkers_id() -> str:
    board = np.zeros((2, 25), dtype=np.int8)
    board[0, 5] = 16  # 16 checkers for the side on roll, 14 for the other: still 80 bits
    board[1, 5] = 14
    return encode_position_id(board)


def run_cli(capsys, argv: list[str], stdin: str | None = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_moves_json_has_the_issue_format(capsys):
    code, out, err = run_cli(capsys, ["moves", START, "31", "--json"])
    assert code == 0 and err == ""
    obj = json.loads(out)
    assert list(obj) == ["position", "dice", "moves"]
    assert obj["position"] == START and obj["dice"] == [3, 1]
    assert len(obj["moves"]) == 16
    assert all(list(m) == ["move", "afterstate"] for m in obj["moves"])
    assert {"move": "8/5 6/5", "afterstate": "4HPwATCwZ/ABMA"} in obj["moves"]


def test_moves_text_lists_every_play(capsys):
    code, out, _ = run_cli(capsys, ["moves", START, "3-1"])
    lines = out.splitlines()
    assert code == 0 and lines[0] == f"{START} 3-1: 16 legal plays"
    assert len(lines) == 17 and any("8/5 6/5" in line for line in lines)


def test_moves_with_no_legal_play(capsys):
    code, out, _ = run_cli(capsys, ["moves", "27YBBwDg/wcAQA", "66", "--json"])
    assert code == 0 and json.loads(out)["moves"] == []
    code, out, _ = run_cli(capsys, ["moves", "27YBBwDg/wcAQA", "6-6"])
    assert code == 0 and "no legal play" in out


def test_batch_matches_the_oracle(capsys, monkeypatch):
    records = [json.loads(line) for line in ORACLE.read_text().splitlines()[:300]]
    stdin = "".join(f"{r['position']} {r['dice'][0]}{r['dice'][1]}\n" for r in records)
    code, out, err = run_cli(capsys, ["moves", "--batch"], stdin, monkeypatch)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert len(lines) == len(records)
    for line, record in zip(lines, records):
        obj = json.loads(line)
        assert obj["position"] == record["position"] and obj["dice"] == record["dice"]
        assert sorted(m["afterstate"] for m in obj["moves"]) == record["afterstates"]
        assert sorted(m["move"] for m in obj["moves"]) == sorted(record["moves"])


def test_batch_accepts_all_dice_spellings_and_skips_blank_lines(capsys, monkeypatch):
    stdin = f"{START} 31\n\n{START} 3-1\n{START} 3 1\n"
    code, out, _ = run_cli(capsys, ["moves", "--batch"], stdin, monkeypatch)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 3 and len(set(lines)) == 1


BAD_ARGUMENTS = [
    (["moves", "4HPwATDgc/AB", "31"], "14 characters"),            # wrong length
    (["moves", "4HPwATDgc/AB!A", "31"], "Base64"),                  # bad Base64
    (["moves", _too_many_checkers_id(), "31"], "more than 15"),     # 16 checkers
    (["moves", START, "30"], "1..6"),                               # die 0
    (["moves", START, "71"], "1..6"),                               # die 7
    (["moves", START, "3"], "two digits"),                          # one die
    (["moves", START, "3-1-2"], "two digits"),                      # three dice
    (["moves", START], "DICE is required"),                        # missing dice
    (["moves", "--batch", START, "31"], "--batch"),                 # both modes
    (["show", "4HPwATDgc/ABM"], "14 characters"),
    (["show", _too_many_checkers_id()], "more than 15"),
]


@pytest.mark.parametrize("argv, message", BAD_ARGUMENTS)
def test_bad_input_is_one_stderr_line_and_exit_2(capsys, argv, message):
    code, out, err = run_cli(capsys, argv)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and message in err, err


@pytest.mark.parametrize("bad_line, message", [
    ("hello", "14 characters"),
    ("4HPwATDgc/ABMA 07", "1..6"),
    ("4HPwATDgc/ABMA x", "two digits"),
    ("4HPwATDgc/AB!A 31", "Base64"),
])
def test_batch_bad_line_names_its_number_and_stops(capsys, monkeypatch, bad_line, message):
    stdin = f"{START} 31\n{START} 66\n{bad_line}\n{START} 21\n"
    code, out, err = run_cli(capsys, ["moves", "--batch"], stdin, monkeypatch)
    assert code == 2
    assert len(err.splitlines()) == 1 and "line 3:" in err and message in err, err
    lines = out.splitlines()
    assert out.endswith("\n") and len(lines) == 2  # the good lines, whole, nothing after
    assert [json.loads(line)["dice"] for line in lines] == [[3, 1], [6, 6]]


def test_show_draws_the_board_with_pips(capsys):
    code, out, _ = run_cli(capsys, ["show", START])
    assert code == 0
    assert f"Position ID: {START}" in out
    assert "Pip count  O: 167  X: 167" in out
    assert "+13-14-15-16-17-18------19-20-21-22-23-24-+" in out


def test_command_line_entry_point_end_to_end():
    """The real process: batch output is flushed line by line and errors exit 2."""
    cmd = [sys.executable, "-m", "scripts.cli", "moves", "--batch"]
    bad = subprocess.run(cmd, input=f"{START} 66\n{START} 70\n", capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert bad.returncode == 2 and len(bad.stdout.splitlines()) == 1
    assert json.loads(bad.stdout)["dice"] == [6, 6]
    assert bad.stderr.strip().startswith("tdgammon moves: error: line 2:")
    assert "Traceback" not in bad.stderr
