"""Fuzz: mutated FIBS board lines. The bot answers every line with one line (a play, `roll`,
`double`, `take`, `drop`, an empty play, or `Error: ...`) and never raises; over a socket,
`serve` answers every line of a mutated stream and keeps serving.

The valid lines come from a pubeval self-play game, written by engine.formats.fibs.fibs_line.
"""

from __future__ import annotations

import random
import socket
import threading

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.formats.fibs import fibs_line
from engine.game import play_game
from engine.gnubg.extbot import ExternalBot
from engine.position import Position
from engine.pubeval import PubevalEvaluator
from scripts.commands.serve import serve_forever

TRIED: dict[str, int] = {}


class _Pubeval:
    name = "pubeval"

    def __init__(self):
        self.evaluator = PubevalEvaluator()

    def choose(self, position, dice, plays):
        from engine.search import best_play

        best = Position(best_play(position.board, dice, self.evaluator, 1).afterstate)
        return next(i for i, p in enumerate(plays) if Position(p.after.board) == best)


def _valid_lines() -> list[str]:
    record = play_game(_Pubeval(), _Pubeval(), np.random.default_rng(11))
    lines = []
    for turn in record.turns:
        lines.append(fibs_line(turn.position.board))
        lines.append(fibs_line(turn.position.board, turn.dice))
    return lines


VALID = _valid_lines()
BOT = ExternalBot(PubevalEvaluator())

NUMBERS = st.one_of(
    st.integers(-300, 300),
    st.integers(),
    st.sampled_from([128, -129, 255, 256, 261, -251, 2**31, 2**63, -2**63, 10**20, -10**20, 4096, 8192, 9999]),
)
TEXT = st.text(max_size=30)
FIELD_VALUE = st.one_of(NUMBERS.map(str), TEXT, st.sampled_from(["", " ", "1e3", "0x10", "nan", "١", "+5", "-0"]))


@st.composite
def mutated_line(draw) -> str:
    parts = draw(st.sampled_from(VALID)).split(":")
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["set", "set", "set", "delete", "insert", "truncate", "splice"]))
        if kind == "set" and parts:
            parts[draw(st.integers(0, len(parts) - 1))] = draw(FIELD_VALUE)
        elif kind == "delete" and parts:
            del parts[draw(st.integers(0, len(parts) - 1))]
        elif kind == "insert":
            parts.insert(draw(st.integers(0, len(parts))), draw(FIELD_VALUE))
        elif kind == "truncate":
            parts = parts[:draw(st.integers(0, len(parts)))]
        else:
            parts = parts + draw(st.sampled_from(VALID)).split(":")[draw(st.integers(0, 52)):]
    return ":".join(parts)


ANSWERS = ("roll", "double", "take", "drop")


def _check_answer(line: str, answer: str) -> None:
    assert isinstance(answer, str) and "\n" not in answer and "\r" not in answer, (line, answer)
    assert answer.startswith("Error: ") or answer in ANSWERS or answer == "" or "/" in answer, (line, answer)
    assert "internal error" not in answer, (line, answer)


@settings(max_examples=1500, deadline=None)
@given(mutated_line())
def test_fuzz_bot_answers_every_mutated_line(line):
    TRIED["bot_mutated_lines"] = TRIED.get("bot_mutated_lines", 0) + 1
    _check_answer(line, BOT.respond(line))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300) | st.binary(max_size=300).map(lambda b: b.decode("latin-1")))
def test_fuzz_bot_answers_arbitrary_text(line):
    TRIED["bot_arbitrary_text"] = TRIED.get("bot_arbitrary_text", 0) + 1
    _check_answer(line, BOT.respond(line))


def test_fuzz_serve_answers_a_stream_of_mutated_lines():
    """2,000 mutated lines (seeded) down one connection: one answer each, then a valid line
    still gets its play."""
    rng = random.Random(5)
    lines = []
    for _ in range(2000):
        parts = rng.choice(VALID).split(":")
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(parts))
            parts[i] = rng.choice([str(rng.randint(-300, 300)), str(rng.choice([128, 10**20, -251, 261])),
                                   "", "x", parts[i] * 2, "\xff"])
        lines.append(":".join(parts).replace("\n", ""))
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    bot = ExternalBot(PubevalEvaluator())
    thread = threading.Thread(target=serve_forever, args=(srv, bot, 1, 1, 60.0, None, None), daemon=True)
    thread.start()
    with socket.create_connection(srv.getsockname(), timeout=60) as conn, conn.makefile("rb") as answers:
        for line in lines:
            conn.sendall(line.encode("utf-8", "surrogateescape") + b"\n")
            if not line.strip():
                continue                 # blank lines get no answer
            _check_answer(line, answers.readline().decode().rstrip("\n"))
        conn.sendall(VALID[1].encode() + b"\n")
        assert not answers.readline().startswith(b"Error")
    thread.join(timeout=30)
    srv.close()
    TRIED["serve_stream_lines"] = len(lines)
    assert not thread.is_alive()


def test_fuzz_fibs_counts(capsys):
    with capsys.disabled():
        print(f"\nfuzz fibs cases tried: {TRIED}")
