"""The 198-input encoder: golden vectors written out by hand, and the sparse kernel agreeing with the dense one."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from engine.encoder import MAX_ACTIVE, N_INPUTS, encode, encode_into, encode_sparse
from engine.position import Position, decode_position_id

ORACLE = Path(__file__).resolve().parent / "data" / "gnubg-legal-moves.jsonl"


def _expected(units: dict[int, float]) -> np.ndarray:
    x = np.zeros(N_INPUTS, dtype=np.float32)
    for i, v in units.items():
        x[i] = v
    return x


def test_starting_position_golden():
    # Each side: 2 on its 24-point (index 23), 5 on 13 (12), 3 on 8 (7), 5 on 6 (5).
    units = {}
    for base in (0, 98):
        units.update({base + 92: 1, base + 93: 1})                                # 2 checkers
        units.update({base + 48: 1, base + 49: 1, base + 50: 1, base + 51: 1.0})  # 5: (5-3)/2
        units.update({base + 28: 1, base + 29: 1, base + 30: 1})                  # 3 checkers
        units.update({base + 20: 1, base + 21: 1, base + 22: 1, base + 23: 1.0})  # 5
    units[197] = 1.0  # row 1 (the side that did not just move) is on roll
    np.testing.assert_array_equal(encode(Position.start().board), _expected(units))


def test_hand_built_position_golden():
    board = np.zeros((2, 25), dtype=np.int8)
    board[0, 0] = 1    # one blot on my 1-point
    board[0, 3] = 4    # four on my 4-point
    board[0, 10] = 7   # seven on my 11-point
    board[0, 24] = 1   # one on my bar; 13 on the board or bar -> 2 borne off
    board[1, 22] = 2   # two on the opponent's 23-point
    board[1, 5] = 6    # six on its 6-point
    board[1, 24] = 3   # three on its bar; 11 in play -> 4 borne off
    units = {
        0: 1,
        12: 1, 13: 1, 14: 1, 15: 0.5,
        40: 1, 41: 1, 42: 1, 43: 2.0,
        96: 0.5, 97: 2 / 15,
        98 + 88: 1, 98 + 89: 1,
        98 + 20: 1, 98 + 21: 1, 98 + 22: 1, 98 + 23: 1.5,
        98 + 96: 1.5, 98 + 97: 4 / 15,
        197: 1.0,
    }
    np.testing.assert_allclose(encode(board), _expected(units), rtol=0, atol=1e-7)


def test_batch_matches_single():
    boards = np.stack([Position.start().board, Position.start().swap().board,
                       decode_position_id("4PPgASTgc/ABMA")])
    batch = encode(boards)
    assert batch.shape == (3, N_INPUTS) and batch.dtype == np.float32
    for k in range(3):
        np.testing.assert_array_equal(batch[k], encode(boards[k]))


@pytest.fixture(scope="module")
def oracle_boards() -> np.ndarray:
    lines = ORACLE.read_text().splitlines()[::10]
    ids = []
    for line in lines:
        record = json.loads(line)
        ids.append(record["position"])
        ids.extend(record["afterstates"][:5])
    return np.stack([decode_position_id(i) for i in ids])


def test_sparse_agrees_with_dense(oracle_boards):
    dense = np.empty(N_INPUTS, dtype=np.float32)
    idx = np.empty(MAX_ACTIVE, dtype=np.int64)
    val = np.empty(MAX_ACTIVE, dtype=np.float32)
    assert len(oracle_boards) > 1000
    for board in oracle_boards:
        encode_into(board, dense)
        k = encode_sparse(board, idx, val)
        rebuilt = np.zeros(N_INPUTS, dtype=np.float32)
        rebuilt[idx[:k]] = val[:k]
        assert len(set(idx[:k].tolist())) == k  # no index written twice
        np.testing.assert_array_equal(rebuilt, dense)
        assert np.all(val[:k] != 0)
