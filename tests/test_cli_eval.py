"""`tdgammon eval` and `tdgammon hint`: outputs, JSON fields, batch mode, errors -> one line and exit 2."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from engine.evaluator import equity, flip
from engine.movegen import generate
from engine.position import Position
from engine.pubeval import PubevalEvaluator
from models.checkpoint import Checkpoint, save_checkpoint
from models.inference import NetworkEvaluator
from models.network import TDNet
from scripts.cli import main

START = "4HPwATDgc/ABMA"
DANCE = None  # set below: the side on roll is on the bar against a closed board


def _dance_id() -> str:
    b = np.zeros((2, 25), dtype=np.int8)
    b[0, 24], b[0, 5] = 2, 13
    b[1, 0:6] = 2
    b[1, 12] = 3
    return Position(b).id


DANCE = _dance_id()


def run(capsys, monkeypatch, argv, stdin=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    torch.manual_seed(1)
    path = tmp_path_factory.mktemp("m") / "net.pt"
    save_checkpoint(path, Checkpoint(net=TDNet(20)))
    return path


def test_eval_text(capsys, monkeypatch):
    code, out, err = run(capsys, monkeypatch, ["eval", START, "--evaluator", "pubeval"])
    assert code == 0 and err == ""
    assert START in out and "cubeless equity" in out and "lose backgammon" in out


def test_eval_json_with_pubeval(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, ["eval", START, "--evaluator", "pubeval", "--json"])
    record = json.loads(out)
    assert code == 0 and {"position", "probs", "equity"} <= set(record)  # "cube" too with a cube option
    board = Position.from_id(START).board
    want = flip(PubevalEvaluator().evaluate(board[::-1][None])[0])
    np.testing.assert_allclose(record["probs"], want, atol=1e-6)
    assert record["equity"] == pytest.approx(float(equity(np.array(record["probs"]))), abs=1e-5)


@pytest.mark.slow
def test_eval_with_model_both_plies(capsys, monkeypatch, model_path):
    net_eval = NetworkEvaluator(TDNet(20))
    net_eval.net.load_state_dict(torch.load(model_path, weights_only=True)["state_dict"])
    board = Position.from_id(START).board
    for ply in ("1", "2"):
        code, out, _ = run(capsys, monkeypatch, ["eval", START, "--model", str(model_path), "--ply", ply, "--json"])
        assert code == 0
        probs = json.loads(out)["probs"]
        assert len(probs) == 5 and all(0 <= p <= 1 for p in probs)
    code, out, _ = run(capsys, monkeypatch, ["eval", START, "--model", str(model_path), "--json"])
    np.testing.assert_allclose(json.loads(out)["probs"], flip(net_eval.evaluate(board[::-1][None])[0]), atol=1e-6)


def test_hint_json_fields_and_order(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, ["hint", START, "3-1", "--evaluator", "pubeval", "--json"])
    record = json.loads(out)
    assert code == 0 and record["position"] == START and record["dice"] == [3, 1]
    moves = record["moves"]
    afters, _ = generate(Position.from_id(START).board, 3, 1)
    assert {m["afterstate"] for m in moves} == {Position(a).id for a in afters}
    assert moves[0]["move"] == "8/5 6/5"  # pubeval's (and everyone's) opening 31
    eqs = [m["equity"] for m in moves]
    assert eqs == sorted(eqs, reverse=True)
    for m in moves:
        assert {"move", "afterstate", "equity", "probs"} <= set(m) and len(m["probs"]) == 5


def test_hint_text_top_and_two_ply(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, ["hint", START, "31", "--evaluator", "pubeval", "--top", "3"])
    rows = [line for line in out.splitlines() if line.strip()[:1].isdigit()]
    assert code == 0 and len(rows) == 3 and "8/5 6/5" in rows[0]
    code, out, _ = run(capsys, monkeypatch, ["hint", START, "31", "--evaluator", "pubeval", "--ply", "2",
                                             "--json", "--top", "4"])
    moves = json.loads(out)["moves"]
    assert code == 0 and len(moves) == 4 and all(m["ply"] == 2 for m in moves)


def test_hint_no_legal_play(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, ["hint", DANCE, "66", "--evaluator", "pubeval", "--json"])
    assert code == 0 and json.loads(out)["moves"] == []
    code, out, _ = run(capsys, monkeypatch, ["hint", DANCE, "66", "--evaluator", "pubeval"])
    assert code == 0 and "no legal play" in out


def test_batch(capsys, monkeypatch):
    code, out, err = run(capsys, monkeypatch, ["hint", "--batch", "--evaluator", "random:4", "--top", "2"],
                         stdin=f"{START} 31\n\n{DANCE} 6-6\n{START} 6 6\n")
    lines = out.splitlines()
    assert code == 0 and err == "" and len(lines) == 3
    records = [json.loads(line) for line in lines]
    assert [r["dice"] for r in records] == [[3, 1], [6, 6], [6, 6]]
    assert len(records[0]["moves"]) == 2 and records[1]["moves"] == []
    code, out, _ = run(capsys, monkeypatch, ["eval", "--batch", "--evaluator", "pubeval"],
                       stdin=f"{START}\n{DANCE}\n")
    records = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [r["position"] for r in records] == [START, DANCE]


@pytest.mark.parametrize("argv, stdin, needle", [
    (["hint", "--batch", "--evaluator", "pubeval"], f"{START} 31\n{START} 71\n", "line 2"),
    (["hint", "--batch", "--evaluator", "pubeval"], f"{START}\n", "line 1"),
    (["eval", "--batch", "--evaluator", "pubeval"], f"{START}\n\nnot-an-id\n", "line 3"),
    (["eval", "--batch", "--evaluator", "pubeval"], f"{START} 31\n", "line 1"),
])
def test_batch_bad_line_stops_without_output(capsys, monkeypatch, argv, stdin, needle):
    code, out, err = run(capsys, monkeypatch, argv, stdin=stdin)
    assert code == 2 and out == "" and needle in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv", [
    ["eval", "AAAA", "--evaluator", "pubeval"],
    ["hint", START, "07", "--evaluator", "pubeval"],
    ["hint", START, "--evaluator", "pubeval"],
    ["eval", "--evaluator", "pubeval"],
    ["eval", START, "--evaluator", "nonsense"],
    ["eval", START, "--evaluator", "random:x"],
    ["hint", START, "31", "--evaluator", "pubeval", "--top", "0"],
    ["eval", START, "--model", "/nonexistent/model.pt"],
])
def test_errors_are_one_line_exit_2(capsys, monkeypatch, argv):
    code, out, err = run(capsys, monkeypatch, argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "error" in err and "Traceback" not in err


def test_corrupt_model_is_one_line_exit_2(capsys, monkeypatch, tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"\x00garbage" * 50)
    for argv in (["eval", START, "--model", str(bad)], ["hint", START, "31", "--model", str(bad)]):
        code, out, err = run(capsys, monkeypatch, argv)
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "corrupt" in err


@pytest.mark.slow
def test_installed_command_exit_status():
    proc = subprocess.run([sys.executable, "-m", "scripts.cli", "hint", START, "31", "--evaluator", "pubeval",
                           "--json", "--top", "1"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and json.loads(proc.stdout)["moves"][0]["move"] == "8/5 6/5"
    proc = subprocess.run([sys.executable, "-m", "scripts.cli", "eval", "bogus"], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 2 and proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1
