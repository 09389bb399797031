"""Search distillation (training.distill): fit a net to our own 2-ply values of its self-play positions.

Two steps. `positions` plays the student's 1-ply self-play games and values every
position with the teacher's 2-ply (or --teacher-ply 3) search (any model: a net or an ensemble;
--teacher-ply 1 takes its own evaluation, to compress a large model into a smaller net), saving as it
goes, so a killed run resumes where it stopped when started again with the same command.
`fit` trains the student's weights toward those values and writes a checkpoint that
`tdgammon train --resume` and `scripts.lab.ensemble build` take like any other. `slice` cuts a
long job's newest positions into a file of their own, small enough to commit, that still
resumes the job:

    python -m scripts.lab.distill positions m0.pt --teacher models/default.pt --games 8000 --seed 1 --out d1.npz
    python -m scripts.lab.distill fit m0.pt d1.npz d2.npz --epochs 6 --lr 3e-4 --out m0-distilled.pt
    python -m scripts.lab.distill slice d1.npz --after d1-a.npz d1-b.npz --out d1-c.npz
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

from engine.errors import CheckpointError
from engine.evaluator import N_OUTPUTS
from engine.rollout.targets import rollout_targets
from models.checkpoint import Checkpoint, load_checkpoint, save_checkpoint
from models.loader import load_network
from models.inference import NetworkEvaluator
from models.paths import DEFAULT_MODEL
from training.distill import (TRIM, disputed, fit, holds_back_game, in_cube_window, near_misses,
                              record_positions, search_targets)
from training.selfplay import seed_state


class DataError(Exception):
    """A positions file that is missing, corrupt, or made with other arguments."""


def _save(path: Path, compressed: bool = False, **arrays: np.ndarray) -> None:
    """np.savez to PATH.tmp, then os.replace: a kill never leaves a half-written file."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as handle:
        (np.savez_compressed if compressed else np.savez)(handle, **arrays)
    os.replace(tmp, path)


def _load(path: Path) -> dict[str, np.ndarray]:
    try:
        with np.load(path) as data:
            arrays = {key: data[key] for key in data.files}
    except FileNotFoundError:
        raise DataError(f"{path} does not exist") from None
    except (OSError, ValueError, EOFError):
        raise DataError(f"{path} is not a positions file (a .npz written by `distill positions`)") from None
    missing = {"boards", "targets", "games", "rng", "seed", "student", "teacher"} - arrays.keys()
    if missing:
        raise DataError(f"{path} is not a positions file (no {', '.join(sorted(missing))})")
    return arrays


def _made_with(data: dict[str, np.ndarray]) -> tuple[str, str, int, int, int, int, str]:
    """What a positions file's job was run with: student, teacher, seed, near misses, teacher ply,
    teacher rollout trials (0: the teacher searched), the kind of positions kept ("all")."""
    return (str(data["student"]), str(data["teacher"]), int(data["seed"]), int(data.get("near_misses", 0)),
            int(data.get("teacher_ply", 2)), int(data.get("teacher_rollout", 0)), str(data.get("only", "all")))


def identify(path: str | Path) -> str:
    """The file's name and the start of its SHA-256: names a model wherever it is kept, and
    records no folder of the machine that made it."""
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return f"{Path(path).name} (sha256 {digest[:16]})"


def positions(student: Path, teacher: str, games: int, seed: int, out: Path, chunk: int,
              most_near_misses: int = 0, teacher_ply: int = 2, teacher_rollout: int = 0,
              only: str = "all") -> None:
    """Record and value positions, `chunk` games at a time, resuming from `out` if it exists;
    with most_near_misses > 0, also up to that many of the student's near misses a position
    (training.distill.near_misses); the teacher searches at teacher_ply (2 or 3), or with
    teacher_rollout > 0 rolls each position out that many trials (engine.rollout.targets).
    only="backgames" keeps the back-game positions alone (training.distill.holds_back_game),
    only="cubewindow" a share of those where cube actions are decided (training.distill.in_cube_window),
    only="disputed" those whose teacher's 1-ply and 2-ply values differ most (training.distill.disputed)."""
    net = load_checkpoint(student).net
    evaluator = load_network(teacher)
    student_evaluator = NetworkEvaluator(net)
    student_id, teacher_id = identify(student), identify(teacher)
    if out.exists():
        data = _load(out)
        made_with = _made_with(data)
        if made_with != (student_id, teacher_id, seed, most_near_misses, teacher_ply, teacher_rollout, only):
            raise DataError(f"{out} was made with student, teacher, seed, near misses, teacher ply, teacher "
                            f"rollout, only = {made_with}; "
                            f"pass the same files and settings, or another --out")
        boards, targets = data["boards"], data["targets"]
        done, rng = int(data["games"]), data["rng"].astype(np.uint64)
    else:
        boards, targets = np.zeros((0, 2, 25), dtype=np.int8), np.zeros((0, N_OUTPUTS), dtype=np.float32)
        done, rng = 0, seed_state(seed, 0)
    start, made = time.perf_counter(), 0
    while done < games:
        n = min(chunk, games - done)
        new = record_positions(net, n, rng)
        if most_near_misses:  # the fresh rolls: one stream per chunk, so a resume repeats them
            rolls = np.random.default_rng([seed, done])
            new = np.concatenate([new, near_misses(new, student_evaluator, most_near_misses, rolls)])
        if only == "backgames":
            new = new[holds_back_game(new)]
        elif only == "cubewindow":  # its own stream, so a resume draws the same picks
            new = new[in_cube_window(new, student_evaluator, np.random.default_rng([seed, done, 1]))]
        elif only == "disputed":
            new = new[disputed(new, evaluator)]
        made += len(new)
        boards = np.concatenate([boards, new])
        values = (rollout_targets(new, evaluator, teacher_rollout, seed=seed) if teacher_rollout
                  else search_targets(new, evaluator, teacher_ply))
        targets = np.concatenate([targets, values])
        done += n
        _save(out, boards=boards, targets=targets, games=np.int64(done), rng=rng,
              seed=np.int64(seed), student=np.str_(student_id), teacher=np.str_(teacher_id),
              near_misses=np.int64(most_near_misses), teacher_ply=np.int64(teacher_ply),
              teacher_rollout=np.int64(teacher_rollout), only=np.str_(only))
        rate = made / max(time.perf_counter() - start, 1e-9)
        shown = f"{rate:,.0f}" if rate >= 10 else f"{rate:.2f}"  # a rollout teacher makes under one a second
        print(f"{done:,} games, {len(boards):,} positions -> {out} ({shown} positions/s this run)", flush=True)


def fit_files(student: Path, data_paths: list[Path], out: Path, epochs: int, lr: float, seed: int,
              lr_end: float | None = None, validate: Path | None = None) -> None:
    """Fit the student to the files' targets and save it, with the fit's record in its trainer state.

    validate: a positions file of other games that measures the fit (none of the data is held out).
    """
    ckpt = load_checkpoint(student)
    arrays = [_load(p) for p in data_paths]
    boards = np.concatenate([a["boards"] for a in arrays])
    targets = np.concatenate([a["targets"] for a in arrays])
    validation = None
    if validate is not None:
        if validate.resolve() in {p.resolve() for p in data_paths}:
            raise DataError(f"{validate} is also a data file: validate on positions of other games")
        held = _load(validate)
        validation = (held["boards"], held["targets"])
    result = fit(ckpt.net, boards, targets, epochs, lr, seed=seed, lr_end=lr_end, validation=validation)
    rollouts = sorted({int(a.get("teacher_rollout", 0)) for a in arrays})  # trials; 0: searched
    record = {"data": [p.name for p in data_paths], "teachers": sorted({str(a["teacher"]) for a in arrays}),
              "near_misses": sorted({int(a.get("near_misses", 0)) for a in arrays}),
              "teacher_plies": sorted({int(a.get("teacher_ply", 2)) for a in arrays}),
              **({"teacher_rollouts": rollouts} if any(rollouts) else {}),
              "positions": len(boards), "epochs": epochs, "lr": lr,
              **({} if lr_end is None else {"lr_end": lr_end}),
              **({} if validate is None else {"validate": validate.name}), "seed": seed, "val_mse": result.val_mse,
              "val_trimmed": result.val_trimmed}
    save_checkpoint(out, Checkpoint(ckpt.net, ckpt.config, ckpt.games_trained, ckpt.state_with("distilled", record)))
    held = f"{result.held_out:,} of {validate}" if validate is not None else f"{result.held_out:,} held out"
    print(f"{len(boards):,} positions ({held}), held-out MSE {_trace(result.val_mse)}, "
          f"without the worst {TRIM:.1%} {_trace(result.val_trimmed)}; -> {out}")


def slice_after(full: Path, committed: list[Path], out: Path) -> tuple[int, int]:
    """Write the positions of `full` that follow its committed slices (given in order), with its
    job's state, compressed; return (positions written, positions before them).

    Each slice must continue the job position by position, so the slices together are the whole
    file, and each resumes the job when copied to its --out: `positions` keeps only the state."""
    if out.resolve() in {p.resolve() for p in [full, *committed]}:
        raise DataError(f"{out} is an input: write the slice to a new file")
    data = _load(full)
    start = 0
    for path in committed:
        part = _load(path)
        n = len(part["boards"])
        if (_made_with(part) != _made_with(data) or int(part["games"]) > int(data["games"])
                or not np.array_equal(part["boards"], data["boards"][start:start + n])
                or not np.array_equal(part["targets"], data["targets"][start:start + n])):
            raise DataError(f"{path} does not continue {full} from position {start:,}: "
                            f"pass the slices of this job, in order")
        start += n
    if start == len(data["boards"]):
        raise DataError(f"{full} has no positions after its {start:,} in the slices")
    _save(out, compressed=True, **{**data, "boards": data["boards"][start:], "targets": data["targets"][start:]})
    return len(data["boards"]) - start, start


def split_latest(files: list[Path], share: float, out: Path) -> list[Path]:
    """Hold out each file's latest positions: write all but its last `share` beside it as
    STEM-train.npz, and the last `share` of every file together to `out`, a validation file of
    other games for `fit --validate` (a random share of a file shares games with the rest).
    Returns the -train paths. A file's rows are in the order its games were played."""
    if not 0 < share < 1:
        raise DataError("--share must lie between 0 and 1")
    heads = [p.with_name(p.stem + "-train.npz") for p in files]
    if out.resolve() in {p.resolve() for p in [*files, *heads]}:
        raise DataError(f"{out} is an input or a -train file: write the validation file to a new name")
    tails = []
    for path, head in zip(files, heads):
        data = _load(path)
        cut = int(len(data["boards"]) * (1 - share))
        if not 0 < cut < len(data["boards"]):
            raise DataError(f"{path} has too few positions ({len(data['boards']):,}) to split")
        _save(head, **{**data, "boards": data["boards"][:cut], "targets": data["targets"][:cut]})
        tails.append({**data, "boards": data["boards"][cut:], "targets": data["targets"][cut:]})
    _save(out, **{**tails[0], "boards": np.concatenate([t["boards"] for t in tails]),
                  "targets": np.concatenate([t["targets"] for t in tails])})
    return heads


def _trace(errors: list[float]) -> str:
    return " -> ".join(f"{m:.3g}" for m in errors)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    pos = sub.add_parser("positions", help="self-play positions of the student, valued by the teacher's 2-ply")
    pos.add_argument("student", type=Path, help="a one-net checkpoint: whose 1-ply games give the positions")
    pos.add_argument("--teacher", default=str(DEFAULT_MODEL),
                     help="a net or ensemble; its 2-ply gives the targets (default: the shipped model)")
    pos.add_argument("--games", type=int, required=True)
    pos.add_argument("--seed", type=int, default=1)
    pos.add_argument("--chunk", type=int, default=500, help="games between saves")
    pos.add_argument("--out", type=Path, required=True)
    pos.add_argument("--near-misses", type=int, default=0, metavar="K",
                     help="also value up to K of the student's near misses a position: plays of a fresh "
                          "roll ranked just below its best (default 0: its chosen plays only)")
    pos.add_argument("--teacher-ply", type=int, choices=(1, 2, 3), default=2,
                     help="the teacher's search depth (default 2; 3 is about 50 times slower; 1, its "
                          "own evaluation, to compress it into a smaller student)")
    pos.add_argument("--teacher-rollout", type=int, default=0, metavar="TRIALS",
                     help="value each position by the teacher's rollout of TRIALS trials (1-ply, variance "
                          "reduction, full games) instead of its search (default 0: search)")
    pos.add_argument("--only", choices=("all", "backgames", "cubewindow", "disputed"), default="all",
                     help="keep every position (default), the back games alone (a side holding two "
                          "points in the opponent's home board, 30 pips or more behind), a quarter of "
                          "the contact positions whose favourite has a P(win) of 0.6 to 0.95 (the student's), "
                          "or those whose teacher's 1-ply and 2-ply equities differ by 0.025 or more")
    fitp = sub.add_parser("fit", help="fit the student to positions files; write a new checkpoint")
    fitp.add_argument("student", type=Path)
    fitp.add_argument("data", type=Path, nargs="+")
    fitp.add_argument("--epochs", type=int, default=6)
    fitp.add_argument("--lr", type=float, default=3e-4, help="Adam's step size")
    fitp.add_argument("--lr-end", type=float, default=None,
                      help="decay the step size linearly to this by the fit's end (default: constant)")
    fitp.add_argument("--seed", type=int, default=0, help="the held-out split and the batch order")
    fitp.add_argument("--validate", type=Path, default=None, metavar="FILE",
                      help="measure the fit on this positions file of other games instead of "
                           "holding out a random tenth of the data")
    fitp.add_argument("--out", type=Path, required=True)
    slicep = sub.add_parser("slice", help="a job's positions after its committed slices, as a resumable file")
    slicep.add_argument("full", type=Path, help="the job's --out file")
    slicep.add_argument("--after", type=Path, nargs="*", default=[], metavar="SLICE",
                        help="the job's earlier slices, in order")
    slicep.add_argument("--out", type=Path, required=True)
    splitp = sub.add_parser("split", help="hold out each file's latest games as one validation file")
    splitp.add_argument("files", type=Path, nargs="+", help="positions files; each keeps all but its tail as STEM-train.npz")
    splitp.add_argument("--share", type=float, default=0.08, help="the share of each file held out (default 0.08)")
    splitp.add_argument("--out", type=Path, required=True, help="the validation file")
    args = parser.parse_args(argv)
    try:
        if args.command == "positions":
            if args.games < 1 or args.chunk < 1 or args.near_misses < 0 or args.teacher_rollout < 0:
                raise DataError("--games and --chunk must be at least 1, --near-misses and --teacher-rollout "
                                "at least 0")
            # The search values a few dozen boards at a time, too few to share out: two 3-ply jobs on two
            # cores made 8-9 positions/s each on one thread, 1-2 with torch's default pool (measured 2026-12-04).
            torch.set_num_threads(1)
            positions(args.student, args.teacher, args.games, args.seed, args.out, args.chunk, args.near_misses,
                      args.teacher_ply, args.teacher_rollout, args.only)
        elif args.command == "split":
            heads = split_latest(args.files, args.share, args.out)
            print(f"-> {', '.join(str(h) for h in heads)} and {args.out}")
        elif args.command == "slice":
            written, before = slice_after(args.full, args.after, args.out)
            print(f"{written:,} positions after the first {before:,} -> {args.out}")
        else:
            if args.epochs < 0 or args.lr <= 0 or (args.lr_end is not None and args.lr_end < 0):
                raise DataError("--epochs must be at least 0, --lr positive and --lr-end not negative")
            fit_files(args.student, args.data, args.out, args.epochs, args.lr, args.seed, args.lr_end,
                      args.validate)
    except (CheckpointError, DataError, ValueError) as err:
        print(f"distill: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        again = "run the same command again to resume" if args.command == "positions" else "nothing written"
        print(f"distill: stopped; {again}", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
