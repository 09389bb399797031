"""The fast evaluation path: a trained net or ensemble as float32 arrays and one numba kernel.

The torch modules of models.network stay the training truth; this is how every command
plays them. Why a kernel of its own rather than torch:

- Tesauro's 198 inputs are mostly zero (about 28 active), so the first layer is a sum of
  the active inputs' weight rows, not a dense product.
- A board's first layer is never carried from the board before it in a batch: a carried
  accumulator rounds differently with the batch a board comes in, and then a cached
  value, a resumed run or a different batching would change results in the last bit.
  A board is summed from scratch (four weight rows a pass), or, when the caller names
  the position it was played from (`parents`: a search's replies, as NNUE engines do),
  from that position's sum plus the rows of the inputs that differ, about 18 of 56.
  Either way its value is a function of the board (and its parent) alone; the two
  differ by at most a few float32 roundings (2e-7). Self-play carries the accumulator
  among the candidates of one move, whose order is fixed.
- An ensemble's members are fused: one accumulator of members x hidden units.
- The hidden sigmoid is a polynomial exp that vectorises; outputs agree with torch to 1e-5.
- When the process interprets its kernels (engine.cache.interpret_kernels: a one-shot
  command), the same net runs as numpy products over the encoded inputs instead.

An InferenceNet is saved as .npz in the cache folder under the SHA-256 of the checkpoint
it came from, so a command can load it without importing torch.
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine import bearoff
from engine.cache import FAST_MATH, cache_root, kernel, kernels_compiled, prune_unused
from engine.encoder import N_FEATURE_INPUTS, N_INPUTS, _fill, encode, point_unit
from engine.evaluator import N_OUTPUTS, Parents, rule_out_gammons, sanity_clamp
from engine.features import write_features
from engine.layers import add_rows, sigmoid_into, sum_rows
from engine.netfile import save_weights, weights_digest

INFERENCE_VERSION = 1  # bump when the .npz layout changes
KEPT_NETS = 32  # of the cached copies unused for a week, this many newest stay

@kernel(fastmath=FAST_MATH, nogil=True, error_model="numpy", inline="always")
def _outputs(acc, w2t, b2, hidden, mantissa, exponent, out):
    """out (5,) = the members' mean of sigmoid(w2 . sigmoid(acc) + b2), acc the first layer."""
    members, n_hidden = w2t.shape[0], w2t.shape[2]
    sigmoid_into(acc, hidden, mantissa, exponent)
    for o in range(N_OUTPUTS):
        total = np.float32(0.0)
        for m in range(members):
            z = b2[m, o]
            w = w2t[m, o]
            base = m * n_hidden
            for h in range(n_hidden):
                z += hidden[base + h] * w[h]
            total += np.float32(1.0) / (np.float32(1.0) + np.exp(-z))
        out[o] = total / members


@kernel(fastmath=FAST_MATH, nogil=True, error_model="numpy", inline="always")
def _encode_into(board, x, n_inputs):
    """x = the board's n_inputs inputs (198, or 198 and the features)."""
    x[:] = 0.0
    _fill(board, x)
    if n_inputs > N_INPUTS:
        write_features(board, x, N_INPUTS)


@kernel(inline="always")
def _changed_inputs(board, parent, x, base, n_inputs, rows, scales):
    """The inputs in which board differs from parent, in input order: their rows and the
    differences (scales); returns how many. The 198 raw inputs are compared point by point
    on the boards; the features by value, board's in x and parent's in base."""
    count = 0
    for side in range(2):
        offset = 98 * side
        on_board = 0
        parent_on_board = 0
        for i in range(24):
            now, before = board[side, i], parent[side, i]
            on_board += now
            parent_on_board += before
            if now != before:
                for k in range(4):
                    change = point_unit(now, k) - point_unit(before, k)
                    if change != 0.0:
                        rows[count] = offset + 4 * i + k
                        scales[count] = change
                        count += 1
        now, before = board[side, 24], parent[side, 24]
        if now != before:
            rows[count] = offset + 96
            scales[count] = np.float32(now / 2.0) - np.float32(before / 2.0)
            count += 1
        off = np.float32((15 - on_board - now) / 15.0)
        parent_off = np.float32((15 - parent_on_board - before) / 15.0)
        if off != parent_off:
            rows[count] = offset + 97
            scales[count] = off - parent_off
            count += 1
    for i in range(N_INPUTS, n_inputs):
        if x[i] != base[i]:
            rows[count] = i
            scales[count] = x[i] - base[i]
            count += 1
    return count


@kernel(inline="always")
def _work_space(units):
    """A board's inputs (x), its changed or active rows and their scales, the first layer
    (acc), and the hidden sigmoid's arrays, allocated once per call of a forward kernel."""
    return (np.zeros(N_FEATURE_INPUTS, np.float32), np.empty(N_FEATURE_INPUTS, np.int64),
            np.empty(N_FEATURE_INPUTS, np.float32), np.empty(units, np.float32),
            np.empty(units, np.float32), np.empty(units, np.float32), np.empty(units, np.int32))


@kernel(fastmath=FAST_MATH, nogil=True, error_model="numpy")
def _forward(boards, w1, b1, w2t, b2, out):
    """(n, 2, 25) afterstates -> out (n, 5), each board's first layer summed from scratch."""
    n_inputs, units = w1.shape
    x, rows, scales, acc, hidden, mantissa, exponent = _work_space(units)
    for n in range(boards.shape[0]):
        _encode_into(boards[n], x, n_inputs)
        sum_rows(x, acc, w1, b1, rows, scales)
        _outputs(acc, w2t, b2, hidden, mantissa, exponent, out[n])


@kernel(fastmath=FAST_MATH, nogil=True, error_model="numpy")
def _forward_from_parents(boards, parents, parent_of, w1, b1, w2t, b2, out):
    """_forward, each board's first layer summed as its parent's (parents[parent_of[n]],
    summed from scratch once) plus the rows of the inputs that differ, in input order."""
    n_inputs, units = w1.shape
    parent_x = np.zeros((parents.shape[0], N_FEATURE_INPUTS), np.float32)
    parent_acc = np.empty((parents.shape[0], units), np.float32)
    summed = np.zeros(parents.shape[0], np.bool_)
    x, rows, scales, acc, hidden, mantissa, exponent = _work_space(units)
    for n in range(boards.shape[0]):
        p = parent_of[n]
        base = parent_x[p]
        if not summed[p]:
            _encode_into(parents[p], base, n_inputs)
            sum_rows(base, parent_acc[p], w1, b1, rows, scales)
            summed[p] = True
        if n_inputs > N_INPUTS:
            write_features(boards[n], x, N_INPUTS)
        count = _changed_inputs(boards[n], parents[p], x, base, n_inputs, rows, scales)
        acc[:] = parent_acc[p]
        add_rows(acc, w1, rows, scales, count)
        _outputs(acc, w2t, b2, hidden, mantissa, exponent, out[n])


@dataclass(frozen=True)
class InferenceNet:
    """A net or ensemble as the kernel reads it.

    w1: (inputs, members * hidden), the members' first layers side by side; b1 likewise;
    w2t: (members, 5, hidden); b2: (members, 5). `features`: whether the inputs go past 198.
    """

    w1: np.ndarray
    b1: np.ndarray
    w2t: np.ndarray
    b2: np.ndarray

    @property
    def features(self) -> bool:
        return self.w1.shape[0] > N_INPUTS

    @property
    def members(self) -> int:
        return self.w2t.shape[0]

    @classmethod
    def from_torch(cls, net) -> InferenceNet:
        """From a models.network TDNet or TDNetEnsemble (its `to_numpy` weights)."""
        weights = [m.to_numpy() for m in getattr(net, "members", [net])]
        width = max(len(w["b1"]) for w in weights)
        # Members of different widths are padded with units of zero weight: sigmoid(0) times
        # a zero output weight adds nothing.
        pad = [width - len(w["b1"]) for w in weights]
        return cls(w1=np.ascontiguousarray(np.concatenate([np.pad(w["w1"], ((0, 0), (0, p)))
                                                           for w, p in zip(weights, pad)], axis=1)),
                   b1=np.ascontiguousarray(np.concatenate([np.pad(w["b1"], (0, p)) for w, p in zip(weights, pad)])),
                   w2t=np.ascontiguousarray(np.stack([np.pad(w["w2"], ((0, p), (0, 0))).T
                                                      for w, p in zip(weights, pad)])),
                   b2=np.ascontiguousarray(np.stack([w["b2"] for w in weights])))

    def forward(self, boards: np.ndarray, parents: Parents | None = None) -> np.ndarray:
        """(n, 2, 25) int8 afterstates -> (n, 5) float32 raw network outputs; with `parents`
        each board's first layer starts from its parent's (see the module's docstring)."""
        boards = np.ascontiguousarray(boards, dtype=np.int8)
        if not kernels_compiled():
            return self._forward_numpy(boards)
        out = np.empty((len(boards), N_OUTPUTS), dtype=np.float32)
        if parents is None:
            _forward(boards, self.w1, self.b1, self.w2t, self.b2, out)
        else:
            _forward_from_parents(boards, np.ascontiguousarray(parents.boards, dtype=np.int8),
                                  np.ascontiguousarray(parents.index, dtype=np.int64),
                                  self.w1, self.b1, self.w2t, self.b2, out)
        return out

    def _forward_numpy(self, boards: np.ndarray) -> np.ndarray:
        """forward as dense numpy products: for a few boards in a process without numba."""
        x = encode(boards, self.features)[:, :self.w1.shape[0]].astype(np.float32)
        hidden = 1.0 / (1.0 + np.exp(-(x @ self.w1 + self.b1)))
        hidden = hidden.reshape(len(boards), self.members, -1)
        z = np.einsum("nmh,moh->nmo", hidden, self.w2t) + self.b2
        return (1.0 / (1.0 + np.exp(-z))).mean(axis=1).astype(np.float32)

    def weights(self) -> dict[str, np.ndarray]:
        return {"w1": self.w1, "b1": self.b1, "w2t": self.w2t, "b2": self.b2}

    def digest(self) -> str:
        """SHA-256 of the weights, stored beside them so a damaged copy is never played."""
        return weights_digest(self.weights())

    def save(self, path: Path) -> None:
        """Atomically, as .npz with the weights' digest (engine.netfile)."""
        save_weights(path, self.weights(), version=INFERENCE_VERSION)

    @classmethod
    def load(cls, path: Path) -> InferenceNet | None:
        """The saved net, or None when the file is missing, unreadable, of another version or damaged."""
        try:
            with np.load(path) as data:
                if int(data["version"]) != INFERENCE_VERSION:
                    return None
                net = cls(**{k: np.ascontiguousarray(data[k], dtype=np.float32) for k in ("w1", "b1", "w2t", "b2")})
                return net if str(data["digest"]) == net.digest() else None
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            return None


class NetworkEvaluator:
    """engine.evaluator.Evaluator backed by a net: forward, sanity clamp, impossible gammons
    zeroed (engine.evaluator.rule_out_gammons).

    `net` is a TDNet, a TDNetEnsemble or an InferenceNet. A torch net is read again when its
    parameters change in place (a trainer's step), so the evaluator never plays stale
    weights. With `bearoff` (the default), bear-off races that engine.bearoff answers
    exactly get the database's value instead of the network's estimate.
    """

    def __init__(self, net, name: str = "network", bearoff: bool = True) -> None:
        self.net = net
        self.name = name
        self.bearoff = bearoff
        self._version: tuple[int, ...] | None = None
        self._inference = net if isinstance(net, InferenceNet) else None
        # Walking a torch module's parameters costs more than a small search's arithmetic: once.
        self._parameters = [] if self._inference is not None else list(net.parameters())

    @property
    def inference_net(self) -> InferenceNet:
        if isinstance(self.net, InferenceNet):
            return self.net
        version = tuple(p._version for p in self._parameters)
        if self._inference is None or version != self._version:
            self._inference, self._version = InferenceNet.from_torch(self.net), version
        return self._inference

    accepts_parents = True

    def evaluate(self, afterstates: np.ndarray, parents: Parents | None = None) -> np.ndarray:
        if len(afterstates) == 0:
            return np.zeros((0, N_OUTPUTS))
        probs = rule_out_gammons(afterstates, sanity_clamp(self.inference_net.forward(afterstates, parents)))
        return bearoff.apply(afterstates, probs) if self.bearoff else probs


def file_digest(path: Path) -> str:
    """The first 16 hex digits of the file's SHA-256."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def inference_cache_path(checkpoint: Path) -> Path:
    """Where the torch-free copy of `checkpoint` is kept: named for the checkpoint's SHA-256."""
    return cache_root() / "nets" / f"{file_digest(checkpoint)}-v{INFERENCE_VERSION}.npz"


def load_inference_net(checkpoint: Path) -> InferenceNet:
    """The checkpoint's play net, torch-free when a copy of this exact file is cached;
    otherwise read with torch (CheckpointError if corrupt) and cached for the next time."""
    cached = inference_cache_path(checkpoint)
    net = InferenceNet.load(cached)
    if net is not None:
        try:
            os.utime(cached)  # its last use, by which prune_unused keeps it
        except OSError:
            pass
        return net
    from models.checkpoint import load_play_net  # torch: only the first time a file is played

    net = InferenceNet.from_torch(load_play_net(checkpoint))
    try:
        net.save(cached)
    except OSError:
        pass  # a read-only cache only costs torch next time
    # Training plays every checkpoint it saves: copies of old ones go after a while.
    prune_unused(cached.parent.iterdir(), keep=KEPT_NETS)
    return net
