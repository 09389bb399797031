"""Run a rollout batch by batch: of a position, of the plays of a roll, of a cube decision;
stop early, save and resume.

Batches are fixed ranges of trial ids [j*B, (j+1)*B), consumed in order, so the result
for a seed does not depend on the backend (engine.rollout.backends, training.rollout_ray),
the worker count or an interruption: a stop rule is checked on a prefix of batches, and a
resumed (engine.rollout.savefile) or retried batch is recomputed from the same dice.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from engine.cube.equity import CubeDecision, CubeInfo, decide
from engine.evaluator import Evaluator, equity, result_probs
from engine.position import game_results
from engine.rollout.backends import Job, batch_ranges, split_range
from engine.rollout.core import (RolloutError, RolloutSettings, Summary, TrialData, check_position, estimates,
                                 summarise)
from engine.rollout.cubeful import CODE_OWNER, OPP_OWNS as OPP_CODE
from engine.rollout.savefile import has_batch, load_plays, resumed, save
from engine.search import rank_plays

Progress = Callable[[int, Summary], None]
"""Called after each batch with the trials done so far and their summary."""


@dataclass
class RolloutResult:
    """A finished (or interrupted) rollout of one position, or of one play's afterstate."""

    settings: RolloutSettings
    data: TrialData
    seconds: float
    interrupted: bool = False
    exact: np.ndarray | None = None  # a play that ends the game: its exact outcome
    summary: Summary = field(init=False)

    def __post_init__(self) -> None:
        if self.exact is not None:
            eq = float(equity(self.exact))
            self.summary = Summary(0, self.exact, np.zeros(5), eq, 0.0, eq if self.settings.cube else None,
                                   0.0 if self.settings.cube else None)
        else:
            self.summary = summarise(self.data, self.settings)

    def per_trial_equity(self) -> np.ndarray:
        return equity(estimates(self.data, self.settings)[0])


# ---------------------------------------------------------------------------------------
# One position


def rollout_position(board: np.ndarray, backend, settings: RolloutSettings, *,
                     target_se: float | None = None, min_trials: int = 324, progress: Progress | None = None,
                     save_path: str | Path | None = None, resume_path: str | Path | None = None) -> RolloutResult:
    """Roll out the side on roll's position, before its roll. Ctrl-C returns the partial result.

    target_se: stop once the cubeless equity's standard error (cubeful when settings.cube)
    is at most this, after at least min_trials.
    """
    board = check_position(board)
    start = time.perf_counter()
    (done,), todo = resumed(resume_path, board, [settings])
    parts = [done]
    interrupted = False
    try:
        if _reached(done, settings, target_se, min_trials):
            todo = []
        for data in backend.run([Job(board, settings, lo, hi) for lo, hi in todo]):
            parts.append(data)
            merged = TrialData.concat(parts)
            parts = [merged]
            if save_path is not None:
                save(save_path, board, [(settings, merged)])
            if progress is not None:
                progress(len(merged.ids), summarise(merged, settings))
            if _reached(merged, settings, target_se, min_trials):
                break
    except KeyboardInterrupt:
        interrupted = True
        if hasattr(backend, "close"):
            backend.close(abort=True)
    data = TrialData.concat(parts)
    return RolloutResult(settings, data, time.perf_counter() - start, interrupted)


def _reached(data: TrialData, settings: RolloutSettings, target_se: float | None, min_trials: int) -> bool:
    if target_se is None or len(data.ids) < max(2, min_trials):
        return False
    s = summarise(data, settings)
    se = s.se_cubeful if settings.cube else s.se_equity
    return bool(se <= target_se)


# ---------------------------------------------------------------------------------------
# The plays of a roll


@dataclass
class PlayRollout:
    afterstate: np.ndarray
    steps: np.ndarray
    result: RolloutResult
    stopped: bool = False  # dropped by the stop rule: too far behind the best


def rollout_plays(board: np.ndarray, dice: tuple[int, int], evaluator: Evaluator, backend,
                  settings: RolloutSettings, *, top: int = 3, stop_behind: float | None = None,
                  min_trials: int = 324, progress: Progress | None = None,
                  save_path: str | Path | None = None, resume_path: str | Path | None = None) -> list[PlayRollout]:
    """Roll out the best `top` plays of `dice` (ranked at settings.ply), best first.

    Every candidate sees the same dice (trial ids), so their differences are paired.
    stop_behind: a candidate whose equity is that many standard errors of the (paired)
    difference behind the leader, after min_trials, stops being rolled out (as gnubg).
    save_path keeps every play's trials in one file after each batch; resume_path goes on
    with the plays saved there (whatever `top` and the ranking say now).
    """
    board = check_position(board)
    if resume_path is not None and Path(resume_path).exists():
        saved = load_plays(resume_path, board, dice, settings)
    else:
        saved = [(p.afterstate, p.steps, False, TrialData.empty())
                 for p in rank_plays(board, dice, evaluator, settings.ply)[:max(1, top)]]
    if not saved:
        raise RolloutError(f"no legal play for {dice[0]}{dice[1]}: the roll passes, nothing to compare")
    start = time.perf_counter()
    cands = []
    for after, steps, stopped, data in saved:
        points = int(game_results(after[None])[0])
        cands.append({"after": after, "steps": steps, "exact": result_probs(points) if points else None,
                      "data": data, "stopped": stopped})
    interrupted = False
    pieces = max(1, getattr(backend, "workers", 1))
    try:
        for lo, hi in batch_ranges(settings):
            live = [c for c in cands if c["exact"] is None and not c["stopped"]
                    and not has_batch(c["data"], lo, hi)]
            if not live:
                if all(c["exact"] is not None or c["stopped"] for c in cands):
                    break
                continue  # this batch was saved before a resume
            # Each live play's batch, cut in as many pieces as there are workers, all at once.
            cuts = split_range(lo, hi, pieces)
            data = list(backend.run([Job(np.ascontiguousarray(c["after"][::-1]), settings, a, b)
                                     for c in live for a, b in cuts]))
            for k, c in enumerate(live):
                c["data"] = TrialData.concat([c["data"]] + [d.flipped() for d in data[k * len(cuts):(k + 1) * len(cuts)]])
            if progress is not None:
                lead = _leader(cands, settings)
                progress(hi, summarise(lead["data"], settings) if lead["exact"] is None
                         else RolloutResult(settings, TrialData.empty(), 0.0, exact=lead["exact"]).summary)
            if stop_behind is not None and hi >= min_trials:
                _apply_stop(cands, settings, stop_behind)
            if save_path is not None:
                save(save_path, board, [(settings, c["data"]) for c in cands],
                     {"dice": list(dice), "plays": [{"afterstate": c["after"].tolist(), "steps": c["steps"].tolist(),
                                                     "stopped": c["stopped"]} for c in cands]})
    except KeyboardInterrupt:
        interrupted = True
        if hasattr(backend, "close"):
            backend.close(abort=True)
    seconds = time.perf_counter() - start
    out = []
    for c in cands:
        if c["exact"] is not None:
            res = RolloutResult(settings, TrialData.empty(), 0.0, exact=c["exact"])
        else:
            res = RolloutResult(settings, c["data"], seconds, interrupted)
        out.append(PlayRollout(c["after"], c["steps"], res, c["stopped"]))
    out.sort(key=lambda pr: -_value(pr.result))
    return out


def _value(res: RolloutResult) -> float:
    s = res.summary
    return s.cubeful if res.settings.cube and s.cubeful is not None else s.equity


def _per_trial(c: dict, settings: RolloutSettings) -> tuple[np.ndarray, np.ndarray]:
    data = c["data"]
    probs, cube = estimates(data, settings)
    return data.ids, (cube if settings.cube else equity(probs))


def _leader(cands: list[dict], settings: RolloutSettings) -> dict:
    def val(c):
        if c["exact"] is not None:
            return float(equity(c["exact"]))
        return float(_per_trial(c, settings)[1].mean())
    return max(cands, key=val)


def paired_difference(a: PlayRollout, b: PlayRollout) -> tuple[float, float]:
    """(mean, standard error) of a's value minus b's over their common trials (exact plays have se 0)."""
    va, vb = (_trial_values(x) for x in (a, b))
    ids = np.intersect1d(va[0], vb[0]) if va[0] is not None and vb[0] is not None else None
    if ids is None:
        sa, sb = a.result.summary, b.result.summary
        ea = _value(a.result)
        eb = _value(b.result)
        se_a = (sa.se_cubeful if a.result.settings.cube else sa.se_equity) or 0.0
        se_b = (sb.se_cubeful if b.result.settings.cube else sb.se_equity) or 0.0
        return ea - eb, float(np.hypot(se_a, se_b))
    d = va[1][np.isin(va[0], ids)] - vb[1][np.isin(vb[0], ids)]
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else float("nan")


def _trial_values(p: PlayRollout) -> tuple[np.ndarray | None, np.ndarray | None]:
    if p.result.exact is not None:
        return None, None
    probs, cube = estimates(p.result.data, p.result.settings)
    return p.result.data.ids, (cube if p.result.settings.cube else equity(probs))


def _apply_stop(cands: list[dict], settings: RolloutSettings, n_se: float) -> None:
    lead = _leader(cands, settings)
    for c in cands:
        if c is lead or c["stopped"] or c["exact"] is not None:
            continue
        if lead["exact"] is not None:
            ids, v = _per_trial(c, settings)
            se = v.std(ddof=1) / np.sqrt(len(v))
            behind = float(equity(lead["exact"])) - v.mean()
        else:
            li, lv = _per_trial(lead, settings)
            ci, cv = _per_trial(c, settings)
            common = np.intersect1d(li, ci)
            d = lv[np.isin(li, common)] - cv[np.isin(ci, common)]
            behind, se = d.mean(), d.std(ddof=1) / np.sqrt(len(d))
        if behind > n_se * se:
            c["stopped"] = True


# ---------------------------------------------------------------------------------------
# A cube decision


@dataclass
class CubeRollout:
    """No double and Double/take of the side on roll, rolled out on the same dice.

    decision: engine.cube's verdict from the two rolled-out values (normalised to the cube
    at the start); gain: Double/take minus No double and its standard error, paired trial
    by trial.
    """

    no_double: RolloutResult
    double_take: RolloutResult
    decision: CubeDecision
    gain: tuple[float, float]


def cube_lines(settings: RolloutSettings) -> tuple[RolloutSettings, RolloutSettings]:
    """The settings of the two lines: the cube as it is and held for the first roll, and the
    cube doubled and the opponent's."""
    if not settings.cube:
        raise RolloutError("a cube decision rollout is cubeful: it needs cube=True")
    if settings.cube_owner == OPP_CODE:
        raise RolloutError("the side on roll cannot double: the cube is the opponent's")
    no_double = replace(settings, hold_first=True)
    return no_double, replace(no_double, cube_value=2 * settings.cube_value, cube_owner=OPP_CODE)


def rollout_cube_decision(board: np.ndarray, backend, settings: RolloutSettings, *, target_se: float | None = None,
                          min_trials: int = 324, progress: Progress | None = None,
                          save_path: str | Path | None = None, resume_path: str | Path | None = None) -> CubeRollout:
    """Roll out the side on roll's cube decision (money): both lines batch by batch on the
    same trial ids, so their difference is paired; target_se stops once that difference's
    standard error is at most it. Ctrl-C returns the partial result; save_path and
    resume_path keep both lines in one file, as rollout_position does one."""
    board = check_position(board)
    lines = cube_lines(settings)
    start = time.perf_counter()
    interrupted = False
    done, ranges = resumed(resume_path, board, list(lines))
    parts = ([done[0]], [done[1]])
    merged = done
    if target_se is not None and len(done[0].ids) >= max(2, min_trials) and _gain(done, lines)[1] <= target_se:
        ranges = []
    # Both lines' batches are handed to the backend at once, batch by batch, so workers
    # share them out and each batch of both lines comes back before the next.
    stream = backend.run([Job(board, line, lo, hi) for lo, hi in ranges for line in lines])
    try:
        for _ in ranges:
            parts[0].append(next(stream))
            parts[1].append(next(stream))
            merged = [TrialData.concat(p) for p in parts]
            if save_path is not None:
                save(save_path, board, list(zip(lines, merged)))
            if progress is not None:
                progress(len(merged[0].ids), summarise(merged[0], lines[0]))
            if target_se is not None and len(merged[0].ids) >= max(2, min_trials) and _gain(merged, lines)[1] <= target_se:
                break
    except KeyboardInterrupt:
        interrupted = True
        if hasattr(backend, "close"):
            backend.close(abort=True)
    finally:
        stream.close()  # cancels what a stop rule left unstarted
    seconds = time.perf_counter() - start
    nd, dt = (RolloutResult(line, TrialData.concat(p), seconds, interrupted) for line, p in zip(lines, parts))
    if min(len(nd.data.ids), len(dt.data.ids)) == 0:
        raise KeyboardInterrupt  # stopped before a batch of both lines was done: nothing to report
    cube = CubeInfo(value=settings.cube_value, owner=CODE_OWNER[settings.cube_owner])
    probs = nd.summary.probs
    decision = decide(cube, nd.summary.cubeful, dt.summary.cubeful, float(equity(probs)), bool(probs[1] > 0.0))
    return CubeRollout(nd, dt, decision, _gain([nd.data, dt.data], lines))


def _gain(data: list[TrialData], lines: tuple[RolloutSettings, RolloutSettings]) -> tuple[float, float]:
    """Mean and standard error of Double/take minus No double over the common trials, per
    unit of the cube at the start."""
    common = np.intersect1d(data[0].ids, data[1].ids)
    nd, dt = (estimates(d, line)[1][np.isin(d.ids, common)] for d, line in zip(data, lines))
    d = (dt - nd) / lines[0].cube_value
    if len(d) < 2:
        return float(d.mean()) if len(d) else float("nan"), float("inf")
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d)))


def with_trials(settings: RolloutSettings, trials: int) -> RolloutSettings:
    return replace(settings, trials=trials)
