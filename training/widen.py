"""Widen a trained network's hidden layer while keeping what it computes (Net2WiderNet).

Training a bigger net from scratch costs millions of games again; widening keeps the
trained units and adds copies of some of them. A unit and its copies split its outgoing
weights between them, so the widened net computes exactly what the original did. The
split is uneven and differs for each output, so TD's very first updates already move a
unit and its copy in different directions. Two cheaper ways were measured to stall:
new units with zero outgoing weights stayed idle (after 180,000 games their outgoing
weights averaged 0.006 against the trained units' 0.97), and even halves with 1% noise on
the copies' incoming weights stayed twins (their distance grew from 0.0111 to 0.0111 in
110,000 games).
"""

from __future__ import annotations

import torch

from models.checkpoint import Checkpoint
from models.network import TDNet


def widen(net: TDNet, hidden: int, seed: int) -> TDNet:
    """A net with `hidden` units: `net`'s units, then copies of randomly chosen ones."""
    old = net.n_hidden
    if hidden <= old:
        raise ValueError(f"--hidden {hidden} must exceed the network's {old} units")
    gen = torch.Generator().manual_seed(seed)
    copies = torch.cat([torch.randperm(old, generator=gen) for _ in range(-(-(hidden - old) // old))])
    sources = torch.cat([torch.arange(old), copies[: hidden - old]])
    # Each unit's outgoing weight to each output is split among the unit and its copies in
    # random shares (0.2 to 1 before normalising), so the shares sum to 1 per source.
    shares = 0.2 + 0.8 * torch.rand(net.out.weight.shape[0], hidden, generator=gen)
    totals = torch.zeros(shares.shape[0], old).index_add_(1, sources, shares)
    shares = shares / totals[:, sources]
    wide = TDNet(hidden, net.features)
    with torch.no_grad():
        wide.hidden.weight.copy_(net.hidden.weight[sources])
        wide.hidden.bias.copy_(net.hidden.bias[sources])
        wide.out.weight.copy_(net.out.weight[:, sources] * shares)
        wide.out.bias.copy_(net.out.bias)
    return wide


def widen_checkpoint(ckpt: Checkpoint, hidden: int, seed: int) -> Checkpoint:
    """The checkpoint with its net widened, its config's `hidden` updated and the widening
    recorded in its trainer state (later fits and training runs keep it)."""
    wide = widen(ckpt.net, hidden, seed)
    state = ckpt.state_with("widened", {"from": ckpt.net.n_hidden, "to": hidden, "seed": seed})
    return Checkpoint(wide, {**ckpt.config, "hidden": hidden}, ckpt.games_trained, state)
