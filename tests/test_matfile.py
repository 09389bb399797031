"""The .mat writer: layout, and (with the real gnubg) import and replay of the moves."""

import json
import subprocess

import numpy as np
import pytest

from engine.game import RandomPlayer, play_game
from engine.formats.matfile import MatGame, format_mat, write_mat
from engine.pit.harness import to_mat_game
from tests.conftest import GNUBG


def random_games(n):
    out = []
    for k in range(n):
        rec = play_game(RandomPlayer(np.random.default_rng(k)), RandomPlayer(np.random.default_rng(50 + k)),
                        np.random.default_rng(100 + k))
        out.append(to_mat_game(rec, True))
    return out


def test_layout():
    game = MatGame(turns=[(1, (6, 5), "24/13"), (0, (3, 1), "8/5 6/5"), (1, (6, 6), "")], result=-2)
    text = format_mat([game], ("A", "B"))
    lines = text.splitlines()
    assert lines[0] == " 0 point match" and lines[2] == " Game 1"
    assert lines[3].startswith(" A : 0") and lines[3].rstrip().endswith("B : 0")
    assert lines[4].startswith("  1) ") and lines[4].endswith("65: 24/13")
    assert lines[5].startswith("  2) 31: 8/5 6/5") and lines[5].endswith("66:")
    assert lines[6].strip() == "Wins 2 points" and lines[6].startswith(" " * 30)


@pytest.mark.gnubg
def test_gnubg_imports_and_replays(tmp_path):
    games = random_games(4)
    path = tmp_path / "games.mat"
    write_mat(path, games, ("alice", "bob"))
    script = tmp_path / "check.py"
    script.write_text(
        "import gnubg, json\n"
        "gnubg.command('set jacoby off')\n"
        f"gnubg.command('import mat {path}')\n"
        "m = gnubg.match(analysis=0, boards=0, statistics=0, verbose=0)\n"
        "out = []\n"
        "for g in m['games']:\n"
        "    moves = [a for a in g['game'] if a.get('action') == 'move']\n"
        "    out.append([g['info']['winner'], g['info']['points-won'], len(moves)])\n"
        "print('RESULT ' + json.dumps(out))\n")
    proc = subprocess.run([GNUBG, "-t", "-q", "-p", str(script)], capture_output=True, text=True, timeout=120)
    line = next(l for l in proc.stdout.splitlines() if l.startswith("RESULT "))
    imported = json.loads(line[7:])
    assert len(imported) == len(games)
    for game, (winner, points, n_moves) in zip(games, imported):
        assert points == abs(game.result)
        assert winner == ("X" if game.result > 0 else "O")   # gnubg: X = the left column
        assert n_moves == len(game.turns)
