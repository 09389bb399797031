"""The value network (198 [+ features] -> H sigmoid -> 5 sigmoid) and ensembles of it, as torch
modules: the training truth. Commands play them through models.inference."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from engine.encoder import input_count
from engine.errors import CheckpointError
from engine.evaluator import N_OUTPUTS


class TDNet(nn.Module):
    """Tesauro's architecture with gnubg's five outputs, all from the mover's view.

    With `features`, the inputs are Tesauro's 198 followed by engine.features' values.
    """

    def __init__(self, hidden: int = 80, features: bool = False) -> None:
        super().__init__()
        self.n_hidden = hidden
        self.features = features
        self.hidden = nn.Linear(input_count(features), hidden)
        self.out = nn.Linear(hidden, N_OUTPUTS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.out(torch.sigmoid(self.hidden(x))))

    def to_numpy(self) -> dict[str, np.ndarray]:
        """Weights in the layout the numba kernels use: w1 (inputs, H), b1 (H,), w2 (H, 5), b2 (5,)."""
        return {
            "w1": self.hidden.weight.detach().numpy().T.astype(np.float32).copy(),
            "b1": self.hidden.bias.detach().numpy().astype(np.float32).copy(),
            "w2": self.out.weight.detach().numpy().T.astype(np.float32).copy(),
            "b2": self.out.bias.detach().numpy().astype(np.float32).copy(),
        }

    def load_numpy(self, weights: dict[str, np.ndarray]) -> None:
        """Inverse of to_numpy."""
        with torch.no_grad():
            self.hidden.weight.copy_(torch.from_numpy(np.ascontiguousarray(weights["w1"].T)))
            self.hidden.bias.copy_(torch.from_numpy(weights["b1"]))
            self.out.weight.copy_(torch.from_numpy(np.ascontiguousarray(weights["w2"].T)))
            self.out.bias.copy_(torch.from_numpy(weights["b2"]))


def check_ensemble(nets: list[TDNet]) -> None:
    """Raise CheckpointError unless the nets can be one TDNetEnsemble."""
    if len(nets) < 2 or len({net.features for net in nets}) != 1:
        raise CheckpointError("an ensemble needs two or more nets that read the same inputs")


class TDNetEnsemble(nn.Module):
    """Several TDNets reading the same inputs; its outputs are the mean of theirs.

    Why: nets trained apart by self-play make different mistakes, so their mean makes
    fewer (the model card measures it). The inputs are encoded once for all members.
    """

    def __init__(self, members: list[TDNet]) -> None:
        super().__init__()
        check_ensemble(members)
        self.members = nn.ModuleList(members)
        self.features = members[0].features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.stack([member(x) for member in self.members]).mean(dim=0)
