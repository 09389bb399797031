"""Rollouts: quasi-random dice, determinism, variance reduction, truncation, save/resume, CLI.

Default tests use pubeval or the small shipped tesauro-198-80 net and a few dozen trials;
the comparisons with gnubg's rollouts (tests/data/gnubg-rollouts.json) and the Ray fault
test are marked slow.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from engine.cube.equity import CubeInfo, money_cubeful
from engine.evaluator import equity
from engine.luck import roll_index, roll_luck, roll_outcomes, roll_values
from engine.position import Position, encode_position_id
from engine.pubeval import PubevalEvaluator
from engine.rollout import cubeful as cf
from engine.rollout.core import (QUASI_BLOCK, RolloutError, RolloutSettings, TrialData, check_position,
                                 run_trials, summarise, trial_dice)
from engine.rollout.backends import LocalBackend
from engine.rollout.runner import rollout_plays, rollout_position
from engine.search import ROLL_WEIGHTS, evaluate_position, roll_average

ROOT = Path(__file__).resolve().parents[1]
OPENING = Position.start()
SMALL_NET = ROOT / "models" / "tesauro-198-80.pt"
DATA = ROOT / "tests" / "data" / "gnubg-rollouts.json"


@pytest.fixture(scope="module")
def pubeval():
    return PubevalEvaluator()


@pytest.fixture(scope="module")
def small_net():
    from models.loader import load_evaluator

    return load_evaluator(str(SMALL_NET))


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scripts.cli", "rollout", *args], capture_output=True, text=True,
                          input=stdin, cwd=ROOT, timeout=600)


# ---------------------------------------------------------------------------------------
# Dice and luck


def test_first_rolls_stratified_and_pairs_rotated():
    firsts = np.array([trial_dice(3, i, 0, True)[:2] for i in range(QUASI_BLOCK)])
    for s in range(0, QUASI_BLOCK, 36):  # each first roll once in every 36 trials
        assert sorted(firsts[s:s + 36, 0]) == list(range(36))
    pairs = {tuple(p) for p in firsts}
    assert len(pairs) == QUASI_BLOCK  # every (first, second) pair once in 1,296
    assert not np.array_equal(trial_dice(3, 5, 0, True), trial_dice(4, 5, 0, True))
    # Later rolls depend on (seed, trial) only.
    assert np.array_equal(trial_dice(3, 5, 1, True), trial_dice(3, 5, 1, True))


def test_luck_api(pubeval):
    board = OPENING.board
    outcomes = roll_outcomes(board, pubeval, 1)
    assert np.allclose(outcomes.T @ ROLL_WEIGHTS, roll_average(board[None], pubeval)[0])
    values = roll_values(board, pubeval, 1)
    lucks = np.array([roll_luck(board, (int(a), int(b)), pubeval) for a, b in
                      [(6, 5), (3, 1), (2, 1), (6, 6), (1, 1)]])
    assert np.allclose(lucks, values[[roll_index(6, 5), roll_index(3, 1), roll_index(1, 2), roll_index(6, 6),
                                       roll_index(1, 1)]] - values @ ROLL_WEIGHTS)
    assert abs(sum(w * (v - values @ ROLL_WEIGHTS) for v, w in zip(values, ROLL_WEIGHTS))) < 1e-12


def test_vectorised_janowski_matches_engine_cube():
    rng = np.random.default_rng(0)
    n = 300
    p = np.zeros((n, 5))
    p[:, 0] = rng.random(n)
    p[:, 1] = p[:, 0] * rng.random(n) * 0.5
    p[:, 2] = p[:, 1] * 0.1
    p[:, 3] = (1 - p[:, 0]) * rng.random(n) * 0.5
    p[:, 4] = p[:, 3] * 0.2
    owner = rng.choice([cf.CENTRE, cf.ME_OWNS, cf.OPP_OWNS], n)
    x = rng.uniform(0.55, 0.75, n)
    names = {cf.CENTRE: "centre", cf.ME_OWNS: "me", cf.OPP_OWNS: "opponent"}
    ref = [money_cubeful(p[i], CubeInfo(owner=names[owner[i]]), x[i]) for i in range(n)]
    assert np.allclose(cf.money_cubeful(p, owner, x), ref)


# ---------------------------------------------------------------------------------------
# The core


def test_deterministic_for_a_seed(pubeval):
    s = RolloutSettings(trials=36, seed=5)
    a = run_trials(OPENING.board, pubeval, s, 0, 36)
    b = run_trials(OPENING.board, pubeval, s, 0, 36)
    assert np.array_equal(a.raw, b.raw) and np.array_equal(a.luck, b.luck)
    c = run_trials(OPENING.board, pubeval, RolloutSettings(trials=36, seed=6), 0, 36)
    assert not np.array_equal(a.raw, c.raw)


def test_batches_do_not_change_trials(pubeval):
    whole = run_trials(OPENING.board, pubeval, RolloutSettings(trials=72), 0, 72)
    parts = TrialData.concat([run_trials(OPENING.board, pubeval, RolloutSettings(trials=72), lo, lo + 24)
                              for lo in (48, 0, 24)])
    assert np.array_equal(whole.ids, parts.ids)
    assert np.allclose(whole.raw, parts.raw) and np.allclose(whole.luck, parts.luck)


def test_truncate_one_ply_with_vr_is_the_2ply_value(small_net):
    """One roll, then the evaluator: the luck-reduced estimate of every trial is the mean over the 21 rolls
    (to the fast path's 1e-6: its values depend on the batch around a board by float rounding)."""
    s = RolloutSettings(trials=36, truncate=1)
    data = run_trials(OPENING.board, small_net, s, 0, 36)
    assert (data.turns == 1).all()
    summary = summarise(data, s)
    assert summary.se_equity < 1e-6
    assert np.allclose(summary.probs, evaluate_position(OPENING.board, small_net, 2), atol=1e-6)


def test_truncation_stops_after_n_plies(pubeval):
    data = run_trials(OPENING.board, pubeval, RolloutSettings(trials=36, truncate=4), 0, 36)
    assert (data.turns <= 4).all() and (data.turns == 4).any()


def test_bearoff_race_ends_at_the_database(small_net):
    board = np.zeros((2, 25), dtype=np.int8)
    board[0, :3] = [3, 3, 3]
    board[1, :3] = [2, 3, 4]
    data = run_trials(board, small_net, RolloutSettings(trials=36), 0, 36)
    assert (data.turns == 0).all()  # an exact race from the start: scored at once, no variance
    assert np.ptp(data.raw[:, 0]) == 0 and data.raw[0, 1:].sum() == 0


def test_variance_reduction_lowers_se_and_keeps_the_mean(small_net):
    s = RolloutSettings(trials=144, truncate=10)
    data = run_trials(OPENING.board, small_net, s, 0, 144)
    with_vr = equity(data.raw - data.luck)
    without = equity(data.raw)  # the same games without the luck subtracted
    assert with_vr.std() < 0.6 * without.std()
    luck = equity(data.raw) - with_vr
    assert abs(luck.mean()) < 4 * luck.std(ddof=1) / np.sqrt(len(luck))


def test_variance_reduction_plays_the_same_games(pubeval):
    """VR changes the estimate, not the games: with it off, the same seed plays the same trials
    to the same outcomes, so `raw` of a VR rollout is the rollout without VR."""
    on = run_trials(OPENING.board, pubeval, RolloutSettings(trials=36, seed=9), 0, 36)
    off = run_trials(OPENING.board, pubeval, RolloutSettings(trials=36, seed=9, variance_reduction=False), 0, 36)
    assert np.array_equal(on.raw, off.raw) and np.array_equal(on.turns, off.turns)
    assert not off.luck.any() and on.luck.any()


def test_cubeful_rollout_runs(small_net):
    s = RolloutSettings(trials=36, cube=True, truncate=8)
    summary = summarise(run_trials(OPENING.board, small_net, s, 0, 36), s)
    assert summary.cubeful is not None and np.isfinite(summary.se_cubeful)
    assert -3 < summary.cubeful < 3


def _small_bearoffs(n: int, seed: int) -> list[np.ndarray]:
    """Random positions of both sides home with two to six checkers each."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        board = np.zeros((2, 25), dtype=np.int8)
        for side in range(2):
            for _ in range(rng.integers(2, 7)):
                board[side, rng.integers(0, 6)] += 1
        out.append(board)
    return out


@pytest.mark.parametrize("owner", ["centre", "me"])
def test_cube_decision_rollout_of_small_bearoffs_is_exact(small_net, owner):
    """36 quasi-random trials play each first roll once and stop at the exact two-sided table
    a roll later, so both lines are the table's No double and Double/take, but for the plays:
    the table plays each roll for the best cubeful equity, the rollout for the best cubeless
    one, which can only lose a little."""
    from engine.cube.equity import cube_decision, small_bearoff_values
    from engine.rollout.runner import rollout_cube_decision

    settings = RolloutSettings(trials=36, cube=True, batch=36, cube_owner=cf.ME_OWNS if owner == "me" else cf.CENTRE)
    cube = CubeInfo(value=1, owner=owner)
    for board in _small_bearoffs(6, seed=4):
        if not cube.may_double():
            continue
        res = rollout_cube_decision(board, LocalBackend(None, evaluator=small_net), settings)
        nd, dt = small_bearoff_values(board, cube)
        assert nd - 1e-3 <= res.decision.no_double <= nd + 1e-9
        assert dt - 2e-3 <= res.decision.double_take <= dt + 1e-9
        assert res.decision.action == cube_decision(np.zeros(5), cube, 0.0, board).action
        assert res.gain[0] == pytest.approx(res.decision.double_take - res.decision.no_double)


def test_cube_decision_lines_are_paired_and_consistent(pubeval):
    from engine.rollout.runner import cube_lines, rollout_cube_decision

    s = RolloutSettings(trials=72, cube=True, truncate=4, batch=36)
    res = rollout_cube_decision(OPENING.board, LocalBackend(None, evaluator=pubeval), s)
    nd, dt = res.no_double, res.double_take
    assert np.array_equal(nd.data.ids, dt.data.ids) and nd.settings.hold_first
    assert (dt.settings.cube_value, dt.settings.cube_owner) == (2, cf.OPP_OWNS)
    assert res.decision.no_double == pytest.approx(nd.summary.cubeful)
    assert res.decision.double_take == pytest.approx(dt.summary.cubeful)
    assert res.gain[0] == pytest.approx(dt.summary.cubeful - nd.summary.cubeful)
    # The same first roll in both lines: paired, the difference's error is below the sum of both.
    assert res.gain[1] < np.hypot(nd.summary.se_cubeful, dt.summary.se_cubeful)
    # Without hold_first the opening side never doubles at once either, so the line is the same rollout.
    plain = run_trials(OPENING.board, pubeval, replace_settings(s, hold_first=False), 0, 72)
    assert np.allclose(plain.cf_raw, nd.data.cf_raw)
    with pytest.raises(RolloutError, match="opponent"):
        cube_lines(replace_settings(s, cube_owner=cf.OPP_OWNS))
    with pytest.raises(RolloutError, match="cube=True"):
        cube_lines(RolloutSettings())


def replace_settings(s: RolloutSettings, **kw) -> RolloutSettings:
    from dataclasses import replace

    return replace(s, **kw)


@pytest.mark.parametrize("kw, words", [
    ({"cube": True, "cube_value": 3}, "power of two"),
    ({"cube": True, "cube_owner": 2}, "cube_owner"),
    ({"cube_owner": 1}, "cubeful"),
    ({"hold_first": True}, "cubeful"),
])
def test_cube_start_settings_checked(kw, words):
    with pytest.raises(RolloutError, match=words):
        RolloutSettings(**kw)


def test_positions_refused():
    over = np.zeros((2, 25), dtype=np.int8)
    over[1, 0] = 15
    with pytest.raises(RolloutError, match="already over"):
        check_position(over)
    with pytest.raises(RolloutError):
        RolloutSettings(trials=0)
    with pytest.raises(RolloutError):
        RolloutSettings(trials=-5)


# ---------------------------------------------------------------------------------------
# The runner


def test_save_resume_equals_uninterrupted(pubeval, tmp_path):
    s = RolloutSettings(trials=108, batch=36, seed=2)
    full = rollout_position(OPENING.board, LocalBackend(lambda: pubeval, evaluator=pubeval), s)
    path = tmp_path / "r.npz"
    calls = []

    def stop_after_first(done, summary):
        calls.append(done)
        if done >= 36:
            raise KeyboardInterrupt

    part = rollout_position(OPENING.board, LocalBackend(lambda: pubeval, evaluator=pubeval), s, save_path=path,
                            progress=stop_after_first)
    assert part.interrupted and part.summary.trials == 36
    assert not (tmp_path / "r.npz.tmp").exists()
    resumed = rollout_position(OPENING.board, LocalBackend(lambda: pubeval, evaluator=pubeval), s, save_path=path,
                               resume_path=path)
    assert resumed.summary.trials == 108
    assert np.array_equal(resumed.data.raw, full.data.raw) and resumed.summary.equity == full.summary.equity
    with pytest.raises(RolloutError, match="different settings"):
        rollout_position(OPENING.board, LocalBackend(lambda: pubeval, evaluator=pubeval),
                         RolloutSettings(trials=108, batch=36, seed=3), resume_path=path)
    other = tmp_path / "notes.txt"
    other.write_text("not a rollout\n")
    with pytest.raises(RolloutError, match="not a file written by --save"):
        rollout_position(OPENING.board, LocalBackend(lambda: pubeval, evaluator=pubeval), s, resume_path=other)


def test_resume_reads_a_version_1_file(pubeval, tmp_path):
    """A save of the first format (one line, written before cube_value, cube_owner and
    hold_first existed) resumes: the missing settings are their defaults."""
    from engine.rollout.savefile import load

    s = RolloutSettings(trials=72, batch=36, seed=2)
    data = run_trials(OPENING.board, pubeval, s, 0, 36)
    settings = {k: v for k, v in s.as_dict().items() if k not in ("cube_value", "cube_owner", "hold_first")}
    meta = {"version": 1, "position": OPENING.board.tolist(), "settings": settings}
    path = tmp_path / "old.npz"
    np.savez(path, meta=np.array(json.dumps(meta)), **data.to_arrays())
    (back,) = load(path, OPENING.board, [s])
    assert np.array_equal(back.raw, data.raw)
    with pytest.raises(RolloutError, match="different settings"):
        load(path, OPENING.board, [RolloutSettings(trials=72, batch=36, seed=2, cube=True, cube_owner=1)])
    with pytest.raises(RolloutError, match="holds a position rollout, not a cube decision"):
        load(path, OPENING.board, [s, s])


@pytest.mark.parametrize("version, readable", [(2, True), (3, True), (4, False)])
def test_save_file_versions(pubeval, tmp_path, version, readable):
    """Version 2 (before the plays of a roll could be saved) is read; a later one is refused."""
    from engine.rollout.savefile import load, save

    s = RolloutSettings(trials=36, batch=36, seed=2)
    data = run_trials(OPENING.board, pubeval, s, 0, 36)
    path = tmp_path / "r.npz"
    save(path, OPENING.board, [(s, data)])
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files if k != "meta"}
        meta = json.loads(str(z["meta"]))
    np.savez(path, meta=np.array(json.dumps({**meta, "version": version})), **arrays)
    if readable:
        assert np.array_equal(load(path, OPENING.board, [s])[0].raw, data.raw)
    else:
        with pytest.raises(RolloutError, match="file version 4"):
            load(path, OPENING.board, [s])


def test_cube_decision_save_resume_equals_uninterrupted(pubeval, tmp_path):
    from engine.rollout.runner import rollout_cube_decision

    s = RolloutSettings(trials=108, batch=36, seed=4, cube=True, truncate=6)
    backend = LocalBackend(lambda: pubeval, evaluator=pubeval)
    full = rollout_cube_decision(OPENING.board, backend, s)
    path = tmp_path / "cube.npz"

    def stop_after_first(done, summary):
        if done >= 36:
            raise KeyboardInterrupt

    part = rollout_cube_decision(OPENING.board, backend, s, save_path=path, progress=stop_after_first)
    assert part.no_double.interrupted and part.no_double.summary.trials == 36
    resumed = rollout_cube_decision(OPENING.board, backend, s, save_path=path, resume_path=path)
    assert resumed.no_double.summary.trials == resumed.double_take.summary.trials == 108
    assert resumed.decision == full.decision and resumed.gain == full.gain
    with pytest.raises(RolloutError, match="holds a cube decision rollout, not a position"):
        rollout_position(OPENING.board, backend, s, resume_path=path)


def test_plays_save_resume_equals_uninterrupted(pubeval, tmp_path):
    """--dice with --save, stopped after a batch, then --resume: the same plays, trials and
    stop-rule verdicts as one uninterrupted run; other rollouts' files are refused."""
    s = RolloutSettings(trials=108, batch=36, seed=4, truncate=6)
    backend = LocalBackend(lambda: pubeval, evaluator=pubeval)
    kw = dict(top=3, stop_behind=0.5, min_trials=36)
    full = rollout_plays(OPENING.board, (4, 3), pubeval, backend, s, **kw)
    assert any(p.stopped for p in full) and not all(p.stopped for p in full)
    path = tmp_path / "plays.npz"

    def stop_after_first(done, summary):
        if done >= 36:
            raise KeyboardInterrupt

    part = rollout_plays(OPENING.board, (4, 3), pubeval, backend, s, progress=stop_after_first, save_path=path, **kw)
    assert all(p.result.summary.trials == 36 for p in part)
    resumed = rollout_plays(OPENING.board, (4, 3), pubeval, backend, s, save_path=path, resume_path=path, **kw)
    for a, b in zip(full, resumed):
        assert np.array_equal(a.afterstate, b.afterstate) and a.stopped == b.stopped
        assert np.array_equal(a.result.data.ids, b.result.data.ids)
        assert np.array_equal(a.result.data.raw, b.result.data.raw)
    with pytest.raises(RolloutError, match="holds a rollout of the plays of a roll, not a position rollout"):
        rollout_position(OPENING.board, backend, s, resume_path=path)
    with pytest.raises(RolloutError, match="plays of another roll"):
        rollout_plays(OPENING.board, (6, 5), pubeval, backend, s, resume_path=path)
    rollout_position(OPENING.board, backend, replace(s, trials=36), save_path=tmp_path / "pos.npz")
    with pytest.raises(RolloutError, match="holds a position rollout, not a rollout of the plays"):
        rollout_plays(OPENING.board, (4, 3), pubeval, backend, s, resume_path=tmp_path / "pos.npz")


def test_target_se_stops_early(pubeval):
    s = RolloutSettings(trials=360, batch=36, truncate=2)
    res = rollout_position(OPENING.board, LocalBackend(lambda: pubeval, evaluator=pubeval), s,
                           target_se=10.0, min_trials=72)
    assert res.summary.trials == 72


def test_plays_share_dice_and_stop_rule(small_net):
    s = RolloutSettings(trials=72, batch=36, truncate=4)
    plays = rollout_plays(OPENING.board, (2, 1), small_net, LocalBackend(lambda: small_net, evaluator=small_net), s,
                          top=3, stop_behind=0.0, min_trials=36)
    assert len(plays) == 3
    assert sum(p.stopped for p in plays) >= 1  # zero standard errors behind: all but the leader stop
    assert not plays[0].stopped
    assert all(p.result.summary.trials == 36 for p in plays if p.stopped)  # stopped after the first batch


@pytest.mark.slow
def test_two_workers_give_the_same_result(pubeval):
    s = RolloutSettings(trials=72, batch=36, seed=9)
    one = rollout_position(OPENING.board, LocalBackend(lambda: pubeval, evaluator=pubeval), s)
    backend = LocalBackend(PubevalEvaluator, workers=2)
    try:
        two = rollout_position(OPENING.board, backend, s)
    finally:
        backend.close()
    assert np.array_equal(one.data.raw, two.data.raw) and np.array_equal(one.data.luck, two.data.luck)


def test_cube_decision_on_two_workers_is_the_same(pubeval):
    from engine.rollout.runner import rollout_cube_decision

    s = RolloutSettings(trials=72, batch=36, seed=9, cube=True, truncate=6)
    one = rollout_cube_decision(OPENING.board, LocalBackend(lambda: pubeval, evaluator=pubeval), s)
    backend = LocalBackend(PubevalEvaluator, workers=2)
    try:
        two = rollout_cube_decision(OPENING.board, backend, s)
    finally:
        backend.close()
    for a, b in ((one.no_double, two.no_double), (one.double_take, two.double_take)):
        assert np.array_equal(a.data.cf_raw, b.data.cf_raw) and np.array_equal(a.data.cf_luck, b.data.cf_luck)
    assert one.decision == two.decision


def test_plays_on_two_workers_are_the_same(pubeval):
    """--dice on two workers: each play's batch is cut in two and both workers share them;
    the trials are the same as on one."""
    s = RolloutSettings(trials=72, batch=36, seed=9, truncate=6)
    one = rollout_plays(OPENING.board, (3, 1), pubeval, LocalBackend(lambda: pubeval, evaluator=pubeval), s, top=2)
    backend = LocalBackend(PubevalEvaluator, workers=2)
    try:
        two = rollout_plays(OPENING.board, (3, 1), pubeval, backend, s, top=2)
    finally:
        backend.close()
    for a, b in zip(one, two):
        assert np.array_equal(a.afterstate, b.afterstate) and np.array_equal(a.result.data.ids, b.result.data.ids)
        assert np.array_equal(a.result.data.raw, b.result.data.raw)


def test_split_range_covers_the_batch():
    from engine.rollout.backends import split_range

    assert split_range(36, 72, 2) == [(36, 54), (54, 72)]
    assert split_range(0, 3, 8) == [(0, 1), (1, 2), (2, 3)]
    for lo, hi, n in ((0, 36, 1), (72, 107, 3), (5, 6, 2)):
        cuts = split_range(lo, hi, n)
        assert cuts[0][0] == lo and cuts[-1][1] == hi and all(a < b for a, b in cuts)
        assert all(cuts[k][1] == cuts[k + 1][0] for k in range(len(cuts) - 1))


# ---------------------------------------------------------------------------------------
# The command line


def test_workers_exit_when_the_parent_is_killed(tmp_path):
    """A rollout killed hard (SIGKILL: no shutdown runs) leaves no worker processes behind."""
    script = tmp_path / "parent.py"
    script.write_text(
        "import sys, time\n"
        "from engine.position import Position\n"
        "from engine.pubeval import PubevalEvaluator\n"
        "from engine.rollout.core import RolloutSettings\n"
        "from engine.rollout.backends import Job, LocalBackend\n"
        "if __name__ == '__main__':\n"
        "    b = LocalBackend(PubevalEvaluator, workers=2)\n"
        "    s = RolloutSettings(trials=4, batch=2)\n"
        "    list(b.run([Job(Position.start().board, s, 0, 2), Job(Position.start().board, s, 2, 4)]))\n"
        "    print(' '.join(str(p) for p in b._pool._processes), flush=True)\n"
        "    time.sleep(600)\n")
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
    finally:
        proc.kill()  # the parent this test started, by id
        proc.wait()
    assert len(pids) == 2

    def alive(pid: int) -> bool:
        try:
            return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
        except FileNotFoundError:
            return False

    for _ in range(600):  # a liveness bound, not a timing claim
        if not any(alive(p) for p in pids):
            break
        time.sleep(0.1)
    assert not any(alive(p) for p in pids), pids


def test_cli_json_shape():
    out = cli(OPENING.id, "--evaluator", "pubeval", "--trials", "36", "--truncate", "3", "--cube", "--json", "--quiet")
    assert out.returncode == 0, out.stderr
    rec = json.loads(out.stdout)
    assert {"position", "trials", "probs", "equity", "cubeful", "se", "seconds"} <= set(rec)
    assert set(rec["se"]) == {"probs", "equity", "cubeful"} and len(rec["probs"]) == 5 and rec["trials"] == 36


def test_cli_cube_decision():
    out = cli(OPENING.id, "--evaluator", "pubeval", "--trials", "36", "--truncate", "3", "--cube-decision", "--json",
              "--quiet")
    assert out.returncode == 0, out.stderr
    rec = json.loads(out.stdout)
    assert rec["owner"] == "centre" and rec["trials"] == 36
    assert {"no_double", "double_take", "double_pass", "action"} <= set(rec["decision"])
    assert rec["decision"]["no_double"] == rec["no_double"]["cubeful"]
    text = cli(OPENING.id, "--evaluator", "pubeval", "--trials", "36", "--truncate", "3", "--cube-decision",
               "--owner", "me", "--quiet")
    assert text.returncode == 0, text.stderr
    assert "Redouble, take" in text.stdout and "Proper cube action:" in text.stdout
    bad = cli(OPENING.id, "--evaluator", "pubeval", "--cube-decision", "--dice", "31")
    assert bad.returncode == 2 and "dice" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    bad = cli(OPENING.id, "--evaluator", "pubeval", "--owner", "me")
    assert bad.returncode == 2 and "--cube-decision" in bad.stderr


def test_cli_batch_one_object_per_line():
    out = cli("--batch", "--evaluator", "pubeval", "--trials", "36", "--truncate", "2", "--quiet",
              stdin=f"{OPENING.id}\n{OPENING.id} 31\n")
    assert out.returncode == 0, out.stderr
    recs = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(recs) == 2 and "dice" not in recs[0] and recs[1]["dice"] == [3, 1] and "plays" in recs[1]


def test_cli_text_reads_like_gnubg():
    out = cli(OPENING.id, "--evaluator", "pubeval", "--trials", "36", "--truncate", "2", "--no-progress")
    assert out.returncode == 0, out.stderr
    assert "Win" in out.stdout and "std error" in out.stdout and "36 trials" in out.stdout


@pytest.mark.parametrize("args, words", [
    (["--trials", "0"], "trials"),
    (["--trials", "-3"], "trials"),
    (["--truncate", "-1"], "truncate"),
    (["--seed", "-1"], "seed"),
    (["--min-trials", "-5"], "min-trials"),
    (["--dice", "31", "--stop-behind", "-1"], "stop-behind"),
    (["--workers", "0"], "workers"),
])
def test_cli_bad_numbers_one_line_exit_2(args, words):
    out = cli(OPENING.id, "--evaluator", "pubeval", *args)
    assert out.returncode == 2 and words in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_cli_finished_and_impossible_positions_one_line_exit_2():
    over = np.zeros((2, 25), dtype=np.int8)
    over[1, 5] = 15
    for pid, words in ((encode_position_id(over), "already over"), ("AAAAAAAAAAAAAA", "no checkers"),
                       ("not-an-id", "Position ID"), ("////////////////", "Position ID")):
        out = cli(pid, "--evaluator", "pubeval", "--trials", "36")
        assert out.returncode == 2, (pid, out.stderr)
        assert words in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_cli_bad_ray_address_one_line_exit_2():
    out = cli(OPENING.id, "--evaluator", "pubeval", "--trials", "36", "--backend", "ray", "--ray-address", "nohost")
    assert out.returncode == 2 and "ray-address" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    out = cli(OPENING.id, "--evaluator", "pubeval", "--trials", "36", "--backend", "ray",
              "--ray-address", "127.0.0.1:1")
    assert out.returncode == 2 and "cannot reach" in out.stderr and len(out.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------------------------------
# Slow: Ray faults, and gnubg's rollouts as the yardstick


@pytest.mark.ray
@pytest.mark.slow
def test_ray_killed_worker_same_result(tmp_path):
    pytest.importorskip("ray")
    from training.rollout_ray import RayBackend

    s = RolloutSettings(trials=144, batch=36, seed=4)
    ev = PubevalEvaluator()
    local = rollout_position(OPENING.board, LocalBackend(lambda: ev, evaluator=ev), s)
    pid_file = tmp_path / "pids"
    backend = RayBackend(PubevalEvaluator, workers=2, pid_file=str(pid_file))
    killed = []
    finished = threading.Event()

    def killer():  # no time limit: on a loaded machine Ray's workers may take minutes to start
        while not finished.is_set() and not killed:
            if pid_file.exists():
                lines = pid_file.read_text().split("\n")
                for line in lines:
                    if line.strip() and line.split()[1] == "72":  # the worker holding the third batch
                        pid = int(line.split()[0])
                        os.kill(pid, 9)  # a Ray worker process this test started, by id
                        killed.append(pid)
                        break
            time.sleep(0.005)

    thread = threading.Thread(target=killer)
    thread.start()
    try:
        res = rollout_position(OPENING.board, backend, s)
    finally:
        finished.set()
        thread.join()
        backend.close()
    assert killed, "no worker was killed"
    starts = [line.split()[1] for line in pid_file.read_text().split("\n") if line.strip()]
    assert starts.count("72") >= 2, starts  # the killed worker's batch was run again
    assert np.array_equal(res.data.ids, local.data.ids)
    assert np.array_equal(res.data.raw, local.data.raw) and np.allclose(res.data.luck, local.data.luck)


@pytest.mark.slow
@pytest.mark.skipif(not DATA.exists(), reason="tests/data/gnubg-rollouts.json not generated")
def test_close_to_gnubg_rollouts():
    """A few of gnubg's 1,296-trial rollouts (from the data file; gnubg itself not needed)."""
    from models.loader import load_evaluator

    ev = load_evaluator(None)
    doc = json.loads(DATA.read_text())
    picks = doc["positions"][:1] + doc["positions"][-2:]
    for ref in picks:
        board = Position.from_id(ref["position"]).board
        res = rollout_position(board, LocalBackend(lambda: ev, evaluator=ev), RolloutSettings(trials=324))
        assert abs(res.summary.equity - ref["equity"]) < 0.06, ref["position"]
        assert abs(res.summary.probs[0] - ref["probs"][0]) < 0.03, ref["position"]


# ---------------------------------------------------------------------------------------
# Rollouts as distillation targets


def test_rollout_targets_are_the_afterstates_values_from_the_mover(small_net):
    """Truncated after one roll with VR, the rollout of an afterstate is exactly the opponent's 2-ply value
    seen by the side that moved; a finished game gets its result."""
    from engine.evaluator import flip, result_probs
    from engine.rollout.targets import rollout_targets
    from engine.search import rank_plays

    after = np.stack([p.afterstate for p in rank_plays(OPENING.board, (3, 1), small_net, 1)[:2]])
    won = np.zeros((2, 25), dtype=np.int8)
    won[1, 5] = 15  # the mover has borne off everything
    targets = rollout_targets(np.concatenate([after, won[None]]), small_net, trials=36, truncate=1)
    assert targets.dtype == np.float32 and targets.shape == (3, 5)
    for board, target in zip(after, targets):
        expected = flip(evaluate_position(np.ascontiguousarray(board[::-1]), small_net, 2))
        assert np.allclose(target, expected, atol=1e-5)
    assert np.array_equal(targets[2], result_probs(2))  # the loser has all 15 checkers on: a gammon


def test_gnubg_yardstick_file_and_accuracy_table():
    """The committed yardstick: 20+ positions of gnubg's 1,296-trial rollouts; the table measures distance to it."""
    from scripts.lab.gnubg_rollouts import accuracy_table

    doc = json.loads(DATA.read_text())
    refs = doc["positions"]
    assert len(refs) >= 20 and doc["gnubg"]["trials"] == 1296
    assert len({r["position"] for r in refs}) == len(refs)
    for r in refs:
        assert abs(equity(np.array(r["probs"])) - r["equity"]) < 0.01  # gnubg's five numbers agree with its equity
    off = {r["position"]: {"equity": r["equity"] + 0.05, "se": 0.01, "probs": [r["probs"][0] + 0.03],
                           "equity1": r["equity"], "ply1": r["probs"], "equity2": r["equity"] - 0.1,
                           "ply2": r["probs"]} for r in refs}
    summary = {line.split("|")[1].strip(): line for line in accuracy_table(refs, off)[-3:]}
    assert "| 0.0500 |" in summary["rollout"] and f"0/{len(refs)}" in summary["rollout"]
    assert "| 0.0000 |" in summary["1-ply"] and f"{len(refs)}/{len(refs)}" in summary["1-ply"]
    assert "| 0.1000 |" in summary["2-ply"]


@pytest.mark.gnubg
def test_gnubg_rollout_at_a_chosen_ply_and_positions(tmp_path):
    """The yardstick's check: gnubg's rollout of chosen positions at its 1-ply, recorded as such."""
    from scripts.lab.gnubg_rollouts import main

    race = "/44BAMB/BQAAAA"  # a short race: gnubg ends it at its bear-off database
    out = tmp_path / "g.json"
    main(["--ply", "1", "--positions", race, "--trials", "36", "--out", str(out), "--progress",
          str(tmp_path / "p.jsonl")])
    doc = json.loads(out.read_text())
    assert doc["gnubg"]["gnubg_ply"] == 1 and doc["gnubg"]["trials"] == 36
    (row,) = doc["positions"]
    assert row["position"] == race and 0.0 <= row["probs"][0] <= 1.0
    ref = {r["position"]: r for r in json.loads(DATA.read_text())["positions"]}[race]
    assert abs(row["equity"] - ref["equity"]) < 0.05  # an exact race: any ply agrees
    assert json.loads((tmp_path / "p.jsonl").read_text())["ply"] == 1
