"""End to end with the real GNU Backgammon: gnubg plays `serve` in both seats, pit vs gnubg,
.mat import, gnubg's equities as a judge (scripts/lab/move_error.py).

Our side is pubeval, the fastest player. Skipped, with the reason, when gnubg is not
installed (tests/conftest.py).
"""

import json
import socket
import subprocess
import threading

import numpy as np
import pytest

from engine.gnubg.extbot import ExternalBot
from engine.formats.fibs import parse_fibs_board
from engine.notation import legal_plays, parse_play
from engine.position import Position
from engine.pubeval import PubevalEvaluator
from scripts.cli import main
from scripts.commands.serve import serve_connection
from tests.conftest import GNUBG

pytestmark = pytest.mark.gnubg
GAMES = 20


class LoggingBot(ExternalBot):
    def __init__(self):
        super().__init__(PubevalEvaluator(), 1)
        self.log = []

    def respond(self, line):
        answer = super().respond(line)
        self.log.append((line, answer))
        return answer


def reachable(after: np.ndarray, nxt: np.ndarray) -> bool:
    """Can the opponent turn our afterstate `after` into `nxt` (our next board) with one roll?"""
    if (after == nxt).all():
        return True                      # the opponent danced
    target = Position(nxt).swap()
    opp = Position(after).swap()
    for d1 in range(1, 7):
        for d2 in range(1, d1 + 1):
            if any(p.after == target for p in legal_plays(opp, (d1, d2))):
                return True
    return False


def check_log(log):
    """Every play we sent is legal, and gnubg applied it: the next board follows from it."""
    start = Position.start()
    after = None
    for line, answer in log:
        assert not answer.startswith("Error"), (line, answer)
        fb = parse_fibs_board(line)
        board = fb.position_board()
        if after is not None and answer not in ("take", "drop"):
            new_game = (Position(board) == start or reachable(start.board, board))
            assert new_game or reachable(after, board), line
        after = None
        d1, d2 = fb.dice()
        if not fb.doubled and d1:
            after, _ = parse_play(board, answer, (d1, d2))    # raises if illegal
            if Position(after).result():
                after = None                                  # we won; a new game follows


def start_bot_server(bot):
    """Serve one gnubg connection with `bot` on a free loopback port, in a thread.

    Returns (port, finish); finish() waits for the connection to end and closes the socket.
    """
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def serve():
        conn, _ = srv.accept()
        with conn:
            serve_connection(conn, bot)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    def finish():
        thread.join(timeout=30)
        srv.close()

    return srv.getsockname()[1], finish


@pytest.mark.slow
@pytest.mark.parametrize("seat", [0, 1])
def test_gnubg_plays_serve_in_both_seats(seat):
    bot = LoggingBot()
    port, finish = start_bot_server(bot)
    other = 1 - seat
    commands = [
        "set display off", "set jacoby off", "set automatic game off",
        f"set player {seat} external localhost:{port}", f"set player {other} gnubg",
        f"set player {other} chequerplay evaluation plies 0",
        f"set player {other} cubedecision evaluation plies 0",
        "new session", *(["new game"] * (GAMES - 1)), "show score",
    ]
    proc = subprocess.run([GNUBG, "-t", "-q"], input="\n".join(commands) + "\n",
                          capture_output=True, text=True, timeout=600)
    finish()
    out = proc.stdout
    finished = [l for l in out.splitlines() if " wins " in l and "point" in l]
    assert len(finished) == GAMES, out[-2000:]
    for bad in ("Error", "Warning", "badly formed", "Connection refused"):
        assert bad not in out
    assert bot.errors == 0 and bot.plays > GAMES * 5
    check_log(bot.log)


@pytest.mark.slow
def test_pit_against_gnubg_and_import_the_games(tmp_path, capsys):
    mat = tmp_path / "pit.mat"
    assert main(["pit", "pubeval", "gnubg", "--games", str(GAMES), "--json", "--no-progress",
                 "--save", str(mat)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["games"] == GAMES and result["unfinished"] == 0
    assert -3 <= result["ppg"] <= 3 and result["win_rate"] + result["b_win_rate"] == pytest.approx(1)
    script = tmp_path / "count.py"
    script.write_text(
        "import gnubg\n"
        "gnubg.command('set jacoby off')\n"
        f"gnubg.command('import mat {mat}')\n"
        "m = gnubg.match(analysis=0, boards=0, statistics=0, verbose=0)\n"
        "print('GAMES', len(m['games']), sum(g['info']['winner'] == 'X' for g in m['games']))\n")
    proc = subprocess.run([GNUBG, "-t", "-q", "-p", str(script)], capture_output=True, text=True,
                          timeout=120)
    line = next(l for l in proc.stdout.splitlines() if l.startswith("GAMES "))
    n_games, a_wins = (int(x) for x in line.split()[1:])
    assert n_games == GAMES
    assert a_wins == round(result["win_rate"] * GAMES)     # X = A, the left column


class AlwaysDoubles:
    """Evaluator: the side that just moved wins 20%, so our bot doubles whenever it may
    (gnubg then beavers when it is the favourite) and plays the first legal play."""

    name = "always-doubles"

    def evaluate(self, afterstates):
        return np.tile([0.2, 0.0, 0.0, 0.0, 0.0], (len(afterstates), 1))


@pytest.mark.parametrize("seat", [0, 1])
def test_gnubg_beavers_our_doubles_and_the_games_go_on(seat):
    """Beavers on: every beaver is answered (take/drop by engine.cube.equity) and every game finishes.

    gnubg 1.07 pauses after an external player takes a beaver (the turn stays with it), so
    the script sends `play` lines after each new game; a spare `play` only prints "No game".
    """
    games = 4
    bot = LoggingBot()
    bot.evaluator, bot.offer_doubles = AlwaysDoubles(), True
    port, finish = start_bot_server(bot)
    other = 1 - seat
    resume = ["play"] * 4
    commands = [
        "set display off", "set jacoby off", "set automatic game off", "set beavers 3",
        "set rng mersenne", "set seed 11",
        f"set player {seat} external localhost:{port}", f"set player {other} gnubg",
        f"set player {other} chequerplay evaluation plies 0",
        f"set player {other} cubedecision evaluation plies 0",
        "new session", *resume, *(["new game", *resume] * (games - 1)), "show score",
    ]
    proc = subprocess.run([GNUBG, "-t", "-q"], input="\n".join(commands) + "\n",
                          capture_output=True, text=True, timeout=600)
    finish()
    out = proc.stdout
    finished = [l for l in out.splitlines() if " wins " in l and "point" in l]
    assert len(finished) == games, out[-2000:]
    for bad in ("Error", "Warning", "badly formed", "Connection refused", "cube must have been offered"):
        assert bad not in out
    assert bot.errors == 0
    check_log(bot.log)
    beavers = [i for i, (line, _) in enumerate(bot.log) if parse_fibs_board(line).beavered]
    assert beavers, "gnubg never beavered"
    for i in beavers:
        line, answer = bot.log[i]
        fb = parse_fibs_board(line)
        assert answer in ("take", "drop")
        if answer == "take" and i + 1 < len(bot.log):
            nxt = parse_fibs_board(bot.log[i + 1][0])
            # The game went on: our next decision has the cube doubled again, on gnubg's side.
            assert nxt.cube == 2 * fb.cube and nxt.decider == fb.decider and nxt.cube_owner() == 1
    assert any(answer == "take" for _, answer in (bot.log[i] for i in beavers))


def test_gnubg_equity_requests_and_errors():
    from engine.gnubg.process import GnubgProcess
    board = np.zeros((2, 25), dtype=np.int8)
    board[0, 0] = 1          # I bear off my last checker with any roll...
    board[1, 12] = 15        # ...while all of theirs are still outside their home: a gammon
    process = GnubgProcess()
    try:
        assert process.equity(Position(board), 0) == pytest.approx(2.0, abs=1e-3)
        with pytest.raises(RuntimeError, match="gnubg"):
            process.equity(type("Bad", (), {"id": "not-an-id"})(), 0)
        assert process.equity(Position(board).swap(), 0) == pytest.approx(-2.0, abs=0.05)
    finally:
        process.close()


def test_move_error_judges_plays_with_gnubg(capsys):
    from scripts.lab.move_error import main as move_error
    assert move_error(["pubeval", "pubeval", "--reference", "pubeval", "--games", "2",
                       "--gnubg-plies", "0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "judge: gnubg 0-ply" in lines[0] and len(lines) == 3
    lost = float(lines[1].split(": ")[1].split()[0])
    assert lost > 0                                       # pubeval is weaker than gnubg 0-ply
    assert "minus the first: +0.0 ± 0.0" in lines[2]     # the same player, paired: no difference


def test_move_error_lists_the_costliest_decisions(capsys):
    from scripts.lab.move_error import main as move_error
    assert move_error(["pubeval", "--reference", "pubeval", "--games", "2", "--gnubg-plies", "0",
                       "--worst", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4
    costs = [float(line.split(" mp:")[0]) for line in lines[2:]]
    assert costs[0] >= costs[1] > 0                      # pubeval errs in two games; worst first
    position_id, dice = lines[2].split(": ")[1].split()[:2]
    Position.from_id(position_id)
    assert len(dice) == 2 and "played " in lines[2] and ", gnubg " in lines[2]
