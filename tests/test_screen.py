"""Screening (engine.search.screened_values): a small net picks each roll's few plays that the
evaluator values; the evaluator's choice among them, races never screened, rollouts' plays
unscreened, the loader's pairing."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from engine.errors import CheckpointError
from engine.evaluator import equity
from engine.position import decode_position_id, is_race, race_flags
from engine.rollout.core import RolloutSettings, run_trials
from engine.search import ROLLS, SCREEN_KEEP, evaluate_afterstates, expand, roll_average, screened_values
from models.loader import load_network, screen_path
from scripts.lab import fit_screen
from tests.test_search import ToyEvaluator

TINY_NET = Path(__file__).resolve().parents[1] / "models" / "tesauro-198-80.pt"
CONTACT = ["4HPwATDgc/ABMA", "sNvBAQC2bRsBAA", "jGfkASjg8wcBAA"]
RACE = "4O7uAADg7u4AAA"  # both sides past each other, on their 6- to 10-points


class Screened(ToyEvaluator):
    """The toy evaluator with a screen that ranks plays differently from it."""

    def __init__(self, screen) -> None:
        super().__init__()
        self.screen = screen


class ShiftedToy(ToyEvaluator):
    """A screen that disagrees with the toy: it prefers checkers on high points."""

    def evaluate(self, afterstates: np.ndarray) -> np.ndarray:
        probs = super().evaluate(afterstates)
        a = np.asarray(afterstates, dtype=np.int64).reshape(-1, 2, 25)
        probs[:, 0] = np.clip(probs[:, 0] + 0.03 * (a[:, 0, 12:24].sum(axis=1)), 0, 1)
        return probs


def _plays(ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    boards = np.stack([decode_position_id(pid) for pid in ids])
    return expand(boards, np.broadcast_to(np.arange(len(ROLLS)), (len(boards), len(ROLLS))))


def test_screen_keeps_its_best_and_the_evaluator_values_them():
    after, group_start = _plays(CONTACT)
    screen = ShiftedToy()
    probs, eqs = screened_values(Screened(screen), after, group_start)
    screen_eqs = equity(screen.evaluate(after))
    full = evaluate_afterstates(ToyEvaluator(), after)
    race = race_flags(after)
    for a, b in zip(group_start[:-1], group_start[1:]):
        top = set(a + np.argsort(-screen_eqs[a:b], kind="stable")[:SCREEN_KEEP])
        kept = {i for i in range(a, b) if np.isfinite(eqs[i])}
        assert kept == top | {i for i in range(a, b) if race[i]}
    rows = np.isfinite(eqs)
    assert rows.sum() < len(after)  # something was screened out
    np.testing.assert_allclose(probs[rows], full[rows])
    np.testing.assert_allclose(eqs[rows], equity(full[rows]))


def test_a_screen_that_agrees_changes_no_choice():
    boards = np.stack([decode_position_id(pid) for pid in CONTACT])
    toy = ToyEvaluator()
    np.testing.assert_allclose(roll_average(boards, Screened(ToyEvaluator())), roll_average(boards, toy))


def test_races_are_never_screened():
    assert is_race(decode_position_id(RACE))
    after, group_start = _plays([RACE])
    _, eqs = screened_values(Screened(ShiftedToy()), after, group_start)
    assert np.isfinite(eqs).all()


def test_without_a_screen_every_play_is_valued():
    after, group_start = _plays(CONTACT)
    probs, eqs = screened_values(ToyEvaluator(), after, group_start)
    np.testing.assert_allclose(probs, evaluate_afterstates(ToyEvaluator(), after))


def test_loader_pairs_a_checkpoint_with_the_screen_beside_it(tmp_path):
    model = tmp_path / "net.pt"
    shutil.copy(TINY_NET, model)
    assert getattr(load_network(model, race_net=None), "screen", None) is None
    shutil.copy(TINY_NET, screen_path(model))
    assert screen_path(model).name == "net.screen.pt"
    assert load_network(model, race_net=None).screen is not None
    assert getattr(load_network(model, race_net=None, screen=False), "screen", None) is None
    screen_path(model).write_bytes(TINY_NET.read_bytes()[:1000])
    with pytest.raises(CheckpointError, match="net.screen.pt"):
        load_network(model, race_net=None)  # a damaged screen is refused, never played


def test_fit_screen_writes_a_screen(tmp_path, capsys):
    out = tmp_path / "tiny.screen.pt"
    assert fit_screen.main(["--model", str(TINY_NET), "--init", str(TINY_NET), "--games", "20",
                            "--positions", "100", "--held-out", "40", "--epochs", "1", "--out", str(out)]) == 0
    assert "keep 4:" in capsys.readouterr().out
    assert load_network(out, race_net=None).evaluate(_plays(CONTACT)[0][:3]).shape == (3, 5)


def test_fit_screen_refuses_bad_arguments(tmp_path, capsys):
    assert fit_screen.main(["--games", "0", "--out", str(tmp_path / "x.pt")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_a_screened_rollout_plays_the_unscreened_games():
    """The screen only values the 21 rolls' luck; each play made is the evaluator's own best,
    so the trials' outcomes are those without the screen (and with VR off)."""
    opening = decode_position_id("4HPwATDgc/ABMA")
    screened = run_trials(opening, Screened(ShiftedToy()), RolloutSettings(trials=36, seed=3), 0, 36)
    plain = run_trials(opening, ToyEvaluator(), RolloutSettings(trials=36, seed=3), 0, 36)
    off = run_trials(opening, ToyEvaluator(), RolloutSettings(trials=36, seed=3, variance_reduction=False), 0, 36)
    assert np.array_equal(screened.raw, plain.raw) and np.array_equal(screened.turns, off.turns)
    assert not np.array_equal(screened.luck, plain.luck)  # the luck is the screen's
