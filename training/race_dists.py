"""Training the one-sided race net (engine.race_dists): our own dynamic programming, no teacher.

Why it works without any other program: a side's roll counts in a race depend on its own
checkers alone, and obey the same recursion the bear-off databases are built by: the
distribution of a position is the average over the 21 rolls of the distribution of its
best play shifted by one roll, the best play being the one with the fewest expected
rolls (each of the three counts chooses its own). The databases end the recursion
exactly once every checker is home; the net carries it back to the race's start.

The recipe (fitted value iteration, warm-started):
1. Positions: one side's 15 checkers with at least one outside its home board, met on
   walks toward home from the opening, from a few stragglers with the rest home (the
   gammon and backgammon races) and from random spreads, half the plays random, half
   those that leave the fewest crossovers; de-duplicated.
2. Each round values every position by the recursion above with the current net (the
   databases for successors that are home), and fits the net to those distributions by
   cross-entropy. The exact values reach one roll further from home each round.
"""

from __future__ import annotations

import numpy as np
import torch

from engine import bearoff
from engine.cache import kernel
from engine.dice import ALL_ROLLS
from engine.movegen import _ZOBRIST, MAX_PLAYS, generate, generate_into
from engine.race_dists import (ALL_OFF, FIRST_OFF, HEADS, MEAN_SCALE, ONE_INPUTS, ROLLS, ZONE_OUT, RaceDistNet, encode,
                               home_mean_rolls, in_zone, is_home, net_means, side_dists)

OPENING = {23: 2, 12: 5, 7: 3, 5: 5}
# The loss also weighs the squared error of each cumulative distribution: the odds of
# a race are sums of P(done within n rolls), so a few hundredths there cost equity.
CDF_WEIGHT = 10.0  # the default of fit's cdf_weight


CROSS = np.arange(24) // 6  # quadrant boundaries a checker on each point still has to cross


def positions(count: int, seed: int, stragglers_share: float = 0.3) -> np.ndarray:
    """(n <= count, 25) int8 distinct one-sided rows of 15 checkers, some outside home; walks
    start from the opening a quarter of the time, from a few stragglers `stragglers_share`."""
    rng = np.random.default_rng(seed)
    found: dict[bytes, np.ndarray] = {}
    while len(found) < count:
        row = np.zeros(25, dtype=np.int8)
        kind = rng.random()
        if kind < 0.25:
            for point, n in OPENING.items():
                row[point] = n
        elif kind < 0.25 + stragglers_share:  # a few stragglers, the rest home: the gammon races
            stragglers = int(rng.integers(1, 5))
            for _ in range(stragglers):
                row[int(rng.integers(6, 24))] += 1
            for _ in range(15 - stragglers):
                row[int(6 * rng.random() ** rng.uniform(0.5, 2.0))] += 1
        else:
            top, shape = rng.integers(6, 24), rng.uniform(0.4, 2.5)
            for _ in range(15):
                row[int(top * rng.random() ** shape + rng.random())] += 1
        greedy = rng.random() < 0.5
        board = np.zeros((2, 25), dtype=np.int8)
        board[0] = row
        while not is_home(board[0]) and len(found) < count:
            found.setdefault(board[0].tobytes(), board[0].copy())
            plays = generate(board, int(rng.integers(1, 7)), int(rng.integers(1, 7)))[0]
            if greedy and rng.random() < 0.8:
                pick = int(np.argmin(plays[:, 0, :24].astype(np.int64) @ CROSS))
            else:
                pick = int(rng.integers(len(plays)))
            board = plays[pick]
    return np.stack(list(found.values()))


@kernel(nogil=True)
def _targets(rows, rolls, dist, gammon, home_means, mean_rolls, binom, w1, b1, w2, b2, zobrist, out):
    """out (n, HEADS, ROLLS): the recursion's distributions of each row under the net (each
    count's play chosen by the net's expected rolls, or the databases' when home)."""
    boards = np.empty((MAX_PLAYS, 2, 25), dtype=np.int8)
    steps = np.empty((MAX_PLAYS, 4, 2), dtype=np.int8)
    hashes = np.empty(MAX_PLAYS, dtype=np.int64)
    board = np.zeros((2, 25), dtype=np.int8)
    x = np.empty(ONE_INPUTS, np.float32)
    hidden = np.empty(w1.shape[1], np.float32)
    cand = np.empty((HEADS, ROLLS), np.float64)
    mean = np.empty(HEADS, np.float64)
    best_mean = np.empty(HEADS, np.float64)
    best = np.empty(HEADS, np.int64)
    for k in range(rows.shape[0]):
        out[k, :, :] = 0.0
        board[0, :] = rows[k]
        for t in range(rolls.shape[0]):
            d1, d2, weight = rolls[t, 0], rolls[t, 1], rolls[t, 2] / 36.0
            n = generate_into(board, d1, d2, boards, steps, hashes, zobrist)
            best_mean[:] = 1e9
            for m in range(n):
                if is_home(boards[m, 0]):
                    j = bearoff.bearoff_index(boards[m, 0], binom)
                    mean[ALL_OFF] = home_means[0, j]
                    mean[FIRST_OFF] = home_means[1, j]
                    mean[ZONE_OUT] = 0.0
                else:
                    net_means(boards[m, 0], mean_rolls, binom, w1, b1, w2, b2, x, hidden, mean)
                for head in range(HEADS):
                    if mean[head] < best_mean[head]:
                        best_mean[head] = mean[head]
                        best[head] = m
            for head in range(HEADS):
                side_dists(boards[best[head], 0], dist, gammon, mean_rolls, binom, w1, b1, w2, b2, x, hidden, cand)
                for r in range(ROLLS - 1):
                    out[k, head, r + 1] += weight * cand[head, r]
                out[k, head, ROLLS - 1] += weight * cand[head, ROLLS - 1]
        if in_zone(rows[k]) == 0:
            out[k, ZONE_OUT, :] = 0.0
            out[k, ZONE_OUT, 0] = 1.0


def targets(rows: np.ndarray, net: RaceDistNet) -> np.ndarray:
    """(n, HEADS, ROLLS) float32 one-step recursion targets of the rows under `net`."""
    rolls = np.array(ALL_ROLLS, dtype=np.int64)
    out = np.zeros((len(rows), HEADS, ROLLS))
    steps = np.arange(ROLLS, dtype=np.float64)
    home_means = np.stack([bearoff.table() @ steps, bearoff.gammon_table() @ steps])
    _targets(np.ascontiguousarray(rows, dtype=np.int8), rolls, bearoff.table(), bearoff.gammon_table(), home_means,
             home_mean_rolls(), bearoff.BINOM, net.w1, net.b1, net.w2, net.b2, _ZOBRIST, out)
    return out.astype(np.float32)


class DistModule(torch.nn.Module):
    """The net in torch for fitting: ONE_INPUTS -> hidden sigmoid -> HEADS x ROLLS logits."""

    def __init__(self, hidden: int, seed: int) -> None:
        super().__init__()
        torch.manual_seed(seed)
        self.hidden = torch.nn.Linear(ONE_INPUTS, hidden)
        self.out = torch.nn.Linear(hidden, HEADS * ROLLS + HEADS)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Log-probabilities (n, HEADS, ROLLS) and the expected rolls / MEAN_SCALE (n, HEADS)."""
        z = self.out(torch.sigmoid(self.hidden(x)))
        return torch.log_softmax(z[:, :HEADS * ROLLS].view(-1, HEADS, ROLLS), dim=-1), z[:, HEADS * ROLLS:]

    def to_net(self) -> RaceDistNet:
        def arr(t: torch.Tensor) -> np.ndarray:
            return np.ascontiguousarray(t.detach().numpy(), dtype=np.float32)
        return RaceDistNet(w1=arr(self.hidden.weight.T), b1=arr(self.hidden.bias),
                           w2=arr(self.out.weight.T), b2=arr(self.out.bias))


def fit(module: DistModule, x: np.ndarray, y: np.ndarray, epochs: int, lr: float, batch: int,
        seed: int, cdf_weight: float = CDF_WEIGHT) -> tuple[float, float]:
    """Cross-entropy to the target distributions, plus their means and cumulative
    distributions by squared error (Adam, step falling to lr / 10); the
    held-out 5%'s mean absolute error of the expected rolls (ALL_OFF, FIRST_OFF) after."""
    gen = torch.Generator().manual_seed(seed)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    mt = (yt * torch.arange(ROLLS, dtype=torch.float32)).sum(-1) / MEAN_SCALE
    perm = torch.randperm(len(xt), generator=gen)
    n_val = max(1, len(xt) // 20)
    val, train = perm[:n_val], perm[n_val:]
    opt = torch.optim.Adam(module.parameters(), lr=lr)
    steps = max(1, epochs * -(-len(train) // batch))
    step = 0
    for _ in range(epochs):
        order = train[torch.randperm(len(train), generator=gen)]
        for start in range(0, len(order), batch):
            b = order[start:start + batch]
            opt.param_groups[0]["lr"] = lr * (1.0 - 0.9 * step / steps)
            step += 1
            logp, mean = module(xt[b])
            cdf_error = (torch.cumsum(logp.exp(), -1) - torch.cumsum(yt[b], -1)) ** 2
            loss = (-(yt[b] * logp).sum(dim=-1).mean() + ((mean - mt[b]) ** 2).mean()
                    + cdf_weight * cdf_error.sum(-1).mean())
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        r = torch.arange(ROLLS, dtype=torch.float32)
        got = (module(xt[val])[0].exp()[:, :2] * r).sum(-1)
        want = (yt[val][:, :2] * r).sum(-1)
        return tuple(float(e) for e in (got - want).abs().mean(0))


def train(rows: np.ndarray, rounds: int, layers: int, hidden: int, epochs: int, lr: float, batch: int,
          seed: int, log=print, save=None, start: RaceDistNet | None = None,
          cdf_weight: float = CDF_WEIGHT) -> RaceDistNet:
    """The whole recipe (module docstring) over `rows` (from `positions`).

    Each round walks the rows from the fewest pips up in `layers` slices: a slice's targets
    come from the net as fitted to the slices below it, so the exact values reach far
    from home within one round. `save(net, round)` after every round.
    """
    x = encode(rows)
    pips = rows[:, :24].astype(np.int64) @ np.arange(1, 25)
    slices = np.array_split(np.argsort(pips, kind="stable"), layers)
    module = DistModule(hidden, seed)
    if start is not None:
        with torch.no_grad():
            module.hidden.weight.copy_(torch.from_numpy(start.w1.T))
            module.hidden.bias.copy_(torch.from_numpy(start.b1))
            module.out.weight.copy_(torch.from_numpy(start.w2.T))
            module.out.bias.copy_(torch.from_numpy(start.b2))
    net = module.to_net()
    y = np.zeros((len(rows), HEADS, ROLLS), dtype=np.float32)
    for round_ in range(rounds):
        for layer, part in enumerate(slices):
            y[part] = targets(rows[part], net)
            seen = np.concatenate(slices[:layer + 1]) if round_ == 0 else np.arange(len(rows))  # rows with targets
            err = fit(module, x[seen], y[seen], epochs, lr, batch, seed + 1000 * round_ + layer, cdf_weight)
            net = module.to_net()
            log(f"round {round_} layer {layer} (pips up to {pips[part].max()}): held-out error of the "
                f"expected rolls {err[0]:.4f} (all off), {err[1]:.4f} (first off)")
        if save is not None:
            save(net, round_)
    return net


__all__ = ["positions", "targets", "fit", "train", "DistModule", "FIRST_OFF"]
