"""Tesauro's 198 inputs, as numba kernels over int8 boards.

Layout for a board whose row 0 is "us" (for an afterstate: the side that just moved):
  [0, 96)    our points 1..24 (our own numbering), 4 units each:
             n >= 1, n >= 2, n >= 3, (n - 3) / 2 when n > 3
  96         our bar checkers / 2
  97         our borne-off checkers / 15
  [98, 196)  the same 98 units for the opponent (row 1), in its own numbering
  196        1 when row 0 is on roll
  197        1 when row 1 is on roll
Every scored position in this project is an afterstate (row 1 on roll), so 196/197 are
always 0/1; they are kept so the layout is Tesauro's.

A net built with `features` reads N_FEATURES more inputs after these 198: the
hand-crafted values of engine.features (198 + N_FEATURES inputs in all). The input
count of a net's first layer says which layout it reads.
"""

from __future__ import annotations

import numpy as np
from engine.cache import kernel

from engine.features import N_FEATURES, write_features

N_INPUTS = 198
N_FEATURE_INPUTS = N_INPUTS + N_FEATURES
# Bump when the meaning of any input changes; checkpoints store it and loading refuses
# a mismatch. Changelog: 1 = the layout above.
ENCODER_VERSION = 1
MAX_ACTIVE = 2 * (24 * 4 + 2) + 1 + N_FEATURES  # upper bound on active inputs of one board


def input_count(features: bool) -> int:
    """Inputs of a net with or without the hand-crafted features."""
    return N_FEATURE_INPUTS if features else N_INPUTS


@kernel(inline="always")
def point_unit(n, k):
    """The k-th of the four units (0..3) of a point holding n checkers, as _fill writes it."""
    if k < 3:
        return np.float32(1.0) if n > k else np.float32(0.0)
    return np.float32((n - 3) / 2.0) if n > 3 else np.float32(0.0)


@kernel(inline="always")
def _fill(board, out):
    """Write the nonzero inputs of one afterstate into out, which must be all zeros."""
    for side in range(2):
        base = 98 * side
        on_board = 0
        for i in range(24):
            n = board[side, i]
            if n == 0:
                continue
            on_board += n
            j = base + 4 * i
            out[j] = 1.0
            if n >= 2:
                out[j + 1] = 1.0
                if n >= 3:
                    out[j + 2] = 1.0
                    if n > 3:
                        out[j + 3] = (n - 3) / 2.0
        bar = board[side, 24]
        out[base + 96] = bar / 2.0
        out[base + 97] = (15 - on_board - bar) / 15.0
    out[197] = 1.0


@kernel
def encode_into(board, out):
    """Write the 198 inputs of one afterstate into out (float32[198])."""
    out[:] = 0.0
    _fill(board, out)


@kernel(nogil=True)
def encode_sparse(board, idx, val):
    """Nonzero inputs of one afterstate into (idx, val); returns how many. Same values as encode_into."""
    k = 0
    for side in range(2):
        base = 98 * side
        on_board = 0
        for i in range(24):
            n = board[side, i]
            if n == 0:
                continue
            on_board += n
            j = base + 4 * i
            idx[k] = j
            val[k] = 1.0
            k += 1
            if n >= 2:
                idx[k] = j + 1
                val[k] = 1.0
                k += 1
            if n >= 3:
                idx[k] = j + 2
                val[k] = 1.0
                k += 1
            if n > 3:
                idx[k] = j + 3
                val[k] = (n - 3) / 2.0
                k += 1
        bar = board[side, 24]
        if bar > 0:
            idx[k] = base + 96
            val[k] = bar / 2.0
            k += 1
        off = 15 - on_board - bar
        if off > 0:
            idx[k] = base + 97
            val[k] = off / 15.0
            k += 1
    idx[k] = 197
    val[k] = 1.0
    return k + 1


@kernel(nogil=True)
def encode_sparse_features(board, idx, val):
    """encode_sparse, then the N_FEATURES feature inputs (all of them, zeros included).

    A separate kernel rather than a flag: numba compiles a runtime flag into a version
    about 4x slower.
    """
    k = encode_sparse(board, idx, val)
    write_features(board, val, k)
    for f in range(N_FEATURES):
        idx[k + f] = N_INPUTS + f
    return k + N_FEATURES


@kernel
def encode_batch(boards, features=False):
    """(n, 2, 25) int8 afterstates -> (n, 198 [+ N_FEATURES]) float32 inputs."""
    out = np.zeros((boards.shape[0], N_FEATURE_INPUTS if features else N_INPUTS), dtype=np.float32)
    for k in range(boards.shape[0]):
        _fill(boards[k], out[k])
        if features:
            write_features(boards[k], out[k], N_INPUTS)
    return out


def encode(boards: np.ndarray, features: bool = False) -> np.ndarray:
    """Encode one board (2, 25) or a batch (n, 2, 25) of afterstates."""
    arr = np.ascontiguousarray(boards, dtype=np.int8)
    if arr.ndim == 2:
        return encode_batch(arr[None], features)[0]
    return encode_batch(arr, features)
