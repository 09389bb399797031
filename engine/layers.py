"""Float32 kernels of a one-hidden-layer net's forward pass that play (models.inference)
and self-play (training.kernels) share: the hidden sigmoid and the first layer's row sums.
Self-play also keeps the first layer as an accumulator updated by the inputs that changed
among one move's candidates (as NNUE engines do); play sums each board from scratch, so a
board's value never depends on its batch.

They live in engine/ because numba keys its cache on the engine's sources: a kernel that
calls these is recompiled whenever they change.
"""

from __future__ import annotations

import numpy as np

from engine.cache import FAST_MATH, kernel

REFRESH = 16  # boards between from-scratch accumulators, so rounding never drifts

_LOG2E = np.float32(1.4426950408889634)
_LN2_HI = np.float32(0.693145751953125)
_LN2_LO = np.float32(1.428606765330187e-06)


# error_model="numpy": without it numba guards every float division against zero, and a
# guarded loop does not vectorise (the hidden sigmoid ran 4 times slower).
@kernel(fastmath=FAST_MATH, nogil=True, error_model="numpy", inline="always")
def sigmoid_into(x, out, mantissa, exponent):
    """out = 1 / (1 + exp(-x)): exp by 2^k * p(r), p of degree 6 (relative error < 4e-7)."""
    one = np.float32(1.0)
    for h in range(x.shape[0]):
        t = min(max(-x[h], np.float32(-87.0)), np.float32(87.0))
        kf = np.floor(t * _LOG2E + np.float32(0.5))
        r = t - kf * _LN2_HI - kf * _LN2_LO
        mantissa[h] = one + r * (one + r * (np.float32(0.5) + r * (np.float32(1 / 6) + r * (
            np.float32(1 / 24) + r * (np.float32(1 / 120) + r * np.float32(1 / 720))))))
        exponent[h] = np.int32(kf) << 23
    bits = mantissa.view(np.int32)
    for h in range(x.shape[0]):
        bits[h] += exponent[h]
    for h in range(x.shape[0]):
        out[h] = one / (one + mantissa[h])


@kernel(fastmath=FAST_MATH, nogil=True, error_model="numpy", inline="always")
def add_rows(acc, w1, rows, scales, count):
    """acc += sum over j < count of scales[j] * w1[rows[j]], four rows a pass so acc is
    loaded and stored a quarter as often."""
    units = acc.shape[0]
    j = 0
    while j + 4 <= count:
        r0, r1, r2, r3 = w1[rows[j]], w1[rows[j + 1]], w1[rows[j + 2]], w1[rows[j + 3]]
        s0, s1, s2, s3 = scales[j], scales[j + 1], scales[j + 2], scales[j + 3]
        for h in range(units):
            acc[h] += s0 * r0[h] + s1 * r1[h] + s2 * r2[h] + s3 * r3[h]
        j += 4
    while j < count:
        r0 = w1[rows[j]]
        s0 = scales[j]
        for h in range(units):
            acc[h] += s0 * r0[h]
        j += 1


@kernel(fastmath=FAST_MATH, nogil=True, error_model="numpy", inline="always")
def sum_rows(x, acc, w1, b1, rows, scales):
    """acc = b1 + x . w1 from scratch, by the rows of x's nonzero inputs (play's whole first
    layer; a refresh of the carried one). rows and scales are work space of at least len(x)."""
    count = 0
    for i in range(w1.shape[0]):
        if x[i] != 0.0:
            rows[count] = i
            scales[count] = x[i]
            count += 1
    acc[:] = b1
    add_rows(acc, w1, rows, scales, count)


@kernel(fastmath=FAST_MATH, nogil=True, error_model="numpy", inline="always")
def carry_accumulator(x, previous, acc, w1, b1, rows, scales, since):
    """Bring acc = b1 + x . w1 from the inputs `previous` to x (then previous = x) by the rows
    of the inputs that changed, or from scratch when `since` (boards since the last
    refresh) reaches REFRESH or the change is no smaller; returns the new `since`.
    rows and scales are work space of at least len(x)."""
    n_inputs = w1.shape[0]
    changed = 0
    active = 0
    for i in range(n_inputs):
        if x[i] != previous[i]:
            rows[changed] = i
            scales[changed] = x[i] - previous[i]
            changed += 1
        active += x[i] != 0.0
    if since >= REFRESH or changed >= active:
        sum_rows(x, acc, w1, b1, rows, scales)
        since = 0
    else:
        add_rows(acc, w1, rows, scales, changed)
        since += 1
    for i in range(n_inputs):
        previous[i] = x[i]
    return since
