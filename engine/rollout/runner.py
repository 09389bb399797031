"""Schedule a rollout's batches: in this process, on worker processes or on Ray; stop early;
save and resume; roll out the candidate plays of a roll.

Batches are fixed ranges of trial ids [j*B, (j+1)*B), consumed in order, so the result
for a seed does not depend on the backend, the worker count or an interruption: a stop
rule is checked on a prefix of batches, and a resumed or retried batch is recomputed
from the same dice.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from engine.cube.equity import CubeDecision, CubeInfo, decide
from engine.evaluator import Evaluator, equity, result_probs
from engine.rollout.cubeful import CODE_OWNER, OPP_OWNS as OPP_CODE
from engine.rollout.core import (RolloutError, RolloutSettings, Summary, TrialData, check_position, estimates,
                                 run_trials, summarise)
from engine.position import game_results
from engine.search import rank_plays

EvaluatorFactory = Callable[[], Evaluator]
Progress = Callable[[int, Summary], None]
"""Called after each batch with the trials done so far and their summary."""

FILE_VERSION = 2  # 2: any number of lines (a cube decision has two); 1: one line


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


def batch_ranges(settings: RolloutSettings) -> list[tuple[int, int]]:
    b, n = settings.batch, settings.trials
    return [(lo, min(lo + b, n)) for lo in range(0, n, b)]


def split_range(lo: int, hi: int, pieces: int) -> list[tuple[int, int]]:
    """[lo, hi) in at most `pieces` contiguous, nearly equal, non-empty ranges: a trial's
    dice and play depend on its id alone, so the pieces' trials are the batch's."""
    bounds = np.linspace(lo, hi, min(pieces, hi - lo) + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


# ---------------------------------------------------------------------------------------
# Backends: each runs a list of jobs and yields their TrialData in the list's order. Jobs
# start in that order as workers free up, so a caller that lists the batches it wants
# first gets them first; closing the iterator cancels the jobs not started.


@dataclass(frozen=True)
class Job:
    """One batch of trials [lo, hi) of one board (a position, a play's afterstate, a cube line)."""

    board: np.ndarray
    settings: RolloutSettings
    lo: int
    hi: int

_WORKER_EVALUATOR: Evaluator | None = None


def _worker_init(factory: EvaluatorFactory) -> None:
    global _WORKER_EVALUATOR
    _exit_with_parent()
    _WORKER_EVALUATOR = factory()


def _exit_with_parent(poll: float = 1.0) -> None:
    """End this worker when its parent dies without shutting the pool down (killed hard):
    every worker holds the task queue's write end, so the queue never closes and an
    orphaned worker would otherwise wait forever."""
    import threading

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="exit-with-parent").start()


def _worker_batch(board: np.ndarray, settings: RolloutSettings, lo: int, hi: int) -> TrialData:
    return run_trials(board, _WORKER_EVALUATOR, settings, lo, hi)


class LocalBackend:
    """In this process (workers=1) or on `workers` processes of this machine."""

    def __init__(self, factory: EvaluatorFactory, workers: int = 1, evaluator: Evaluator | None = None) -> None:
        if workers < 1:
            raise RolloutError(f"workers must be at least 1, got {workers}")
        self.factory, self.workers, self._evaluator = factory, workers, evaluator
        self._pool: ProcessPoolExecutor | None = None

    def run(self, jobs: list[Job]) -> Iterator[TrialData]:
        if not jobs:
            return
        if self.workers == 1:
            if self._evaluator is None:
                self._evaluator = self.factory()
            for job in jobs:
                yield run_trials(job.board, self._evaluator, job.settings, job.lo, job.hi)
            return
        if self._pool is None:
            import multiprocessing as mp

            self._pool = ProcessPoolExecutor(self.workers, mp_context=mp.get_context("spawn"),
                                             initializer=_worker_init, initargs=(self.factory,))
        futures = [self._pool.submit(_worker_batch, job.board, job.settings, job.lo, job.hi) for job in jobs]
        try:
            for fut in futures:
                yield fut.result()
        finally:
            for fut in futures:
                fut.cancel()

    def close(self, abort: bool = False) -> None:
        if self._pool is not None:
            if abort:  # our own worker processes, by id
                for proc in list(getattr(self._pool, "_processes", {}).values()):
                    proc.terminate()
            self._pool.shutdown(wait=not abort, cancel_futures=True)
            self._pool = None


# ---------------------------------------------------------------------------------------
# Save and resume


_FIELDS = ("ids", "raw", "luck", "cf_raw", "cf_luck", "turns")


def save(path: str | Path, board: np.ndarray, lines: list[tuple[RolloutSettings, TrialData]],
         plays: dict | None = None) -> None:
    """Write the trials done so far of each line (one for a position, two for a cube
    decision, one a play for the plays of a roll, which `plays` describes: the dice and
    each play's afterstate, steps and whether it stopped) atomically (a *.tmp file, then
    os.replace): a failed write leaves the last good save in place."""
    path = Path(path)
    meta = {"version": FILE_VERSION, "position": board.tolist(), "lines": [st.as_dict() for st, _ in lines]}
    if plays is not None:
        meta["plays"] = plays
    arrays = {f"{k}.{name}": a for k, (_, data) in enumerate(lines) for name, a in data.to_arrays().items()}
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as fh:
            np.savez(fh, meta=np.array(json.dumps(meta)), **arrays)
        os.replace(tmp, path)
    except OSError as err:
        raise RolloutError(f"cannot save to {path}: {err.strerror or err}") from None


_KINDS = {"position": "a position rollout", "cube": "a cube decision rollout",
          "plays": "a rollout of the plays of a roll"}


def _read(path: str | Path, board: np.ndarray, kind: str) -> tuple[dict, list[TrialData]]:
    """A save file's description and each line's trials, if it is a rollout of `board` of
    this kind (one of _KINDS)."""
    try:
        with np.load(path) as z:
            meta = json.loads(str(z["meta"]))
            if meta.get("version") == 1:
                meta["lines"], saved_data = [meta["settings"]], [TrialData(*(z[f] for f in _FIELDS))]
            else:
                saved_data = [TrialData(*(z[f"{k}.{f}"] for f in _FIELDS)) for k in range(len(meta["lines"]))]
    except OSError as err:
        raise RolloutError(f"cannot resume from {path}: {err.strerror or err}") from None
    except (ValueError, KeyError, EOFError, TypeError):
        raise RolloutError(f"cannot resume from {path}: not a file written by --save") from None
    if meta.get("version") not in (1, FILE_VERSION):
        raise RolloutError(f"cannot resume from {path}: file version {meta.get('version')}")
    if meta["position"] != board.tolist():
        raise RolloutError(f"cannot resume from {path}: it holds a rollout of another position")
    found = "plays" if "plays" in meta else {1: "position", 2: "cube"}.get(len(meta["lines"]))
    if found != kind:
        raise RolloutError(f"cannot resume from {path}: it holds {_KINDS.get(found, 'another rollout')}, "
                           f"not {_KINDS[kind]}")
    return meta, saved_data


def load(path: str | Path, board: np.ndarray, lines: list[RolloutSettings]) -> list[TrialData]:
    """The trials of each line of a saved rollout of the same position and settings (trials
    may differ): one line for a position, two for a cube decision. Reads files of version
    1 too (one line)."""
    meta, saved_data = _read(path, board, "position" if len(lines) == 1 else "cube")
    return _checked(path, lines, meta["lines"], saved_data)


def _checked(path: str | Path, lines: list[RolloutSettings], saved_lines: list[dict],
             saved_data: list[TrialData]) -> list[TrialData]:
    """Each line's saved trials below its trial count, if the settings agree (trials may differ)."""
    out = []
    for settings, saved_settings, data in zip(lines, saved_lines, saved_data):
        # Settings added since a file was written take their defaults: what that rollout used.
        saved = {**RolloutSettings().as_dict(), **saved_settings, "trials": settings.trials}
        if saved != settings.as_dict():
            diff = sorted(k for k in saved if saved[k] != settings.as_dict()[k])
            raise RolloutError(f"cannot resume from {path}: different settings ({', '.join(diff)})")
        keep = data.ids < settings.trials
        out.append(TrialData(*(getattr(data, f)[keep] for f in _FIELDS)))
    return out


def load_plays(path: str | Path, board: np.ndarray, dice: tuple[int, int],
               settings: RolloutSettings) -> list[tuple[np.ndarray, np.ndarray, bool, TrialData]]:
    """The plays of a saved rollout of this roll: each one's afterstate, steps, whether it
    stopped, and its trials, whole batches only (a batch cut short is run again)."""
    meta, saved_data = _read(path, board, "plays")
    if tuple(meta["plays"]["dice"]) != tuple(dice):
        raise RolloutError(f"cannot resume from {path}: it holds the plays of another roll")
    data = _checked(path, [settings] * len(saved_data), meta["lines"], saved_data)
    return [(np.array(p["afterstate"], dtype=np.int8), np.array(p["steps"], dtype=np.int8), bool(p["stopped"]),
             _drop(d, [r for r in batch_ranges(settings) if not np.isin(np.arange(*r), d.ids).all()]))
            for p, d in zip(meta["plays"]["plays"], data)]


def _resumed(path: str | Path | None, board: np.ndarray,
             lines: list[RolloutSettings]) -> tuple[list[TrialData], list[tuple[int, int]]]:
    """Each line's trials saved in `path` (if it exists) and the batches still to run: a
    batch not saved whole in every line is redone whole."""
    done = [TrialData.empty() for _ in lines]
    if path is not None and Path(path).exists():
        done = load(path, board, lines)
    have = [set(d.ids.tolist()) for d in done]
    todo = [(lo, hi) for lo, hi in batch_ranges(lines[0])
            if not all(i in ids for ids in have for i in range(lo, hi))]
    return [_drop(d, todo) for d in done], todo


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
    (done,), todo = _resumed(resume_path, board, [settings])
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


def _drop(data: TrialData, ranges: list[tuple[int, int]]) -> TrialData:
    keep = np.ones(len(data.ids), dtype=bool)
    for lo, hi in ranges:
        keep &= ~((data.ids >= lo) & (data.ids < hi))
    return TrialData(*(getattr(data, f)[keep] for f in _FIELDS))


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
                    and not np.isin(np.arange(lo, hi), c["data"].ids).all()]
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
    done, ranges = _resumed(resume_path, board, list(lines))
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
