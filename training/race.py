"""Training the race network: our own race positions, valued by our own search down to the bear-off database.

The recipe (fitted value iteration, every step self-play):
1. Positions: the race afterstates of a net's own 1-ply self-play games, and, so the net
   also sees the plays it must rank below the best, every play of a fresh roll from the
   position after each of them. Positions with both sides home are left out: the exact
   databases answer those at play time.
2. Round 0 fits the race net to a starting teacher's 1-ply values (the contact net's).
3. Each further round values every position by our 2-ply search with the current race
   net (engine.search through engine.race.RaceNet.evaluate, which answers both-home
   positions exactly), and fits the net to those values, warm-started. The exact values
   reach one roll further back each round.

No other program's evaluations, rollouts or games: gnubg only measures the result.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import torch

from engine import bearoff
from engine import race as race_inputs
from engine.errors import ConfigError
from engine.evaluator import N_OUTPUTS, Evaluator
from engine.movegen import generate
from engine.position import game_results, is_race
from engine.race import RACE_INPUTS, RaceNet
from engine.search import evaluate_afterstates
from training.distill import record_positions, search_targets


@dataclass(frozen=True)
class RaceConfig:
    """One race-net run. Each field is a TOML key of the same name."""

    seed: int = 1            # seeds the games, the fresh rolls, the weights and the batches
    games: int = 4000        # self-play games of the position net whose races give the positions
    max_positions: int = 40000  # at most this many afterstates (a random subset) are kept
    hidden: int = 64         # hidden sigmoid units of the race net
    rounds: int = 4          # 2-ply rounds after the 1-ply start
    epochs: int = 12         # passes over the positions per round
    lr: float = 0.003        # Adam's step size, falling linearly to lr / 10 over a round
    batch: int = 256         # positions per step

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            lo, hi = RACE_RANGES[f.name]
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if f.type == "int":
                number = number and isinstance(value, int)
            if not number or not math.isfinite(value) or not lo <= value <= hi:
                raise ConfigError(f"config key {f.name!r} must be a {f.type} in [{lo:g}, {hi:g}], got {value!r}")


RACE_RANGES: dict[str, tuple[float, float]] = {
    "seed": (0, 2**63 - 1), "games": (1, 10**9), "max_positions": (100, 10**8), "hidden": (1, 4096),
    "rounds": (0, 100), "epochs": (1, 10_000), "lr": (1e-7, 1.0), "batch": (1, 1 << 20),
}


def load_race_config(path: str | Path) -> RaceConfig:
    """Read and validate a TOML race-net configuration (unknown keys refused)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise ConfigError(f"cannot read config file {path}: {err}") from None
    known = {f.name for f in fields(RaceConfig)}
    for key in data:
        if key not in known:
            raise ConfigError(f"{path}: unknown key {key!r} (known: {', '.join(sorted(known))})")
    try:
        return RaceConfig(**data)
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from None


def is_net_race(board: np.ndarray) -> bool:
    """A race the race net answers: no contact, not finished, not both sides home."""
    return bool(is_race(board)) and not bearoff.both_home(board) and game_results(board[None])[0] == 0


def race_positions(position_net, games: int, max_positions: int, seed: int) -> np.ndarray:
    """The race afterstates of `games` 1-ply self-play games of `position_net` (a TDNet),
    plus every play of a fresh roll after each; de-duplicated, at most max_positions."""
    from training.selfplay import seed_state

    chosen = record_positions(position_net, games, seed_state(seed, 0))
    chosen = chosen[[is_net_race(b) for b in chosen]]
    rng = np.random.default_rng(seed)
    found = [chosen]
    for board, (d1, d2) in zip(chosen, rng.integers(1, 7, size=(len(chosen), 2))):
        found.append(generate(board[::-1], int(d1), int(d2))[0])
    boards = np.concatenate(found)
    boards = boards[[is_net_race(b) for b in boards]]
    _, first = np.unique(boards.reshape(len(boards), -1), axis=0, return_index=True)
    boards = boards[np.sort(first)]
    if len(boards) > max_positions:
        boards = boards[np.sort(rng.choice(len(boards), max_positions, replace=False))]
    return boards


class RaceModule(torch.nn.Module):
    """The race net in torch for fitting: RACE_INPUTS -> hidden sigmoid -> 5 sigmoid."""

    def __init__(self, hidden: int, seed: int) -> None:
        super().__init__()
        torch.manual_seed(seed)
        self.hidden = torch.nn.Linear(RACE_INPUTS, hidden)
        self.out = torch.nn.Linear(hidden, N_OUTPUTS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.out(torch.sigmoid(self.hidden(x))))

    def to_race_net(self) -> RaceNet:
        """The play-time copy (engine.race.RaceNet, float32 arrays)."""
        def arr(t: torch.Tensor) -> np.ndarray:
            return np.ascontiguousarray(t.detach().numpy(), dtype=np.float32)
        return RaceNet(w1=arr(self.hidden.weight.T), b1=arr(self.hidden.bias),
                       w2=arr(self.out.weight.T), b2=arr(self.out.bias))


def fit_round(module: RaceModule, x: np.ndarray, y: np.ndarray, cfg: RaceConfig, seed: int) -> float:
    """Fit by mean squared error (Adam, step falling to lr / 10); the held-out 5%'s error after."""
    gen = torch.Generator().manual_seed(seed)
    xt, yt = torch.from_numpy(x), torch.from_numpy(np.ascontiguousarray(y, dtype=np.float32))
    perm = torch.randperm(len(xt), generator=gen)
    n_val = max(1, len(xt) // 20)
    val, train = perm[:n_val], perm[n_val:]
    opt = torch.optim.Adam(module.parameters(), lr=cfg.lr)
    steps = cfg.epochs * -(-len(train) // cfg.batch)
    step = 0
    for _ in range(cfg.epochs):
        order = train[torch.randperm(len(train), generator=gen)]
        for start in range(0, len(order), cfg.batch):
            b = order[start:start + cfg.batch]
            opt.param_groups[0]["lr"] = cfg.lr * (1.0 - 0.9 * step / steps)
            step += 1
            loss = ((module(xt[b]) - yt[b]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        return float(((module(xt[val]) - yt[val]) ** 2).mean())


def train_race_net(cfg: RaceConfig, position_net, start_teacher: Evaluator, log=print,
                   save: Path | None = None) -> RaceNet:
    """The whole recipe (module docstring); `save` receives the net after every round."""
    boards = race_positions(position_net, cfg.games, cfg.max_positions, cfg.seed)
    x = race_inputs.encode(boards)
    log(f"{len(boards)} race positions from {cfg.games} games")
    module = RaceModule(cfg.hidden, cfg.seed)
    targets = evaluate_afterstates(start_teacher, boards)
    for round_ in range(cfg.rounds + 1):
        mse = fit_round(module, x, targets, cfg, cfg.seed + round_)
        net = module.to_race_net()
        log(f"round {round_}: held-out mse {mse:.6f}")
        if save is not None:
            net.save(save)
        if round_ < cfg.rounds:
            targets = search_targets(boards, net, ply=2)
    return net
