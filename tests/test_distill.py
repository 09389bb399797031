"""Search distillation (training.distill, scripts/lab/distill.py): the right targets, a fit that
learns, positions files that resume exactly, and one-line errors for bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from engine.bearoff import exact_race
from engine.dice import ALL_ROLLS
from engine.encoder import encode
from engine.evaluator import equity, flip
from engine.position import game_results, race_flags
from engine.search import best_play, evaluate_afterstates, rank_plays
from models.checkpoint import Checkpoint, load_checkpoint, save_checkpoint
from models.inference import NetworkEvaluator
from scripts.lab.distill import identify, main as distill_main
from training.config import TrainConfig
from training.distill import (CUBE_WINDOW_SHARE, DISPUTE, NEAR_MISS_WINDOW, THREE_PLY_TEACHER_FILTER, TRIM, disputed,
                              fit, holds_back_game, in_cube_window, near_misses, record_positions, search_targets)
from training.selfplay import initial_net, seed_state
from training.trainer import Trainer


@pytest.fixture(scope="module")
def student(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("student") / "s.pt"
    save_checkpoint(path, Checkpoint(initial_net(8, 5, features=True), {"hidden": 8, "features": True}, 100))
    return path


@pytest.mark.slow
def test_positions_are_live_afterstates_and_repeat_with_the_seed() -> None:
    net = initial_net(8, 5, features=True)
    boards = record_positions(net, 10, seed_state(2, 0))
    again = record_positions(net, 10, seed_state(2, 0))
    assert len(boards) > 100
    np.testing.assert_array_equal(boards, again)
    assert (game_results(boards) == 0).all()
    assert not any(exact_race(b) for b in boards)
    assert (boards.sum(axis=(1, 2)) <= 30).all() and (boards >= 0).all()


def test_targets_are_the_opponents_roll_mean_of_its_best_reply_flipped() -> None:
    """Checked against the search's public best_play, one roll at a time."""
    evaluator = NetworkEvaluator(initial_net(8, 6, features=True))
    boards = record_positions(initial_net(8, 5, features=True), 2, seed_state(3, 0))[::17][:4]
    got = search_targets(boards, evaluator)
    for board, target in zip(boards, got):
        on_roll = np.ascontiguousarray(board[::-1])
        mean = np.zeros(5)
        for d1, d2, weight in ALL_ROLLS:
            play = best_play(on_roll, (d1, d2), evaluator)
            # No legal play: the roller's unchanged board is its afterstate (engine.search).
            after = play.probs if play else evaluate_afterstates(evaluator, on_roll[None])[0]
            mean += weight / 36 * after
        np.testing.assert_allclose(target, flip(mean), atol=1e-5)


def test_one_ply_targets_are_the_teachers_own_values_that_its_one_ply_play_ranks() -> None:
    """Compression: the student copies the values the teacher's 1-ply player chooses by."""
    evaluator = NetworkEvaluator(initial_net(8, 6, features=True))
    boards = record_positions(initial_net(8, 5, features=True), 2, seed_state(5, 0))[::7][:30]
    got = search_targets(boards, evaluator, ply=1)
    assert got.dtype == np.float32 and got.shape == (len(boards), 5)
    np.testing.assert_allclose(got, evaluate_afterstates(evaluator, boards), atol=1e-6)
    assert not np.allclose(got, search_targets(boards, evaluator, ply=2), atol=1e-3)


def test_three_ply_targets_are_the_opponents_roll_mean_of_its_best_two_ply_reply() -> None:
    """Checked against rank_plays at 2-ply with the teacher's filter, one roll at a time."""
    evaluator = NetworkEvaluator(initial_net(8, 6, features=True))
    boards = record_positions(initial_net(8, 5, features=True), 1, seed_state(4, 0))[::23][:2]
    got = search_targets(boards, evaluator, ply=3)
    assert not np.allclose(got, search_targets(boards, evaluator, ply=2), atol=1e-4)
    for board, target in zip(boards, got):
        on_roll = np.ascontiguousarray(board[::-1])
        mean = np.zeros(5)
        for d1, d2, weight in ALL_ROLLS:
            plays = rank_plays(on_roll, (d1, d2), evaluator, 2, THREE_PLY_TEACHER_FILTER)
            # No legal play: the roller's unchanged board is its afterstate, valued at 2-ply.
            after = plays[0].probs if plays else search_targets(on_roll[None], evaluator)[0]
            mean += weight / 36 * after
        np.testing.assert_allclose(target, flip(mean), atol=1e-5)
    with pytest.raises(ValueError):
        search_targets(boards, evaluator, ply=4)


def test_near_misses_are_the_runners_up_of_a_fresh_roll_within_the_window() -> None:
    """Checked against the search's public rank_plays, position by position, same dice."""
    student = NetworkEvaluator(initial_net(8, 5, features=True))
    boards = record_positions(initial_net(8, 5, features=True), 3, seed_state(6, 0))
    got = near_misses(boards, student, 2, np.random.default_rng(4))
    dice = np.random.default_rng(4).integers(1, 7, size=(len(boards), 2))
    expected = []
    for board, (d1, d2) in zip(boards, dice):
        plays = rank_plays(np.ascontiguousarray(board[::-1]), (int(d1), int(d2)), student)
        expected += [p.afterstate for p in plays[1:3] if p.equity >= plays[0].equity - NEAR_MISS_WINDOW
                     and game_results(p.afterstate[None])[0] == 0 and not exact_race(p.afterstate)]
    assert len(expected) > len(boards) // 2
    np.testing.assert_array_equal(got, np.array(expected))


def test_fit_moves_the_net_toward_another_nets_outputs() -> None:
    boards = record_positions(initial_net(8, 5, features=True), 20, seed_state(4, 0))
    teacher = initial_net(16, 9, features=True)
    with torch.no_grad():
        targets = teacher(torch.from_numpy(encode(boards, True))).numpy()
    result = fit(initial_net(8, 5, features=True), boards, targets, epochs=3, lr=1e-2)
    assert len(result.val_mse) == 4 and result.held_out + result.positions == len(boards)
    assert result.val_mse[-1] < 0.5 * result.val_mse[0]


def test_fit_validated_on_other_games_trains_on_every_position() -> None:
    boards = record_positions(initial_net(8, 5, features=True), 20, seed_state(4, 0))
    other = record_positions(initial_net(8, 5, features=True), 5, seed_state(5, 0))
    teacher = initial_net(16, 9, features=True)
    with torch.no_grad():
        targets, other_targets = (teacher(torch.from_numpy(encode(b, True))).numpy() for b in (boards, other))
    net = initial_net(8, 5, features=True)
    result = fit(net, boards, targets, epochs=3, lr=1e-2, validation=(other, other_targets))
    assert result.positions == len(boards) and result.held_out == len(other)
    with torch.no_grad():
        final = float(((net(torch.from_numpy(encode(other, True))) - torch.from_numpy(other_targets)) ** 2).mean())
    assert result.val_mse[-1] == pytest.approx(final, rel=1e-5)
    assert result.val_mse[-1] < 0.5 * result.val_mse[0]


def test_trimmed_error_leaves_out_the_worst_fitted_positions() -> None:
    """One held-out target off by a whole point moves the mean, not the trimmed figure."""
    boards = record_positions(initial_net(8, 5, features=True), 20, seed_state(4, 0))
    other = record_positions(initial_net(8, 5, features=True), 25, seed_state(5, 0))
    assert len(other) >= 1 / TRIM
    teacher = initial_net(16, 9, features=True)
    with torch.no_grad():
        targets, other_targets = (teacher(torch.from_numpy(encode(b, True))).numpy() for b in (boards, other))
    spoiled = other_targets.copy()
    spoiled[0] = np.where(spoiled[0] > 0.5, 0.0, 1.0)
    clean = fit(initial_net(8, 5, features=True), boards, targets, epochs=1, lr=1e-2,
                validation=(other, other_targets))
    outlier = fit(initial_net(8, 5, features=True), boards, targets, epochs=1, lr=1e-2,
                  validation=(other, spoiled))
    assert all(t <= m for t, m in zip(clean.val_trimmed, clean.val_mse))
    assert outlier.val_mse[-1] > clean.val_mse[-1] * 1.2
    assert outlier.val_trimmed[-1] == pytest.approx(clean.val_trimmed[-1], rel=0.01)


def test_fit_step_size_falls_linearly_to_lr_end() -> None:
    boards = record_positions(initial_net(8, 5, features=True), 10, seed_state(4, 0))
    targets = np.full((len(boards), 5), 0.25, dtype=np.float32)
    fitted = []
    for lr_end in (None, 1e-2, 0.0):
        net = initial_net(8, 5, features=True)
        fit(net, boards, targets, epochs=2, lr=1e-2, lr_end=lr_end)
        fitted.append(net.hidden.weight.detach().clone())
    assert torch.equal(fitted[0], fitted[1])  # lr_end = lr is the constant step
    assert not torch.equal(fitted[0], fitted[2])


def test_fit_command_records_lr_end_and_the_validation_file(student: Path, tmp_path: Path) -> None:
    data, out = tmp_path / "d.npz", tmp_path / "f.pt"
    assert distill_main(["positions", str(student), "--teacher", str(student), "--games", "2",
                         "--out", str(data)]) == 0
    assert distill_main(["fit", str(student), str(data), "--epochs", "1", "--lr-end", "0", "--out", str(out)]) == 0
    assert load_checkpoint(out).trainer_state["distilled"][0]["lr_end"] == 0.0
    other = tmp_path / "other.npz"
    assert distill_main(["positions", str(student), "--teacher", str(student), "--games", "1", "--seed", "3",
                         "--out", str(other)]) == 0
    assert distill_main(["fit", str(student), str(data), "--epochs", "1", "--validate", str(other),
                         "--out", str(out)]) == 0
    record = load_checkpoint(out).trainer_state["distilled"][0]
    assert record["validate"] == other.name and "lr_end" not in record


@pytest.mark.slow
def test_positions_with_rollout_targets(student: Path, tmp_path: Path) -> None:
    """`--teacher-rollout` values the positions by rollouts, records it, and refuses to resume with search."""
    data = tmp_path / "r.npz"
    assert distill_main(["positions", str(student), "--teacher", str(student), "--games", "1",
                         "--teacher-rollout", "2", "--out", str(data)]) == 0
    with np.load(data) as z:
        assert int(z["teacher_rollout"]) == 2 and len(z["targets"]) == len(z["boards"]) > 0
        targets = z["targets"]
    assert ((targets >= 0) & (targets <= 1)).all()  # clamped: few trials with the luck subtracted can leave [0, 1]
    assert (targets[:, 1] <= targets[:, 0]).all() and (targets[:, 3] <= 1 - targets[:, 0] + 1e-6).all()
    assert distill_main(["positions", str(student), "--teacher", str(student), "--games", "2",
                         "--out", str(data)]) == 2
    fitted = tmp_path / "f.pt"
    assert distill_main(["fit", str(student), str(data), "--epochs", "1", "--out", str(fitted)]) == 0
    assert load_checkpoint(fitted).trainer_state["distilled"][-1]["teacher_rollouts"] == [2]


def _board(mine: dict[int, int], theirs: dict[int, int]) -> np.ndarray:
    """A board from {index: checkers} per row (index 24 the bar); the rest borne off."""
    board = np.zeros((2, 25), dtype=np.int8)
    for row, points in enumerate((mine, theirs)):
        for index, n in points.items():
            board[row, index] = n
    return board


def test_back_games_are_two_points_in_the_opponents_home_and_30_pips_behind() -> None:
    """holds_back_game marks a side holding two points in its opponent's home board (its indices
    18-23) that trails by 30 pips or more, whichever row it is in; not a race, not one point,
    not a side ahead."""
    leader = {1: 3, 2: 3, 4: 3, 5: 3, 6: 3}  # 69 pips; its points 1 and 4 open
    back = {23: 2, 20: 2, 5: 3, 4: 3, 3: 3, 2: 2}  # 141 pips: its 24 and 21 points held
    one_point = {23: 2, 5: 4, 4: 3, 3: 3, 2: 3}
    ahead = {23: 2, 20: 2, 0: 11}  # 101 pips against 266
    boards = np.stack([_board(back, leader), _board(leader, back), _board(one_point, leader),
                       _board(ahead, {17: 11, 16: 4})])
    assert holds_back_game(boards).tolist() == [True, True, False, False]
    race = _board({5: 15}, {5: 15})
    assert not holds_back_game(race[None])[0]


def test_positions_can_keep_one_kind_alone(student: Path, tmp_path: Path) -> None:
    """`--only backgames` keeps the positions holds_back_game marks, records it, and a resume with
    another --only is refused in one line; `cubewindow` and `disputed` keep theirs."""
    data = tmp_path / "b.npz"
    args = ["positions", str(student), "--teacher", str(student), "--games", "40", "--teacher-ply", "1",
            "--out", str(data)]
    assert distill_main(args + ["--only", "backgames"]) == 0
    with np.load(data) as z:
        assert str(z["only"]) == "backgames" and len(z["boards"]) > 0
        assert holds_back_game(z["boards"]).all()
    assert distill_main(args[:5] + ["41"] + args[6:]) == 2
    window = tmp_path / "w.npz"
    assert distill_main(args[:-1] + [str(window), "--only", "cubewindow"]) == 0
    with np.load(window) as z:  # the untrained student sees few clear favourites: the mask is tested above
        assert str(z["only"]) == "cubewindow" and int(z["games"]) == 40
        assert not race_flags(z["boards"]).any()
    disputes = tmp_path / "d.npz"
    assert distill_main(args[:5] + ["4"] + args[6:-1] + [str(disputes), "--only", "disputed"]) == 0
    with np.load(disputes) as z:
        teacher = NetworkEvaluator(load_checkpoint(student).net)
        assert str(z["only"]) == "disputed" and 0 < len(z["boards"])
        assert disputed(z["boards"], teacher).all()


class _FixedWin:
    """An evaluator that gives the i-th board P(win) wins[i] (and no gammons)."""

    name = "fixed"

    def __init__(self, wins: list[float]) -> None:
        self.wins = wins

    def evaluate(self, afterstates: np.ndarray) -> np.ndarray:
        probs = np.zeros((len(afterstates), 5))
        probs[:, 0] = self.wins[:len(afterstates)]
        return probs


def test_cube_window_keeps_a_share_of_contact_positions_with_a_clear_favourite() -> None:
    """in_cube_window keeps contact positions whose favourite (either side) has P(win) 0.6-0.95,
    and about CUBE_WINDOW_SHARE of them; never a near-even, a decided or a race position."""
    contact = _board({23: 2, 20: 2, 5: 3, 4: 3, 3: 3, 2: 2}, {1: 3, 2: 3, 4: 3, 5: 3, 6: 3})
    race = _board({5: 15}, {5: 15})
    wins = [0.5, 0.7, 0.3, 0.97, 0.03, 0.8]
    boards = np.stack([contact] * 5 + [race])
    every = np.zeros(len(boards), dtype=bool)
    for seed in range(400):
        every |= in_cube_window(boards, _FixedWin(wins), np.random.default_rng(seed))
    assert every.tolist() == [False, True, True, False, False, False]
    kept = sum(in_cube_window(boards, _FixedWin(wins), np.random.default_rng(s))[1] for s in range(400))
    assert abs(kept / 400 - CUBE_WINDOW_SHARE) < 0.07


class _Even:
    """An evaluator that calls every position even: P(win) 0.5, no gammons."""

    name = "even"

    def evaluate(self, afterstates: np.ndarray) -> np.ndarray:
        return np.tile([0.5, 0.0, 0.0, 0.0, 0.0], (len(afterstates), 1))


def test_disputed_keeps_the_positions_whose_1_and_2_ply_values_differ(student: Path) -> None:
    """disputed marks exactly the afterstates whose teacher's 1-ply and 2-ply equities lie DISPUTE
    or more apart, and `--only disputed` keeps those alone."""
    teacher = NetworkEvaluator(load_checkpoint(student).net)
    boards = record_positions(load_checkpoint(student).net, 4, seed_state(3, 0))
    gap = np.abs(equity(search_targets(boards, teacher, 1)) - equity(search_targets(boards, teacher, 2)))
    mask = disputed(boards, teacher)
    np.testing.assert_array_equal(mask, gap >= DISPUTE)
    assert mask.any()  # an untrained net's search disagrees with it
    contact = boards[~race_flags(boards)]  # no reply ends the game or reaches an exact table
    assert len(contact) and not disputed(contact, _Even()).any()  # the same value at every depth
    assert disputed(boards[:0], teacher).shape == (0,)


@pytest.mark.slow
def test_positions_resume_exactly_and_fit_keeps_a_record(student: Path, tmp_path: Path) -> None:
    whole, parts = tmp_path / "whole.npz", tmp_path / "parts.npz"
    common = [str(student), "--teacher", str(student), "--seed", "7"]
    assert distill_main(["positions", *common, "--games", "6", "--out", str(whole)]) == 0
    assert distill_main(["positions", *common, "--games", "2", "--chunk", "2", "--out", str(parts)]) == 0
    assert distill_main(["positions", *common, "--games", "6", "--chunk", "3", "--out", str(parts)]) == 0
    with np.load(whole) as a, np.load(parts) as b:
        np.testing.assert_array_equal(a["boards"], b["boards"])
        np.testing.assert_allclose(a["targets"], b["targets"], atol=1e-6)
        assert int(b["games"]) == 6
    out = tmp_path / "fitted.pt"
    assert distill_main(["fit", str(student), str(whole), "--epochs", "1", "--out", str(out)]) == 0
    fitted = load_checkpoint(out)
    (record,) = fitted.trainer_state["distilled"]
    assert record["epochs"] == 1 and len(record["val_mse"]) == 2 and record["near_misses"] == [0]
    assert record["teachers"] == [identify(student)] and identify(student).startswith(f"{student.name} (sha256 ")
    assert not torch.equal(fitted.net.hidden.weight, load_checkpoint(student).net.hidden.weight)
    # Training on keeps the record.
    config = TrainConfig(seed=1, hidden=8, games=110, workers=1, chunk_games=10, checkpoint_every=10,
                         eval_every=0, eval_games=0, lr_decay_games=0, features=True)
    Trainer(config, tmp_path / "on", resume=out, progress=False).run()
    assert load_checkpoint(tmp_path / "on" / "checkpoint.pt").trainer_state["distilled"] == [record]


@pytest.mark.slow
def test_positions_with_near_misses_resume_exactly(student: Path, tmp_path: Path) -> None:
    """The same command, stopped after its first chunk and run again, gives the same file."""
    whole, parts, plain = tmp_path / "whole.npz", tmp_path / "parts.npz", tmp_path / "plain.npz"
    common = [str(student), "--teacher", str(student), "--seed", "8"]
    assert distill_main(["positions", *common, "--games", "4", "--chunk", "2", "--near-misses", "2",
                         "--out", str(whole)]) == 0
    for games in ("2", "4"):
        assert distill_main(["positions", *common, "--games", games, "--chunk", "2", "--near-misses", "2",
                             "--out", str(parts)]) == 0
    assert distill_main(["positions", *common, "--games", "4", "--out", str(plain)]) == 0
    with np.load(whole) as a, np.load(parts) as b, np.load(plain) as c:
        np.testing.assert_array_equal(a["boards"], b["boards"])
        np.testing.assert_allclose(a["targets"], b["targets"], atol=1e-6)
        assert int(a["near_misses"]) == 2 and int(c["near_misses"]) == 0
        assert len(a["boards"]) > 1.5 * len(c["boards"])
    out = tmp_path / "fitted.pt"
    assert distill_main(["fit", str(student), str(whole), str(plain), "--epochs", "0", "--out", str(out)]) == 0
    assert load_checkpoint(out).trainer_state["distilled"][0]["near_misses"] == [0, 2]


def test_slices_make_up_the_job_and_the_newest_resumes_it(student: Path, tmp_path: Path) -> None:
    """Slices cut from a growing job add up to it, and the newest alone carries the job on."""
    job, first, second, resumed, whole = (tmp_path / f"{name}.npz" for name in ("job", "s1", "s2", "re", "whole"))
    common = [str(student), "--teacher", str(student), "--seed", "5", "--chunk", "2"]
    assert distill_main(["positions", *common, "--games", "2", "--out", str(job)]) == 0
    assert distill_main(["slice", str(job), "--out", str(first)]) == 0
    assert distill_main(["positions", *common, "--games", "4", "--out", str(job)]) == 0
    assert distill_main(["slice", str(job), "--after", str(first), "--out", str(second)]) == 0
    resumed.write_bytes(second.read_bytes())
    assert distill_main(["positions", *common, "--games", "6", "--out", str(resumed)]) == 0
    assert distill_main(["positions", *common, "--games", "6", "--out", str(whole)]) == 0
    with np.load(first) as a, np.load(second) as b, np.load(resumed) as c, np.load(whole) as w:
        assert int(a["games"]) == 2 and int(b["games"]) == 4 and int(c["games"]) == 6
        parts = [a["boards"], b["boards"], c["boards"][len(b["boards"]):]]
        assert all(len(part) for part in parts)
        np.testing.assert_array_equal(np.concatenate(parts), w["boards"])
        np.testing.assert_allclose(np.concatenate([a["targets"], c["targets"]]), w["targets"], atol=1e-6)


def test_split_holds_out_each_files_latest_games(student: Path, tmp_path: Path) -> None:
    """Each file keeps its first rows as STEM-train.npz, a valid data file; the last share of every
    file, in order, makes the validation file, and fit takes both."""
    files = [tmp_path / f"p{seed}.npz" for seed in (1, 2)]
    for path, seed in zip(files, ("1", "2")):
        assert distill_main(["positions", str(student), "--teacher", str(student), "--games", "3", "--seed", seed,
                             "--out", str(path)]) == 0
    val = tmp_path / "val.npz"
    assert distill_main(["split", *map(str, files), "--share", "0.25", "--out", str(val)]) == 0
    tails = []
    for path in files:
        with np.load(path) as whole, np.load(path.with_name(path.stem + "-train.npz")) as head:
            cut = int(len(whole["boards"]) * 0.75)
            np.testing.assert_array_equal(head["boards"], whole["boards"][:cut])
            assert str(head["teacher"]) == str(whole["teacher"])
            tails.append(whole["boards"][cut:])
    with np.load(val) as held:
        np.testing.assert_array_equal(held["boards"], np.concatenate(tails))
    out = tmp_path / "fitted.pt"
    assert distill_main(["fit", str(student), *(str(p.with_name(p.stem + "-train.npz")) for p in files),
                         "--epochs", "1", "--validate", str(val), "--out", str(out)]) == 0
    assert load_checkpoint(out).trainer_state["distilled"][0]["validate"] == "val.npz"


def test_bad_input_is_one_line_and_exit_2(student: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture) -> None:
    data = tmp_path / "d.npz"
    other = tmp_path / "o.npz"
    for path, seed in ((data, "1"), (other, "2")):
        assert distill_main(["positions", str(student), "--teacher", str(student), "--games", "2", "--seed", seed,
                             "--out", str(path)]) == 0
    capsys.readouterr()
    cases = [
        ["positions", str(student), "--teacher", str(student), "--games", "4", "--seed", "9",
         "--out", str(data)],
        ["positions", str(student), "--teacher", str(tmp_path / "none.pt"), "--games", "2",
         "--out", str(tmp_path / "e.npz")],
        ["positions", str(student), "--teacher", str(student), "--games", "4", "--teacher-ply", "3",
         "--out", str(data)],
        ["positions", str(student), "--games", "0", "--out", str(tmp_path / "e.npz")],
        ["positions", str(student), "--teacher", str(student), "--games", "4", "--near-misses", "1",
         "--out", str(data)],
        ["positions", str(student), "--games", "2", "--near-misses", "-1", "--out", str(tmp_path / "e.npz")],
        ["fit", str(student), str(tmp_path / "none.npz"), "--out", str(tmp_path / "x.pt")],
        ["fit", str(student), str(student), "--out", str(tmp_path / "x.pt")],
        ["fit", str(data), str(data), "--out", str(tmp_path / "x.pt")],
        ["fit", str(student), str(data), "--lr-end", "-1", "--out", str(tmp_path / "x.pt")],
        ["fit", str(student), str(data), "--validate", str(data), "--out", str(tmp_path / "x.pt")],
        ["fit", str(student), str(data), "--validate", str(tmp_path / "none.npz"), "--out", str(tmp_path / "x.pt")],
        ["slice", str(data), "--after", str(data), "--out", str(tmp_path / "s.npz")],
        ["slice", str(data), "--after", str(other), "--out", str(tmp_path / "s.npz")],
        ["slice", str(data), "--out", str(data)],
        ["split", str(data), "--share", "1.5", "--out", str(tmp_path / "v.npz")],
        ["split", str(data), "--out", str(data)],
        ["split", str(tmp_path / "none.npz"), "--out", str(tmp_path / "v.npz")],
    ]
    for argv in cases:
        assert distill_main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("distill: ") and err.count("\n") == 1, err
