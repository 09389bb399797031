"""gnubg's own analysis of a few matches: the yardstick for `tdgammon analyse`.

    python -m scripts.lab.gnubg_analysis generate [--out-dir tests/data]
    python -m scripts.lab.gnubg_analysis compare [--ply 2] [--data-dir tests/data]

`generate` has gnubg play a 7-point match and a 12-game money session between two noisy
gnubg 0-ply players (noise 0.03 and 0.06: errors of every size and plenty of cube action),
exports each as .mat and saves it as .sgf, analyses it at gnubg's 2-ply (our 3-ply),
cubeful, and stores, per match, the .mat and .sgf files and a JSON of gnubg's
per-decision verdicts (position, dice, kind: checker / cube / take, gnubg's error in
normalised equity: in a match gnubg's MWC are converted by gnubg's own mwc2eq) and its
per-player checker error rates. A match whose JSON exists is skipped: the run resumes.
gnubg is a yardstick only: nothing here is trained on or fitted to.

`compare` runs our analysis on the stored .mat files and prints the agreement: each
player's checker error rate against gnubg's, the share of plays gnubg values 0.08 or
worse that we mark at least doubtful, and the Spearman rank correlation of the
per-decision errors, for checker plays and for cube decisions (the roller's and the
answer), and each player's total cube error, gnubg's and ours.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

GNUBG = "/usr/games/gnubg"
ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = ROOT / "tests" / "data"
NAMES = ("alice", "bob")
NOISE = (0.03, 0.06)   # gnubg's evaluation noise of each player: bob is the weaker
ANALYSIS_PLIES = 2     # gnubg's 2-ply (our 3-ply)
MATCHES = ((1, 7, 1), (2, 0, 12))   # (seed, match length (0 = money session), games of a session)
BIG_ERROR = 0.08

_SCRIPT = r"""
import gnubg, json
seed, length, games, noise, names, plies = {seed}, {length}, {games}, {noise}, {names}, {plies}
mat, sgf = {mat!r}, {sgf!r}
gnubg.command("set rng mersenne")
gnubg.command(f"set seed {{seed}}")
gnubg.command("set jacoby off")
gnubg.command("set beavers 0")
for p in (0, 1):
    gnubg.command(f"set player {{p}} gnubg")
    for part in ("chequerplay", "cubedecision"):
        gnubg.command(f"set player {{p}} {{part}} evaluation plies 0")
        gnubg.command(f"set player {{p}} {{part}} evaluation noise {{noise[p]}}")
gnubg.command("set automatic game off")
gnubg.command(f"new match {{length}}" if length else "new session")   # plays the first game
for p in (0, 1):   # `new match` resets the names
    gnubg.command(f"set player {{p}} name {{names[p]}}")
played = 1
while (gnubg.match(analysis=0)["match-info"]["result"] == 0) if length else played < games:
    gnubg.command("new game")
    played += 1
gnubg.command(f"export match mat {{mat}}")
gnubg.command("analysis clear match")   # the players' own evaluations: not part of the record
gnubg.command(f"save match {{sgf}}")
for part in ("chequerplay", "cubedecision"):
    gnubg.command(f"set analysis {{part}} evaluation plies {{plies}}")
    gnubg.command(f"set analysis {{part}} evaluation cubeful on")
gnubg.command("analyse match")
m = gnubg.match(analysis=1, boards=1, statistics=1, verbose=0)
out = {{"players": {{}}, "decisions": []}}
names = {{k: v["name"] for k, v in m["match-info"].items() if k in ("X", "O")}}
for key, stats in m["stats"].items():
    mv, cube = stats["moves"], stats["cube"]
    out["players"][names[key]] = {{"unforced_moves": mv["unforced-moves"], "checker_error": mv["error-skill"],
        "checker_error_rate": 1000 * mv["error-skill"] / max(1, mv["unforced-moves"]),
        "cube_error": cube["error-skill"], "close_cube_decisions": cube["close-cube"]}}
side = {{"X": 0, "O": 1}}
crawford_seen = False
for g, game in enumerate(m["games"], start=1):
    last_double = None
    info = game["info"]
    score = (info["score-X"], info["score-O"])
    crawford = bool(length) and not crawford_seen and length - 1 in score
    crawford_seen = crawford_seen or crawford
    cube, owner = 1, -1
    for a in game["game"]:
        an = a.get("analysis") or {{}}
        if a["action"] == "take":
            cube, owner = 2 * cube, side[a["player"]]
        if a["action"] == "move" and "moves" in an and "imove" in an and len(an["moves"]) > 1:
            scores = [mv["score"] for mv in an["moves"]]
            out["decisions"].append({{"game": g, "kind": "checker", "player": names[a["player"]],
                "position": a["board"], "dice": a["dice"], "error": scores[0] - scores[an["imove"]]}})
        if a["action"] in ("move", "double") and "nd-cubeful-eq" in an:
            # gnubg's cubeful equities: normalised in money play, MWC in a match (made
            # normalised by gnubg's own mwc2eq); a pass is then worth 1 to the doubler.
            nd, dt, dp = an["nd-cubeful-eq"], an["dt-cubeful-eq"], 1.0
            if length:
                ci = gnubg.cubeinfo(cube, owner, side[a["player"]], length, score, int(crawford))
                nd, dt = gnubg.mwc2eq(nd, ci), gnubg.mwc2eq(dt, ci)
            proper = max(nd, min(dt, dp))
            played = min(dt, dp) if a["action"] == "double" else nd
            out["decisions"].append({{"game": g, "kind": "cube", "player": names[a["player"]],
                "position": a["board"], "dice": None, "error": proper - played,
                "doubled": a["action"] == "double"}})
            last_double = (a["board"], dt, dp) if a["action"] == "double" else None
        if a["action"] in ("take", "drop") and last_double is not None:
            board, dt, dp = last_double
            answer = dt if a["action"] == "take" else dp
            out["decisions"].append({{"game": g, "kind": "take", "player": names[a["player"]],
                "position": board, "dice": None, "error": answer - min(dt, dp),
                "taken": a["action"] == "take"}})
print("RESULT " + json.dumps(out))
"""


def generate(out_dir: Path, force: bool = False) -> None:
    """Play, export, save and analyse each of MATCHES with gnubg; write gnubg-analysis-N.{mat,sgf,json}.

    A match whose JSON exists is skipped unless force (the run resumes where it stopped)."""
    for seed, length, games in MATCHES:
        mat, sgf, verdicts = (out_dir / f"gnubg-analysis-{seed}.{ext}" for ext in ("mat", "sgf", "json"))
        if verdicts.exists() and not force:
            print(f"match {seed}: {verdicts} exists, skipped")
            continue
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
            fh.write(_SCRIPT.format(seed=seed, length=length, games=games, noise=NOISE, names=NAMES,
                                    plies=ANALYSIS_PLIES, mat=str(mat), sgf=str(sgf)))
        proc = subprocess.run([GNUBG, "-t", "-q", "-p", fh.name], capture_output=True, text=True, timeout=7200)
        Path(fh.name).unlink()
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
        if line is None:
            sys.exit(f"gnubg failed on match {seed}: {proc.stderr[-400:]}")
        result = json.loads(line[len("RESULT "):])
        result["settings"] = {"seed": seed, "match_length": length, "games": games, "players": "gnubg 0-ply",
                              "noise": dict(zip(NAMES, NOISE)),
                              "analysis": f"gnubg {ANALYSIS_PLIES}-ply (our {ANALYSIS_PLIES + 1}-ply), cubeful"}
        verdicts.write_text(json.dumps(result, indent=1) + "\n")
        print(f"match {seed}: {len(result['decisions'])} decisions -> {mat}")


def spearman(a, b) -> float:
    """Spearman's rank correlation (average ranks for ties)."""
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic)


CUBE_KINDS = ("cube", "take")
"""The roller's double / no double and the answer: together, the cube table."""


def decision_key(d: dict) -> tuple:
    """How a decision is matched between gnubg's verdicts and ours: game, kind, position, dice."""
    return d["game"], d["kind"], d["position"], tuple(d["dice"]) if d["dice"] else None


def agreement(ours: list[dict], gnubg: dict) -> dict:
    """Matched decisions (by game, kind, position, dice) and the agreement figures, for checker
    plays and for cube decisions (the roller's and the answer): how many matched, the Spearman
    rank correlation of the errors, gnubg's errors >= BIG_ERROR and how many of them we mark,
    and each player's total error over the matched decisions, gnubg's and ours."""
    mine = {decision_key(d): d for d in ours if d["kind"] in ("checker",) + CUBE_KINDS and not d["forced"]}
    out = {}
    for table, kinds in (("checker", ("checker",)), ("cube", CUBE_KINDS)):
        theirs = [g for g in gnubg["decisions"] if g["kind"] in kinds]
        pairs = [(g, mine[decision_key(g)]) for g in theirs if decision_key(g) in mine]
        if not pairs:
            continue
        errors = np.array([[g["error"], m["error"]] for g, m in pairs])
        big = [(g, m) for g, m in pairs if g["error"] >= BIG_ERROR]
        totals = {}
        for g, m in pairs:
            t = totals.setdefault(g["player"], [0.0, 0.0])
            t[0] += g["error"]
            t[1] += m["error"]
        out[table] = {"matched": len(pairs), "of_gnubg": len(theirs),
                      "spearman": spearman(errors[:, 0], errors[:, 1]) if len(pairs) > 2 else float("nan"),
                      "nonzero_gnubg": int((errors[:, 0] > 1e-6).sum()),
                      "nonzero_ours": int((errors[:, 1] > 1e-6).sum()),
                      "big_errors": len(big), "big_marked": sum(bool(m["mark"]) for _, m in big),
                      "totals": totals}
    return out


def compare(data_dir: Path, ply: int, out: Path | None = None, model: str | None = None) -> dict:
    """Our analysis of every stored match against gnubg's verdicts, by `model` (default: the
    shipped one); printed, returned, written to out."""
    from engine.analysis.grade import AnalysisSettings, analyse_match
    from engine.analysis.summary import summarise
    from engine.formats.matread import load_mat
    from models.loader import load_evaluator

    evaluator = load_evaluator(model)
    report, ours = {}, {}
    for path in sorted(data_dir.glob("gnubg-analysis-*.json")):
        gnubg = json.loads(path.read_text())
        record = load_mat(path.with_suffix(".mat"))
        decisions = analyse_match(record, evaluator, AnalysisSettings(ply=ply))
        players = {p.name: p for p in summarise(record, decisions)}
        rates = {name: (g["checker_error_rate"], players[name].checker_error_rate)
                 for name, g in gnubg["players"].items()}
        ours[path.stem] = [d.as_dict() for d in decisions]
        report[path.stem] = {"rates": rates, **agreement(ours[path.stem], gnubg)}
        print(f"{path.stem} (ours at {ply}-ply):")
        for name, (theirs, mine) in rates.items():
            print(f"  {name}: checker error rate gnubg {theirs:.1f}, ours {mine:.1f} mEMG/move "
                  f"({100 * (mine - theirs) / theirs:+.0f}%)")
        for kind in ("checker", "cube"):
            if kind in report[path.stem]:
                a = report[path.stem][kind]
                totals = ", ".join(f"{n} gnubg {t[0]:.3f} ours {t[1]:.3f}" for n, t in a["totals"].items())
                print(f"  {kind}: {a['matched']}/{a['of_gnubg']} matched, Spearman {a['spearman']:.2f}, "
                      f"non-zero errors gnubg {a['nonzero_gnubg']} ours {a['nonzero_ours']}, "
                      f"gnubg errors >= {BIG_ERROR}: {a['big_errors']}, of them marked by us: {a['big_marked']}; "
                      f"total error (EMG): {totals}")
        if out is not None:
            out.write_text(json.dumps({"ply": ply, "report": report, "decisions": ours}))
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    gen = sub.add_parser("generate")
    gen.add_argument("--out-dir", type=Path, default=DATA_DIR)
    gen.add_argument("--force", action="store_true", help="regenerate matches whose JSON exists")
    cmp_ = sub.add_parser("compare")
    cmp_.add_argument("--data-dir", type=Path, default=DATA_DIR)
    cmp_.add_argument("--ply", type=int, default=2)
    cmp_.add_argument("--out", type=Path, default=None, help="also write the report and our decisions as JSON")
    cmp_.add_argument("--model", default=None, help="the model that analyses (default: the shipped one)")
    args = parser.parse_args(argv)
    if args.what == "generate":
        generate(args.out_dir, args.force)
    else:
        compare(args.data_dir, args.ply, args.out, args.model)


if __name__ == "__main__":
    main()
