"""One command from nothing to a model: a recipe's stages as resumable, recorded steps.

The steps, in order: each member's TD(lambda) stages (training.trainer), the first
ensemble, then per distillation round: widening (if asked), positions valued by the
teacher (the last kept ensemble's search), a fit per member, the round's ensemble and its
gate against the last kept one; last, the final model, its check against random and
pubeval, and DIR/MODEL_CARD.md.

Resumable anywhere: a step whose artefacts the manifest records (with their SHA-256) is
skipped; a step in progress resumes from its own files (the trainer's checkpoint, the
positions shards already written); a fit, an ensemble and a gate are redone whole, and
since every seed is derived from the recipe's, a rerun after `kill -9` ends with the
same weights as an uninterrupted run. DIR/manifest.json records, per step, its
artefacts' digests, the command, its seed and its wall time.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from engine.errors import ConfigError, TdgammonError
from engine.pit.stats import ci95
from models.checkpoint import Checkpoint, load_checkpoint, load_members, save_checkpoint, save_ensemble
from training.recipe_config import Recipe, Round
from training.recipe_tasks import ModelBlob, derived_seed, gate_task, pit_task, positions_task

MANIFEST = "manifest.json"
GATE_SHARD = 25       # gate positions per task
PIT_SHARD = 50        # pit games per task (even: whole duplicate pairs)
TRAIN, VALIDATION = 0, 1   # the two kinds of positions shards, in their seeds


def sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, path)


class Manifest:
    """DIR/manifest.json: each finished step's artefacts (relative path -> SHA-256), command,
    seed, wall time and results. A step counts as done only while its files still match."""

    def __init__(self, out: Path, recipe: Recipe) -> None:
        self.out, self.path = out, out / MANIFEST
        recipe_digest = sha256(recipe.path)
        if self.path.exists():
            try:
                self.data = json.loads(self.path.read_text())
            except ValueError:
                raise TdgammonError(f"{self.path} is not a manifest (not JSON): use another --out") from None
            if self.data.get("recipe_sha256") != recipe_digest:
                raise TdgammonError(f"{out} holds a run of another recipe "
                                    f"({self.data.get('recipe', '?')}): use another --out")
        else:
            self.data = {"recipe": recipe.path.name, "recipe_sha256": recipe_digest, "seed": recipe.seed,
                         "steps": {}}

    def done(self, step: str) -> dict | None:
        entry = self.data["steps"].get(step)
        if entry is None:
            return None
        for rel, digest in entry["artefacts"].items():
            path = self.out / rel
            if not path.exists() or sha256(path) != digest:
                return None
        return entry

    def record(self, step: str, artefacts: list[Path], seed: int, seconds: float, **results: Any) -> dict:
        entry = {"artefacts": {str(p.relative_to(self.out)): sha256(p) for p in artefacts},
                 "command": f"tdgammon recipe {self.data['recipe']} --out DIR  # step {step}",
                 "seed": seed, "seconds": round(seconds, 3), **results}
        self.data["steps"][step] = entry
        _write_json(self.path, self.data)
        return entry


@dataclass
class Kept:
    """The last ensemble the gates kept, and its members' one-net files."""

    model: Path
    members: list[Path]
    round: int


class RecipeRun:
    def __init__(self, recipe: Recipe, out: Path, executor, progress: bool = True) -> None:
        self.recipe, self.out, self.executor, self.progress = recipe, Path(out), executor, progress
        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise TdgammonError(f"cannot use {out} as the recipe's directory: {err.strerror}") from None
        self.manifest = Manifest(self.out, recipe)
        self.total_steps = self._count_steps()
        self.steps_done = 0
        self.started = time.perf_counter()
        self.writer = None

    # -- bookkeeping ----------------------------------------------------------------------
    def _count_steps(self) -> int:
        r = self.recipe
        per_round = [int(rnd.widen > 0) + 1 + len(r.members) + 2 for rnd in r.rounds]
        return sum(len(m.stages) for m in r.members) + 1 + sum(per_round) + 2

    def _scalars(self, values: dict[str, float], step: int) -> None:
        if self.writer is None:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(str(self.out / "tensorboard"))
        for name, value in values.items():
            self.writer.add_scalar(name, value, step)
        self.writer.flush()

    def _step(self, name: str, fn, seed: int) -> dict:
        """Run step `name` unless the manifest has it; fn() returns (artefacts, results)."""
        entry = self.manifest.done(name)
        if entry is None:
            start = time.perf_counter()
            artefacts, results = fn()
            entry = self.manifest.record(name, artefacts, seed, time.perf_counter() - start, **results)
            verb = "done"
        else:
            verb = "already done"
        self.steps_done += 1
        elapsed = time.perf_counter() - self.started
        left = self.total_steps - self.steps_done
        eta = f", about {_duration(elapsed / self.steps_done * left)} to go" if left else ""
        tqdm.write(f"recipe {self.recipe.name}: step {self.steps_done}/{self.total_steps} {name} {verb} "
                   f"({_duration(elapsed)} this run{eta})")
        return entry

    # -- the steps ------------------------------------------------------------------------
    def run(self) -> dict:
        import torch

        torch.set_num_threads(1)   # one thread: the fits are exactly reproducible
        try:
            members = [self._td_member(i) for i in range(len(self.recipe.members))]
            kept = Kept(self._ensemble("round0/ensemble", members, self.out / "rounds" / "0" / "model.pt"),
                        members, 0)
            for r, rnd in enumerate(self.recipe.rounds, start=1):
                kept = self._round(r, rnd, kept)
            self._screen(kept)
            return self._finish(kept)
        finally:
            if self.writer is not None:
                self.writer.close()

    def _td_member(self, i: int) -> Path:
        from training.trainer import CHECKPOINT_NAME, Trainer

        previous: Path | None = None
        for j, stage in enumerate(self.recipe.members[i].stages):
            run_dir = self.out / "members" / f"m{i}" / f"s{j}"
            own = run_dir / CHECKPOINT_NAME

            def train(stage=stage, run_dir=run_dir, own=own, previous=previous):
                resume = own if own.exists() else previous
                Trainer(stage.config, run_dir, resume, stage.games, self.progress).run()
                return [own], {"config": stage.source, "games": stage.games}

            self._step(f"td/m{i}/s{j}", train, stage.config.seed)
            previous = own
        return previous

    def _ensemble(self, name: str, members: list[Path], path: Path) -> Path:
        def build():
            path.parent.mkdir(parents=True, exist_ok=True)
            save_ensemble(path, [load_checkpoint(m) for m in members])
            return [path], {"members": [str(m.relative_to(self.out)) for m in members]}

        self._step(name, build, self.recipe.seed)
        return path

    def _round(self, r: int, rnd: Round, kept: Kept) -> Kept:
        folder = self.out / "rounds" / str(r)
        folder.mkdir(parents=True, exist_ok=True)
        students = kept.members
        if rnd.widen:
            students = self._widen(r, rnd.widen, students, folder)
        data, validation = self._positions(r, rnd, students, kept.model, folder)
        fitted = [self._fit(r, rnd, i, student, data, validation, folder) for i, student in enumerate(students)]
        candidate = self._ensemble(f"round{r}/ensemble", fitted, folder / "candidate.pt")
        verdict = self._gate(r, candidate, kept.model, validation)
        return Kept(candidate, fitted, r) if verdict["kept"] else kept

    def _widen(self, r: int, hidden: int, students: list[Path], folder: Path) -> list[Path]:
        from training.widen import widen_checkpoint

        outs = [folder / f"widened-m{i}.pt" for i in range(len(students))]

        def widen_all():
            for i, (student, out) in enumerate(zip(students, outs)):
                ckpt = load_checkpoint(student)
                if hidden <= ckpt.net.n_hidden:
                    raise ConfigError(f"round {r}: widen = {hidden} must exceed member {i}'s "
                                      f"{ckpt.net.n_hidden} hidden units")
                save_checkpoint(out, widen_checkpoint(ckpt, hidden, derived_seed(self.recipe.seed, r, i)))
            return outs, {"hidden": hidden}

        self._step(f"round{r}/widen", widen_all, self.recipe.seed)
        return outs

    def _positions(self, r: int, rnd: Round, students: list[Path], teacher: Path,
                   folder: Path) -> tuple[list[Path], list[Path]]:
        """The round's positions shards: (training shards, validation shards), in a fixed order."""
        players = rnd.players or tuple(range(len(students)))
        plan = []   # (path, member, kind, shard, games)
        for kind, total, prefix in ((TRAIN, rnd.games, "p"), (VALIDATION, rnd.validation_games, "v")):
            for m in players:
                for s in range(math.ceil(total / rnd.shard_games)):
                    games = min(rnd.shard_games, total - s * rnd.shard_games)
                    plan.append((folder / "data" / f"{prefix}-m{m}-{s:04d}.npz", m, kind, s, games))

        def make():
            (folder / "data").mkdir(exist_ok=True)
            todo = [p for p in plan if not p[0].exists()]
            blobs = {m: ModelBlob.read(students[m]) for m in players}
            teacher_blob = ModelBlob.read(teacher)
            jobs = [(blobs[m], teacher_blob, games, derived_seed(self.recipe.seed, r, m, s, kind),
                     rnd.near_misses, rnd.teacher_ply) for _, m, kind, s, games in todo]
            bar = tqdm(total=len(plan), initial=len(plan) - len(todo), unit="shard", disable=not self.progress,
                       desc=f"round {r} positions ({rnd.teacher_ply}-ply teacher)", dynamic_ncols=True)
            for (path, *_), (boards, targets) in zip(todo, self.executor.map(positions_task, jobs)):
                _save_npz(path, boards=boards, targets=targets)
                bar.update(1)
            bar.close()
            positions = sum(len(np.load(p[0])["boards"]) for p in plan)
            return [p[0] for p in plan], {"positions": positions, "teacher": teacher.name,
                                         "teacher_ply": rnd.teacher_ply, "shards": len(plan)}

        self._step(f"round{r}/positions", make, derived_seed(self.recipe.seed, r))
        return ([p[0] for p in plan if p[2] == TRAIN], [p[0] for p in plan if p[2] == VALIDATION])

    def _fit(self, r: int, rnd: Round, i: int, student: Path, data: list[Path], validation: list[Path],
             folder: Path) -> Path:
        from training.distill import fit

        out = folder / f"m{i}.pt"
        seed = derived_seed(self.recipe.seed, r, i, 99)

        def run_fit():
            boards, targets = _concat(data)
            val = _concat(validation)
            ckpt = load_checkpoint(student)
            result = fit(ckpt.net, boards, targets, rnd.epochs, rnd.lr, seed=seed,
                         lr_end=rnd.lr_end, validation=val)
            record = {"round": r, "positions": len(boards), "epochs": rnd.epochs, "lr": rnd.lr,
                      "lr_end": rnd.lr_end, "teacher_ply": rnd.teacher_ply, "seed": seed,
                      "val_mse": result.val_mse, "val_trimmed": result.val_trimmed}
            save_checkpoint(out, Checkpoint(ckpt.net, ckpt.config, ckpt.games_trained,
                                            ckpt.state_with("distilled", record)))
            self._scalars({f"distill/val_mse_m{i}": result.val_mse[-1]}, r)
            return [out], {"val_mse": [result.val_mse[0], result.val_mse[-1]], "positions": len(boards)}

        self._step(f"round{r}/fit/m{i}", run_fit, seed)
        return out

    def _gate(self, r: int, candidate: Path, previous: Path, validation: list[Path]) -> dict:
        """Keep the round's ensemble only if its 1-ply plays gain equity over the last kept
        one's (judged by the last kept one's search) and the pit does not show it worse."""
        gate = self.recipe.gate
        seed = derived_seed(self.recipe.seed, r, 77)

        def judge():
            boards, _ = _concat(validation)
            rng = np.random.default_rng(seed)
            pick = rng.permutation(len(boards))[:gate.positions]
            boards, dice = boards[pick], rng.integers(1, 7, size=(len(pick), 2))
            new, old = ModelBlob.read(candidate), ModelBlob.read(previous)
            jobs = [(new, old, boards[k:k + GATE_SHARD], dice[k:k + GATE_SHARD], gate.judge_ply)
                    for k in range(0, len(boards), GATE_SHARD)]
            gains = np.concatenate(list(tqdm(self.executor.map(gate_task, jobs), total=len(jobs),
                                             desc=f"round {r} gate: judged plays", unit="shard",
                                             disable=not self.progress, dynamic_ncols=True)))
            ppg, interval = _ppg(self._pit(new, old, gate.pit_games, seed, f"round {r} gate: pit"))
            gain, gain_ci = 1000 * float(gains.mean()), 1000 * ci95(gains, single=math.inf)
            kept = gain > 0 and ppg + interval >= 0
            verdict = {"kept": kept, "gain_mpd": round(gain, 3), "gain_ci95": round(gain_ci, 3),
                       "plays_differ": int((gains != 0).sum()), "positions": len(gains),
                       "judge": f"{previous.relative_to(self.out)} at {gate.judge_ply}-ply", "pit_ppg": round(ppg, 4),
                       "pit_ci95": round(interval, 4), "pit_games": gate.pit_games}
            path = self.out / "rounds" / str(r) / "gate.json"
            _write_json(path, verdict)
            self._scalars({"gate/gain_mpd": gain, "gate/pit_ppg": ppg, "gate/kept": float(kept)}, r)
            tqdm.write(f"round {r} gate: {'KEPT' if kept else 'REJECTED'}: the round's 1-ply plays gain "
                       f"{gain:+.2f} ± {gain_ci:.2f} mEMG a decision ({verdict['plays_differ']} of "
                       f"{len(gains)} differ; judge {verdict['judge']}), pit {ppg:+.3f} ± {interval:.3f} ppg "
                       f"over {gate.pit_games} games")
            return [path], verdict

        return self._step(f"round{r}/gate", judge, seed)

    def _pit(self, a: ModelBlob, b: ModelBlob | str, games: int, seed: int, desc: str) -> np.ndarray:
        """A's points in each game of a 1-ply duplicate-dice pit of `games` games (rounded up to pairs)."""
        games += games % 2
        jobs = [(a, b, seed, lo, min(lo + PIT_SHARD, games)) for lo in range(0, games, PIT_SHARD)]
        return np.concatenate(list(tqdm(self.executor.map(pit_task, jobs), total=len(jobs), desc=desc,
                                        unit="shard", disable=not self.progress, dynamic_ncols=True)))

    def _screen(self, kept: Kept) -> dict:
        """The final model's screen (training.screen), as DIR/model.screen.pt: models.loader
        plays it beside DIR/model.pt (engine.search.screened_values)."""
        cfg, seed = self.recipe.screen, derived_seed(self.recipe.seed, 1001)
        path = self.out / "model.screen.pt"

        def fit():
            import torch

            from engine.search import SCREEN_KEEP
            from models.network import TDNet
            from training.screen import fit_screen

            torch.manual_seed(seed)
            net = TDNet(cfg.hidden)
            report = fit_screen(net, kept.model, cfg.games, cfg.positions, cfg.held_out, cfg.epochs, cfg.lr, seed)
            save_checkpoint(path, Checkpoint(net, trainer_state={"screen": [{"round": kept.round, "seed": seed}]}))
            return [path], {"plays": report.plays, "keep": SCREEN_KEEP,
                            "best_kept": round(report.kept_share[SCREEN_KEEP], 4),
                            "lost_per_roll": round(report.loss_per_roll[SCREEN_KEEP], 6)}

        return self._step("screen", fit, seed)

    def _finish(self, kept: Kept) -> dict:
        final = self.out / "model.pt"
        seed = derived_seed(self.recipe.seed, 1000)

        def check():
            shutil.copyfile(kept.model, final)
            blob, games = ModelBlob.read(final), self.recipe.gate.check_games
            results = {"from_round": kept.round}
            for opponent in ("random", "pubeval"):
                spec = f"random:{seed}" if opponent == "random" else opponent
                points = self._pit(blob, spec, games, seed, f"final model vs {opponent}")
                ppg, interval = _ppg(points)
                results[opponent] = {"ppg": round(ppg, 4), "ci95": round(interval, 4),
                                     "win_rate": round(float((points > 0).mean()), 4), "games": len(points)}
            card = self.out / "MODEL_CARD.md"
            card.write_text(model_card(self.recipe, self.manifest.data, results, load_members(final), sha256(final)))
            return [final, card], results

        return self._step("final", check, seed)


def _save_npz(path: Path, **arrays: np.ndarray) -> None:
    """np.savez to PATH.tmp, then os.replace: a kill never leaves half a shard."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as handle:
        np.savez(handle, **arrays)
    os.replace(tmp, path)


def _ppg(points: np.ndarray) -> tuple[float, float]:
    """ppg and its 95% interval over duplicate pairs (the independent unit)."""
    return float(points.mean()), ci95(points.reshape(-1, 2).mean(axis=1), single=math.inf)


def _concat(paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    boards, targets = [], []
    for path in paths:
        with np.load(path) as data:
            boards.append(data["boards"])
            targets.append(data["targets"])
    return np.concatenate(boards), np.concatenate(targets)


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"


def model_card(recipe: Recipe, manifest: dict, results: dict, members: list[Checkpoint], digest: str) -> str:
    """DIR/MODEL_CARD.md, in the form of models/MODEL_CARD.md, from the manifest and the gates."""
    steps = manifest["steps"]
    lines = [f"# Model card: `model.pt` of recipe `{recipe.path.name}`", "",
             f"Made by `tdgammon recipe {recipe.path.name}` (seed {recipe.seed}) from random weights, by "
             "TD(lambda) self-play and search distillation with this engine's own nets and search only. "
             f"File SHA-256 `{digest}`"
             " (see manifest.json for every artefact).", "", "## What it is", "",
             f"- {len(members)} network(s), played as the mean of their five outputs:", "",
             "  | member | inputs | hidden units | self-play games | distillation rounds kept |",
             "  |---|---|---|---|---|"]
    for i, m in enumerate(members):
        lines.append(f"  | {i} | {m.net.hidden.in_features} | {m.net.n_hidden} | {m.games_trained:,} | "
                     f"{len(m.trainer_state.get('distilled', []))} |")
    screen = steps.get("screen")
    if screen:
        lines += ["", f"- Its screen, `model.screen.pt`: a fresh {recipe.screen.hidden}-unit net on Tesauro's 198 "
                  f"inputs fitted to the model's own values of {screen['plays']:,} plays of its self-play; on other "
                  f"games the model's best play is among its {screen['keep']} best on {100 * screen['best_kept']:.1f}% "
                  f"of rolls ({1000 * screen['lost_per_roll']:.2f} mEMG lost a roll). Searches value only each "
                  f"reply roll's {screen['keep']} best by it."]
    lines += ["", "## The recipe", ""]
    for i, member in enumerate(recipe.members):
        chain = ", then ".join(f"`{s.source}` to {s.games:,} games" for s in member.stages)
        lines.append(f"- member {i}: TD(lambda) self-play, {chain}.")
    for r, rnd in enumerate(recipe.rounds, start=1):
        gate = steps.get(f"round{r}/gate", {})
        pos = steps.get(f"round{r}/positions", {})
        verdict = "kept" if gate.get("kept") else "rejected"
        widen = f"widened to {rnd.widen} units, " if rnd.widen else ""
        lines.append(f"- round {r}: {widen}{pos.get('positions', 0):,} positions valued at {rnd.teacher_ply}-ply, "
                     f"{rnd.epochs} epochs; gate: {gate.get('gain_mpd', 0):+.2f} ± {gate.get('gain_ci95', 0):.2f} "
                     f"mEMG a decision (judge {gate.get('judge', '?')}), pit {gate.get('pit_ppg', 0):+.3f} ± "
                     f"{gate.get('pit_ci95', 0):.3f} ppg: **{verdict}**.")
    seconds = sum(s.get("seconds", 0.0) for s in steps.values())
    lines += ["", "## Results", "", "1-ply, duplicate dice, 95% intervals over pairs:", "",
              "| opponent | games | ppg | win rate |", "|---|---|---|---|"]
    for opponent in ("random", "pubeval"):
        res = results[opponent]
        lines.append(f"| {opponent} | {res['games']:,} | {res['ppg']:+.3f} ± {res['ci95']:.3f} | "
                     f"{100 * res['win_rate']:.1f}% |")
    lines += ["", "## Training data", "",
              "Self-play only: every position comes from the members' own games and every target from the "
              "game's result (TD) or this engine's own search with its own nets. No gnubg evaluation, rollout "
              "or game.", "", f"Compute: {_duration(seconds)} of wall time over {len(steps)} steps.", ""]
    return "\n".join(lines)
