"""Numba kernels of self-play training: dice, the network forward on sparse inputs,
1-ply move choice and the online TD(lambda) update with eligibility traces.

Weights use the layout of TDNet.to_numpy(): w1 (inputs, H), b1 (H,), w2 (H, 5), b2 (5,);
the input count says whether the net reads engine.features after Tesauro's 198. Kernels
take their arrays grouped in the named tuples below (numba passes them as structs, at no
cost): the net, the move-choice buffers, the TD state and the end-of-game tables.
All functions release the GIL, so several threads can train at once (each on its own
copy of the weights, published after every game: training.selfplay.SelfPlay); with one
thread a run is exactly reproducible from its seed.

Perspective: the network scores an afterstate from the mover's view. A game is one
prediction sequence seen from a fixed side (the opening mover): a prediction made by
the other side is flipped (win <-> 1 - win, gammons and backgammons swapped), so the TD
error is the difference of consecutive fixed-view predictions, and at the end the
fixed-view outcome.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from engine.cache import FAST_MATH, kernel

from engine.bearoff import BINOM, MAX_ROLLS, exact_race, race_win_probability, table
from engine.encoder import MAX_ACTIVE, N_INPUTS, _fill, encode_sparse, encode_sparse_features
from engine.evaluator import N_OUTPUTS, can_lose_backgammon, can_lose_gammon
from engine.features import FEATURE_COUNTS, FEATURES_VERSION, write_features
from engine.layers import REFRESH, carry_accumulator, sigmoid_into
from engine.movegen import _ZOBRIST, MAX_PLAYS, generate_into
from engine.position import game_result, is_race
from engine.pubeval import pubeval_inputs

# Fixed-view component k of a flipped prediction is sign[k] * y[perm[k]] (+1 for win).
FLIP_PERM = np.array([0, 3, 4, 1, 2], dtype=np.int64)
FLIP_SIGN = np.array([-1.0, 1.0, 1.0, 1.0, 1.0], dtype=np.float32)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


# ----------------------------------------------------------------------------- dice
@kernel(nogil=True)
def next_u64(rng):
    """splitmix64 step; the whole generator state is rng[0], so it checkpoints as one int."""
    rng[0] += _GOLDEN
    z = rng[0]
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@kernel(nogil=True)
def uniform(rng):
    """A float in [0, 1) with 53 random bits."""
    return (next_u64(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@kernel(nogil=True)
def roll_die(rng):
    # Rejection sampling keeps all six faces exactly equally likely.
    limit = np.uint64(18446744073709551614)  # 6 * floor(2**64 / 6) - 1
    while True:
        z = next_u64(rng)
        if z <= limit:
            return np.int64(z % np.uint64(6)) + 1


# ------------------------------------------------------------------------ game steps
@kernel(nogil=True)
def start_game(board, rng):
    """Set the starting position and return the opening roll (d1, d2), ties re-rolled."""
    board[:, :] = 0
    for side in range(2):
        board[side, 23] = 2
        board[side, 12] = 5
        board[side, 7] = 3
        board[side, 5] = 5
    d1 = roll_die(rng)
    d2 = roll_die(rng)
    while d1 == d2:
        d1 = roll_die(rng)
        d2 = roll_die(rng)
    return d1, d2


@kernel(nogil=True)
def swap_sides(board):
    """Turn change in place: the next mover sees the board from its side."""
    for i in range(25):
        tmp = board[0, i]
        board[0, i] = board[1, i]
        board[1, i] = tmp


# -------------------------------------------------------------------------- network
@kernel(nogil=True, fastmath=FAST_MATH)
def forward_sparse(net, enc, n_active):
    """Hidden activations and the 5 outputs of one encoded afterstate, into enc.hidden, enc.y."""
    w1, b1, w2, b2 = net
    idx, val, hidden, out = enc
    H = b1.shape[0]
    for j in range(H):
        hidden[j] = b1[j]
    for a in range(n_active):
        row = w1[idx[a]]
        v = val[a]
        for j in range(H):
            hidden[j] += v * row[j]
    for j in range(H):
        hidden[j] = 1.0 / (1.0 + np.exp(-hidden[j]))
    for k in range(N_OUTPUTS):
        s = b2[k]
        for j in range(H):
            s += hidden[j] * w2[j, k]
        out[k] = 1.0 / (1.0 + np.exp(-s))


@kernel(nogil=True)
def ruled_equity(board, y):
    """Cubeless equity of afterstate board's outputs y as the play-time evaluator scores
    them: gnubg's sanity clamp, then the gammons the position rules out at zero
    (engine.evaluator.rule_out_gammons), so self-play picks moves as play does."""
    win = y[0]
    wg = min(y[1], win)
    wbg = min(y[2], wg)
    lg = min(y[3], 1.0 - win)
    lbg = min(y[4], lg)
    race = is_race(board)
    if not can_lose_gammon(board, 0):
        lg = 0.0
    if not can_lose_backgammon(board, 0, race):
        lbg = 0.0
    if not can_lose_gammon(board, 1):
        wg = 0.0
    if not can_lose_backgammon(board, 1, race):
        wbg = 0.0
    return 2.0 * win - 1.0 + wg - lg + wbg - lbg


@kernel(nogil=True)
def outcome_vector(board, out):
    """Exact outputs of a finished game from row 0's view (row 0 has borne off all)."""
    points = game_result(board)
    out[0] = 1.0
    out[1] = 1.0 if points >= 2 else 0.0
    out[2] = 1.0 if points >= 3 else 0.0
    out[3] = 0.0
    out[4] = 0.0


@kernel(nogil=True)
def is_finished(board):
    for i in range(25):
        if board[0, i] > 0:
            return False
    return True


# ---------------------------------------------------------------------- grouped arrays
class NetArrays(NamedTuple):
    """The network's weights (TDNet.to_numpy()'s layout), updated in place by training."""

    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray


class Encoded(NamedTuple):
    """One afterstate as the net saw it: its sparse inputs (the first n_active of idx and
    val), hidden activations and outputs."""

    idx: np.ndarray
    val: np.ndarray
    hidden: np.ndarray
    y: np.ndarray


class MoveBuffers(NamedTuple):
    """Move choice's work space: movegen's output (with its Zobrist keys), the candidate
    being scored and the best one so far."""

    boards: np.ndarray
    steps: np.ndarray
    hashes: np.ndarray
    zobrist: np.ndarray
    cand: Encoded
    best: Encoded


class TdState(NamedTuple):
    """TD(lambda)'s eligibility traces (one per output and weight), each input's
    learning-rate scale, and running stats: games, moves, sum |TD error|, unused.

    touched[i] is 1 once input i's traces may be nonzero in this game: the update and the
    reset skip the other rows of e_w1 (a game visits about half the inputs), which are
    zero. slope is add_gradient's work space: each output's gradient at the hidden
    pre-activations, (outputs, hidden).
    """

    e_w1: np.ndarray
    e_b1: np.ndarray
    e_w2: np.ndarray
    e_b2: np.ndarray
    input_lr: np.ndarray
    stats: np.ndarray
    touched: np.ndarray
    slope: np.ndarray


class EndTables(NamedTuple):
    """What values terminal afterstates exactly: the bear-off table (empty when games run
    to the end) and the binomials that index it."""

    dist: np.ndarray
    binom: np.ndarray


class Schedule(NamedTuple):
    """Self-play's hyper-parameters of one call: learning rate, trace decay, exploration.
    Give floats: numba compiles a kernel again for other number types."""

    alpha: float
    lam: float
    epsilon: float


def _encoded(hidden: int) -> Encoded:
    return Encoded(np.empty(MAX_ACTIVE, dtype=np.int64), np.empty(MAX_ACTIVE, dtype=np.float32),
                   np.empty(hidden, dtype=np.float32), np.empty(N_OUTPUTS, dtype=np.float32))


class Scratch:
    """Per-thread arrays, so kernels allocate nothing per move: the move buffers, the TD
    state, and the bear-off table the kernels use to end games at exact bear-off races
    (an empty one when off). Each input's learning-rate scale is new_inputs_lr for the
    inputs the newest features version added, whose weights start at zero on an upgraded
    net, and 1 for the rest."""

    def __init__(self, hidden: int, inputs: int = N_INPUTS, bearoff: bool = False,
                 new_inputs_lr: float = 1.0) -> None:
        self.moves = MoveBuffers(np.empty((MAX_PLAYS, 2, 25), dtype=np.int8),
                                 np.empty((MAX_PLAYS, 4, 2), dtype=np.int8),
                                 np.empty(MAX_PLAYS, dtype=np.int64), _ZOBRIST,
                                 _encoded(hidden), _encoded(hidden))
        input_lr = np.ones(inputs, dtype=np.float32)
        if inputs > N_INPUTS:
            input_lr[N_INPUTS + FEATURE_COUNTS[FEATURES_VERSION - 1]:] = new_inputs_lr
        self.td = TdState(np.zeros((N_OUTPUTS, inputs, hidden), dtype=np.float32),
                          np.zeros((N_OUTPUTS, hidden), dtype=np.float32),
                          np.zeros((N_OUTPUTS, hidden, N_OUTPUTS), dtype=np.float32),
                          np.zeros((N_OUTPUTS, N_OUTPUTS), dtype=np.float32),
                          input_lr, np.zeros(4, dtype=np.float64), np.zeros(inputs, dtype=np.uint8),
                          np.zeros((N_OUTPUTS, hidden), dtype=np.float32))
        self.end = EndTables(table() if bearoff else np.zeros((0, MAX_ROLLS), dtype=np.float64), BINOM)


# ------------------------------------------------------------------------ move choice
@kernel(nogil=True)
def is_terminal(board, dist):
    """Is this afterstate's value known exactly: a finished game or, with a bear-off table
    (dist not empty), an exact bear-off race?"""
    return is_finished(board) or (dist.shape[0] > 0 and exact_race(board))


@kernel(nogil=True)
def terminal_value(board, dist, binom, out):
    """The exact outputs of a terminal afterstate from row 0's view (no gammons in a bear-off race)."""
    if is_finished(board):
        outcome_vector(board, out)
    else:
        out[:] = 0.0
        out[0] = race_win_probability(board, dist, binom)


@kernel(nogil=True, fastmath=FAST_MATH, error_model="numpy")
def _score_dense(net, x, previous, acc, work, since):
    """The outputs of the inputs x into work's y and its hidden layer into work's hidden, the
    first layer's accumulator acc carried from the inputs `previous` (engine.layers);
    returns the new `since`."""
    w1, b1, w2, b2 = net
    rows, scales, mantissa, exponent, hidden, y = work
    since = carry_accumulator(x, previous, acc, w1, b1, rows, scales, since)
    sigmoid_into(acc, hidden, mantissa, exponent)
    z0, z1, z2, z3, z4 = b2[0], b2[1], b2[2], b2[3], b2[4]
    for j in range(hidden.shape[0]):
        h = hidden[j]
        z0 += h * w2[j, 0]
        z1 += h * w2[j, 1]
        z2 += h * w2[j, 2]
        z3 += h * w2[j, 3]
        z4 += h * w2[j, 4]
    one = np.float32(1.0)
    y[0] = one / (one + np.exp(-z0))
    y[1] = one / (one + np.exp(-z1))
    y[2] = one / (one + np.exp(-z2))
    y[3] = one / (one + np.exp(-z3))
    y[4] = one / (one + np.exp(-z4))
    return since


@kernel(nogil=True)
def choose_net(net, board, d1, d2, epsilon, rng, moves, end):
    """Play the best 1-ply afterstate (or, with probability epsilon, a random one).

    Writes the chosen afterstate into board (mover still in row 0; unchanged when no play
    is legal). Returns -1 when it is terminal (is_terminal: its exact value is in
    moves.best.y), else the active-input count of the chosen afterstate, whose sparse
    inputs, hidden layer and outputs are left in moves.best.

    The candidates are afterstates of one board and differ in a few inputs, so they are
    scored with a carried first-layer accumulator (_score_dense), as play does.
    """
    boards = moves.boards
    best_idx, best_val, best_hidden, best_y = moves.best
    dist, binom = end
    n = generate_into(board, d1, d2, boards, moves.steps, moves.hashes, moves.zobrist)
    if n == 0:
        boards[0] = board
        n = 1
    n_inputs, units = net.w1.shape
    features = n_inputs > N_INPUTS
    x = np.zeros(n_inputs, dtype=np.float32)
    previous = np.zeros(n_inputs, dtype=np.float32)
    acc = np.empty(units, dtype=np.float32)
    y = moves.cand.y
    work = (np.empty(n_inputs, dtype=np.int64), np.empty(n_inputs, dtype=np.float32),
            np.empty(units, dtype=np.float32), np.empty(units, dtype=np.int32), moves.cand.hidden, y)
    since = REFRESH
    first, last = 0, n
    if n > 1 and epsilon > 0.0 and uniform(rng) < epsilon:
        first = min(np.int64(uniform(rng) * n), n - 1)
        last = first + 1
    best = first
    best_eq = -1e9
    best_terminal = False
    for k in range(first, last):
        cand = boards[k]
        if is_terminal(cand, dist):
            terminal_value(cand, dist, binom, y)
            eq = ruled_equity(cand, y)
            terminal = True
        else:
            x[:] = 0.0
            _fill(cand, x)
            if features:
                write_features(cand, x, N_INPUTS)
            since = _score_dense(net, x, previous, acc, work, since)
            eq = ruled_equity(cand, y)
            terminal = False
        if eq > best_eq:
            best_eq = eq
            best = k
            best_terminal = terminal
            best_y[:] = y
            if not terminal:
                best_hidden[:] = moves.cand.hidden
    board[:, :] = boards[best]
    if best_terminal:
        return -1
    return encode_sparse_features(board, best_idx, best_val) if features else encode_sparse(board, best_idx, best_val)


# ----------------------------------------------------------------------- TD(lambda)
@kernel(nogil=True, fastmath=FAST_MATH)
def apply_td_and_decay(net, td, delta, alpha, lam):
    """w += alpha * sum_k delta_k e_k, then every trace decays by lambda (one fused pass).

    Row by row of w1, the outputs' traces in turn, so the row stays in cache; rows no
    input of this game touched hold zero traces and are skipped.
    """
    w1, b1, w2, b2 = net
    e_w1, e_b1, e_w2, e_b2, touched = td.e_w1, td.e_b1, td.e_w2, td.e_b2, td.touched
    K, I, H = e_w1.shape
    step = np.empty(K, dtype=np.float32)
    for k in range(K):
        step[k] = alpha * delta[k]
    for i in range(I):
        if not touched[i]:
            continue
        row = w1[i]
        for k in range(K):
            s = step[k]
            trace = e_w1[k, i]
            for j in range(H):
                row[j] += s * trace[j]
                trace[j] *= lam
    for k in range(K):
        s = step[k]
        for j in range(H):
            b1[j] += s * e_b1[k, j]
            e_b1[k, j] *= lam
            for m in range(N_OUTPUTS):
                w2[j, m] += s * e_w2[k, j, m]
                e_w2[k, j, m] *= lam
        for m in range(N_OUTPUTS):
            b2[m] += s * e_b2[k, m]
            e_b2[k, m] *= lam


@kernel(nogil=True, fastmath=FAST_MATH)
def add_gradient(w2, td, enc, n_active, flipped):
    """Add the gradient of enc's fixed-view prediction to the traces (sparse inputs).

    td.input_lr[i] scales input i's share, which scales the learning rate of its weights alone.
    Each output's slope at the hidden units is computed once, then added along each
    active input's rows.
    """
    e_w1, e_b1, e_w2, e_b2, input_lr = td.e_w1, td.e_b1, td.e_w2, td.e_b2, td.input_lr
    touched, slope = td.touched, td.slope
    idx, val, hidden, y = enc
    H = hidden.shape[0]
    for k in range(N_OUTPUTS):
        m = FLIP_PERM[k] if flipped else k
        sign = FLIP_SIGN[k] if flipped else 1.0
        dy = sign * y[m] * (1.0 - y[m])
        e_b2[k, m] += dy
        g_k = slope[k]
        for j in range(H):
            e_w2[k, j, m] += dy * hidden[j]
            g = dy * w2[j, m] * hidden[j] * (1.0 - hidden[j])
            e_b1[k, j] += g
            g_k[j] = g
    for a in range(n_active):
        i = idx[a]
        v = val[a] * input_lr[i]
        touched[i] = 1
        for k in range(N_OUTPUTS):
            trace = e_w1[k, i]
            g_k = slope[k]
            for j in range(H):
                trace[j] += v * g_k[j]


@kernel(nogil=True)
def td_step(net, td, sched, prev, cur, first, enc, n_active, flipped):
    """One online TD(lambda) step on the fixed-view prediction cur (enc.y's view when flipped).

    Pulls the previous prediction toward cur (unless this is the game's first), then, while
    the game goes on (n_active >= 0), adds cur's gradient to the traces and keeps cur.
    """
    if not first:
        delta = np.empty(N_OUTPUTS, dtype=np.float32)
        for k in range(N_OUTPUTS):
            delta[k] = cur[k] - prev[k]
            td.stats[2] += abs(delta[k]) / N_OUTPUTS
        apply_td_and_decay(net, td, delta, sched.alpha, sched.lam)
    if n_active >= 0:
        add_gradient(net.w2, td, enc, n_active, flipped)
        prev[:] = cur


@kernel(nogil=True)
def reset_traces(td):
    for i in range(td.touched.shape[0]):
        if td.touched[i]:
            td.e_w1[:, i] = 0.0
            td.touched[i] = 0
    td.e_b1[:] = 0.0
    td.e_w2[:] = 0.0
    td.e_b2[:] = 0.0


@kernel(nogil=True)
def fixed_view(y, flipped, out):
    for k in range(N_OUTPUTS):
        if flipped:
            out[k] = FLIP_SIGN[k] * y[FLIP_PERM[k]] + (1.0 if k == 0 else 0.0)
        else:
            out[k] = y[k]


@kernel(nogil=True)
def train_games(net, n_games, sched, rng, moves, td, end):
    """Play n_games of self-play, updating the weights online after every move. A game
    ends at its first terminal afterstate (is_terminal), whose exact value is the target."""
    board = np.empty((2, 25), dtype=np.int8)
    prev = np.empty(N_OUTPUTS, dtype=np.float32)
    cur = np.empty(N_OUTPUTS, dtype=np.float32)
    for _ in range(n_games):
        d1, d2 = start_game(board, rng)
        reset_traces(td)
        turn = 0
        n_moves = 0
        while True:
            flipped = (turn % 2) == 1
            m = choose_net(net, board, d1, d2, sched.epsilon, rng, moves, end)
            n_moves += 1
            fixed_view(moves.best.y, flipped, cur)
            td_step(net, td, sched, prev, cur, turn == 0, moves.best, m, flipped)
            if m < 0:
                break
            swap_sides(board)
            turn += 1
            d1 = roll_die(rng)
            d2 = roll_die(rng)
        td.stats[0] += 1
        td.stats[1] += n_moves


@kernel(nogil=True)
def _publish_flat(shared, own, base):
    for i in range(shared.shape[0]):
        value = shared[i] + (own[i] - base[i])
        shared[i] = value
        own[i] = value
        base[i] = value


@kernel(nogil=True)
def publish(shared, own, base):
    """Add a worker's change since its last publish (own - base) to the shared weights,
    then set own and base to the result: the worker hands on its updates and takes the
    other workers' back."""
    for s, o, b in ((shared.w1, own.w1, base.w1), (shared.w2, own.w2, base.w2)):
        _publish_flat(s.reshape(-1), o.reshape(-1), b.reshape(-1))
    for s, o, b in ((shared.b1, own.b1, base.b1), (shared.b2, own.b2, base.b2)):
        _publish_flat(s, o, b)


# ------------------------------------------------------------------------ benchmarks
OPP_RANDOM, OPP_PUBEVAL = 0, 1


@kernel(nogil=True)
def _pubeval_choice(board, n, boards, race_w, contact_w, x):
    """Index of pubeval's play among boards[:n] (race weights if the pre-move board is a race)."""
    w = race_w if is_race(board) else contact_w
    best = 0
    best_s = -np.inf
    for k in range(n):
        if is_finished(boards[k]):
            return k
        pubeval_inputs(boards[k], x)
        s = 0.0
        for i in range(x.shape[0]):
            s += w[i] * x[i]
        if s > best_s:
            best_s = s
            best = k
    return best


@kernel(nogil=True)
def play_benchmark(net, opponent, race_w, contact_w, n_games, rng, moves, end, points):
    """Net (1-ply, greedy) vs random or pubeval; points[g] = the net's signed result.

    The net moves first in even-numbered games, the opponent in odd ones. Games are
    played to the end; a bear-off table (dist not empty) only guides the net's choices.
    """
    board = np.empty((2, 25), dtype=np.int8)
    x = np.empty(122, dtype=np.float64)
    for g in range(n_games):
        d1, d2 = start_game(board, rng)
        net_to_move = g % 2 == 0
        while True:
            if net_to_move:
                choose_net(net, board, d1, d2, 0.0, rng, moves, end)
                over = is_finished(board)
            else:
                n = generate_into(board, d1, d2, moves.boards, moves.steps, moves.hashes, moves.zobrist)
                if n > 0:
                    if opponent == OPP_RANDOM:
                        k = min(np.int64(uniform(rng) * n), n - 1)
                    else:
                        k = _pubeval_choice(board, n, moves.boards, race_w, contact_w, x)
                    board[:, :] = moves.boards[k]
                over = is_finished(board)
            if over:
                y = moves.cand.y
                outcome_vector(board, y)
                pts = 1.0 + y[1] + y[2]
                points[g] = pts if net_to_move else -pts
                break
            swap_sides(board)
            net_to_move = not net_to_move
            d1 = roll_die(rng)
            d2 = roll_die(rng)
