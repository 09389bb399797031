"""The value network, its evaluator and checkpoints (round trip, atomic writes, refusal of bad files)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.encoder import ENCODER_VERSION, encode
from engine.errors import CheckpointError
from engine.features import FEATURE_COUNTS, FEATURES_VERSION, N_FEATURES
from engine.position import Position
from models.checkpoint import FORMAT, FORMAT_VERSION, Checkpoint, load_checkpoint, save_checkpoint
from models.loader import load_evaluator
from models.inference import NetworkEvaluator
from models.network import TDNet


def _boards() -> np.ndarray:
    start = Position.start()
    return np.stack([start.board, start.swap().board, Position.from_id("4PPgASTgc/ABMA").board])


def _net(seed: int = 0, hidden: int = 16) -> TDNet:
    torch.manual_seed(seed)
    return TDNet(hidden)


def test_output_shape_and_range():
    probs = NetworkEvaluator(_net()).evaluate(_boards())
    assert probs.shape == (3, 5)
    assert np.all((probs >= 0) & (probs <= 1))
    assert NetworkEvaluator(_net()).evaluate(np.zeros((0, 2, 25), dtype=np.int8)).shape == (0, 5)


def _oracle_afterstates() -> np.ndarray:
    from scripts.bench.eval import oracle_afterstates

    return oracle_afterstates()


@pytest.mark.parametrize("source", ["default", "tesauro", "random"])
def test_the_fast_path_agrees_with_torch_on_every_oracle_afterstate(source):
    """models.inference plays what the torch modules (the training truth) compute, to 1e-5,
    on the 83,208 afterstates of the gnubg oracle: the shipped ensemble, the 198-input net,
    and a fresh net."""
    from models.checkpoint import load_play_net
    from models.inference import InferenceNet
    from models.paths import DEFAULT_MODEL, TESAURO_MODEL

    net = {"default": lambda: load_play_net(DEFAULT_MODEL), "tesauro": lambda: load_play_net(TESAURO_MODEL),
           "random": lambda: _net(3, 40)}[source]()
    boards = _oracle_afterstates()
    with torch.inference_mode():
        truth = np.concatenate([net(torch.from_numpy(encode(boards[i:i + 4096], net.features))).numpy()
                                for i in range(0, len(boards), 4096)])
    np.testing.assert_allclose(InferenceNet.from_torch(net).forward(boards), truth, rtol=0, atol=1e-5)


def test_the_order_and_slicing_of_a_batch_do_not_matter():
    """A board's value does not depend on its batch: any order or slicing gives the same bits
    (so caches, resumed runs and worker counts cannot change a result)."""
    from models.inference import InferenceNet

    net = InferenceNet.from_torch(_net(1, 24))
    boards = _oracle_afterstates()[:3000]
    whole = net.forward(boards)
    order = np.random.default_rng(0).permutation(len(boards))
    np.testing.assert_array_equal(net.forward(boards[order]), whole[order])
    sliced = np.concatenate([net.forward(boards[i:i + 7]) for i in range(0, len(boards), 7)])
    np.testing.assert_array_equal(sliced, whole)


def _oracle_families() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(parents, index, afterstates): every oracle afterstate and the position it was played from."""
    from scripts.bench.eval import oracle_parents

    parents, index = oracle_parents()
    return parents, index, _oracle_afterstates()


@pytest.mark.parametrize("source", ["default", "random"])
def test_boards_valued_from_their_parents_agree_with_torch(source):
    """The first layer summed as the parent's plus the inputs that differ plays the same net:
    within 1e-5 of torch and 1e-6 of the from-scratch sum on every oracle afterstate."""
    from models.checkpoint import load_play_net
    from models.inference import InferenceNet
    from models.paths import DEFAULT_MODEL
    from engine.evaluator import Parents

    net = load_play_net(DEFAULT_MODEL) if source == "default" else _net(3, 40)
    parents, index, boards = _oracle_families()
    with torch.inference_mode():
        truth = np.concatenate([net(torch.from_numpy(encode(boards[i:i + 4096], net.features))).numpy()
                                for i in range(0, len(boards), 4096)])
    fast = InferenceNet.from_torch(net)
    from_parents = fast.forward(boards, Parents(parents, index))
    np.testing.assert_allclose(from_parents, truth, rtol=0, atol=1e-5)
    np.testing.assert_allclose(from_parents, fast.forward(boards), rtol=0, atol=1e-6)


def test_a_board_valued_from_its_parent_does_not_depend_on_its_batch():
    """With parents too, a board's bits are its own (and its parent's): any order or slicing
    of the batch, and parents listed in another order, give the same values."""
    from models.inference import InferenceNet
    from engine.evaluator import Parents

    net = InferenceNet.from_torch(_net(1, 24))
    parents, index, boards = _oracle_families()
    boards, index = boards[:3000], index[:3000]
    whole = net.forward(boards, Parents(parents, index))
    order = np.random.default_rng(0).permutation(len(boards))
    np.testing.assert_array_equal(net.forward(boards[order], Parents(parents, index[order])), whole[order])
    reversed_parents = Parents(parents[::-1], len(parents) - 1 - index)
    np.testing.assert_array_equal(net.forward(boards, reversed_parents), whole)
    sliced = np.concatenate([net.forward(boards[i:i + 7], Parents(parents, index[i:i + 7]))
                             for i in range(0, len(boards), 7)])
    np.testing.assert_array_equal(sliced, whole)


def test_a_trained_step_is_seen_by_the_evaluator():
    """A torch net changed in place (an optimiser step) is read again, never played stale."""
    net = _net()
    evaluator = NetworkEvaluator(net, bearoff=False)
    before = evaluator.evaluate(_boards())
    with torch.no_grad():
        net.out.bias.add_(1.0)
    after = evaluator.evaluate(_boards())
    assert not np.allclose(before, after)


def test_the_torch_free_copy_is_cached_verified_and_refused_when_damaged(tmp_path, monkeypatch):
    from models.inference import inference_cache_path, load_inference_net

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = tmp_path / "net.pt"
    save_checkpoint(path, Checkpoint(net=_net(2), config={"hidden": 16}, games_trained=0))
    first = load_inference_net(path)
    cached = inference_cache_path(path)
    assert cached.exists() and cached.is_relative_to(tmp_path)
    np.testing.assert_array_equal(load_inference_net(path).w1, first.w1)
    raw = bytearray(cached.read_bytes())
    raw[len(raw) // 2] ^= 0x40  # a flipped bit inside the weights
    cached.write_bytes(bytes(raw))
    np.testing.assert_array_equal(load_inference_net(path).w1, first.w1)  # refused, rebuilt from the checkpoint


def test_copies_unused_for_a_week_are_pruned_and_a_used_one_is_kept(tmp_path, monkeypatch):
    import os

    from models.inference import KEPT_NETS, inference_cache_path, load_inference_net

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = tmp_path / "net.pt"
    save_checkpoint(path, Checkpoint(net=_net(2), config={"hidden": 16}, games_trained=0))
    load_inference_net(path)
    used = inference_cache_path(path)
    os.utime(used, (1e9, 1e9))
    load_inference_net(path)  # a use: its mtime is now
    old = [used.with_name(f"old{i}.npz") for i in range(KEPT_NETS + 3)]
    for age, stale in enumerate(old):
        stale.write_bytes(b"")
        os.utime(stale, (1e9 - age, 1e9 - age))
    save_checkpoint(path, Checkpoint(net=_net(3), config={"hidden": 16}, games_trained=0))
    load_inference_net(path)  # a new copy: the oldest idle ones go
    kept = {p.name for p in used.parent.iterdir()}
    assert kept == {used.name, inference_cache_path(path).name} | {p.name for p in old[:KEPT_NETS]}


def test_sanity_clamp_applied():
    net = _net()
    with torch.no_grad():
        # Biases that make the raw gammon and backgammon outputs exceed their parents.
        net.out.bias.copy_(torch.tensor([-4.0, 4.0, 6.0, 4.0, 6.0]))
    raw = net(torch.from_numpy(np.stack([np.zeros(198, np.float32)]))).detach().numpy()[0]
    assert raw[1] > raw[0] and raw[4] > raw[3]  # the clamp has work to do
    p = NetworkEvaluator(net).evaluate(_boards())
    assert np.all(p[:, 1] <= p[:, 0]) and np.all(p[:, 2] <= p[:, 1])
    assert np.all(p[:, 3] <= 1 - p[:, 0] + 1e-12) and np.all(p[:, 4] <= p[:, 3])


def test_gammons_the_rules_rule_out_are_zero():
    """A side that has borne off cannot lose a gammon, however sure the net is of one."""
    net = _net()
    with torch.no_grad():
        net.out.bias.copy_(torch.tensor([0.0, 6.0, 6.0, 6.0, 6.0]))
    boards = np.zeros((2, 2, 25), dtype=np.int8)
    boards[:, :, 5] = 14  # contact: each side has a checker back on the bar
    boards[:, :, 24] = 1
    boards[1, 0, 5] = 13  # in board 1 the mover has borne off one
    p = NetworkEvaluator(net, bearoff=False).evaluate(boards)
    assert np.all(p[0, 1:] > 0.4)
    assert p[1, 3] == 0 and p[1, 4] == 0 and p[1, 1] > 0.4


def test_checkpoint_round_trip(tmp_path):
    net = _net(seed=3, hidden=24)
    path = tmp_path / "m.pt"
    save_checkpoint(path, Checkpoint(net=net, config={"lr": 0.1}, games_trained=1234))
    ckpt = load_checkpoint(path)
    assert ckpt.net.n_hidden == 24 and ckpt.games_trained == 1234 and ckpt.config == {"lr": 0.1}
    np.testing.assert_array_equal(NetworkEvaluator(ckpt.net).evaluate(_boards()),
                                  NetworkEvaluator(net).evaluate(_boards()))
    np.testing.assert_array_equal(load_evaluator(str(path)).evaluate(_boards()),
                                  NetworkEvaluator(net).evaluate(_boards()))


def test_feature_net_checkpoint_round_trip(tmp_path):
    torch.manual_seed(5)
    net = TDNet(12, features=True)
    path = tmp_path / "f.pt"
    save_checkpoint(path, Checkpoint(net=net))
    ckpt = load_checkpoint(path)
    assert ckpt.net.features and ckpt.net.hidden.in_features == 198 + N_FEATURES
    np.testing.assert_array_equal(NetworkEvaluator(ckpt.net).evaluate(_boards()),
                                  NetworkEvaluator(net).evaluate(_boards()))


def test_mismatched_features_version(tmp_path):
    path = tmp_path / "f.pt"
    payload = _payload(state_dict=TDNet(16, features=True).state_dict(),
                       architecture={"kind": "TDNet", "hidden": 16, "features": FEATURES_VERSION + 1})
    torch.save(payload, path)
    with pytest.raises(CheckpointError, match="features version"):
        load_checkpoint(path)


def test_older_features_version_loads_and_plays_as_before(tmp_path):
    # A version-1 net read 198 + 18 inputs; today's encoding appends values after those.
    torch.manual_seed(6)
    old_inputs = 198 + FEATURE_COUNTS[1]
    old = torch.nn.Linear(old_inputs, 16)
    state = TDNet(16, features=True).state_dict()
    state["hidden.weight"], state["hidden.bias"] = old.weight.detach(), old.bias.detach()
    path = tmp_path / "v1.pt"
    torch.save(_payload(state_dict=state,
                        architecture={"kind": "TDNet", "hidden": 16, "features": 1}), path)
    net = load_checkpoint(path).net
    assert net.hidden.in_features == 198 + N_FEATURES > old_inputs
    x = torch.from_numpy(encode(_boards(), features=True))
    with torch.no_grad():
        expected = torch.sigmoid(net.out(torch.sigmoid(old(x[:, :old_inputs]))))
        torch.testing.assert_close(net(x), expected, rtol=0, atol=1e-6)


def test_atomic_write_leaves_no_tmp_and_survives_a_failed_write(tmp_path, monkeypatch):
    path = tmp_path / "m.pt"
    save_checkpoint(path, Checkpoint(net=_net(1)))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.pt"]
    before = path.read_bytes()

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", crash)
    with pytest.raises(OSError):
        save_checkpoint(path, Checkpoint(net=_net(2)))
    assert path.read_bytes() == before  # the old checkpoint is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.pt"]  # no stray .tmp
    load_checkpoint(path)


def test_missing_checkpoint(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "nothing.pt")
    with pytest.raises(CheckpointError, match="does not exist"):
        load_evaluator(str(tmp_path / "nothing.pt"))


def test_corrupt_checkpoint(tmp_path):
    path = tmp_path / "bad.pt"
    path.write_bytes(b"this is not a checkpoint at all" * 10)
    with pytest.raises(CheckpointError):
        load_checkpoint(path)


def test_truncated_checkpoint(tmp_path):
    path = tmp_path / "m.pt"
    save_checkpoint(path, Checkpoint(net=_net()))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError):
        load_checkpoint(path)


def _payload(**changes) -> dict:
    payload = {"format": FORMAT, "format_version": FORMAT_VERSION, "encoder_version": ENCODER_VERSION,
               "architecture": {"kind": "TDNet", "hidden": 16}, "state_dict": _net().state_dict(),
               "config": {}, "games_trained": 0, "trainer_state": {}}
    payload.update(changes)
    return payload


def test_mismatched_encoder_version(tmp_path):
    path = tmp_path / "old.pt"
    torch.save(_payload(encoder_version=ENCODER_VERSION + 1), path)
    with pytest.raises(CheckpointError, match="encoder version"):
        load_checkpoint(path)


def test_weights_not_matching_architecture(tmp_path):
    path = tmp_path / "m.pt"
    torch.save(_payload(architecture={"kind": "TDNet", "hidden": 40}), path)
    with pytest.raises(CheckpointError):
        load_checkpoint(path)


def test_valid_payload_written_by_hand_loads(tmp_path):
    # The helper above is a real checkpoint unless something is changed: guards the two tests above.
    path = tmp_path / "m.pt"
    torch.save(_payload(), path)
    assert load_checkpoint(path).net.n_hidden == 16
