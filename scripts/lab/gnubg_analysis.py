"""gnubg's own analysis of a few matches: the yardstick for `tdgammon analyse`.

    python -m scripts.lab.gnubg_analysis generate [--out-dir tests/data]
    python -m scripts.lab.gnubg_analysis compare [--ply 2] [--data-dir tests/data]

`generate` has gnubg play short matches between two noisy gnubg 0-ply players (so there
are errors of every size and some cube action), exports each as .mat, analyses it with
gnubg 1-ply (our 2-ply) checker and cube play, and stores, per match, the .mat file and
a JSON of gnubg's per-decision verdicts (position, dice, kind, gnubg's error in
normalised equity) and its per-player checker error rates. gnubg is a yardstick only:
nothing here is trained on or fitted to.

`compare` runs our analysis on the stored .mat files and prints the agreement: each
player's checker error rate against gnubg's, the share of plays gnubg values 0.08 or
worse that we mark at least doubtful, and the Spearman rank correlation of the
per-decision errors, for checker plays and for cube decisions.
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
MATCHES = ((1, 5, 0.03), (2, 0, 0.04))   # (seed, match length (0 = money: one game), noise)
BIG_ERROR = 0.08

_SCRIPT = r'''
import gnubg, json
seed, length, noise, mat = {seed}, {length}, {noise}, {mat!r}
gnubg.command("set rng mersenne")
gnubg.command(f"set seed {{seed}}")
gnubg.command("set jacoby off")
for p in (0, 1):
    gnubg.command(f"set player {{p}} gnubg")
    for part in ("chequerplay", "cubedecision"):
        gnubg.command(f"set player {{p}} {{part}} evaluation plies 0")
        gnubg.command(f"set player {{p}} {{part}} evaluation noise {{noise}}")
gnubg.command(f"set automatic game {{'on' if length else 'off'}}")
gnubg.command(f"new match {{length}}" if length else "new session")
gnubg.command(f"export match mat {{mat}}")
for part in ("chequerplay", "cubedecision"):
    gnubg.command(f"set analysis {{part}} evaluation plies 1")
gnubg.command("analyse match")
m = gnubg.match(analysis=1, boards=1, statistics=1, verbose=0)
out = {{"players": {{}}, "decisions": []}}
names = {{k: v["name"] for k, v in m["match-info"].items() if k in ("X", "O")}}
for key, stats in m["stats"].items():
    mv = stats["moves"]
    out["players"][names[key]] = {{"unforced_moves": mv["unforced-moves"], "checker_error": mv["error-skill"],
        "checker_error_rate": 1000 * mv["error-skill"] / max(1, mv["unforced-moves"]),
        "cube_error": stats["cube"]["error-skill"], "close_cube_decisions": stats["cube"]["close-cube"]}}
for g, game in enumerate(m["games"], start=1):
    for a in game["game"]:
        an = a.get("analysis") or {{}}
        if a["action"] == "move" and "moves" in an and "imove" in an and len(an["moves"]) > 1:
            scores = [mv["score"] for mv in an["moves"]]
            out["decisions"].append({{"game": g, "kind": "checker", "player": names[a["player"]],
                "position": a["board"], "dice": a["dice"], "error": scores[0] - scores[an["imove"]]}})
        if a["action"] in ("move", "double") and "nd-cubeful-eq" in an:
            nd, dt = an["nd-cubeful-eq"], an["dt-cubeful-eq"]
            dp = 1.0
            proper = max(nd, min(dt, dp))
            played = min(dt, dp) if a["action"] == "double" else nd
            out["decisions"].append({{"game": g, "kind": "cube", "player": names[a["player"]],
                "position": a["board"], "dice": None, "error": proper - played,
                "doubled": a["action"] == "double"}})
print("RESULT " + json.dumps(out))
'''


def generate(out_dir: Path) -> None:
    """Play, export and analyse each of MATCHES with gnubg; write gnubg-analysis-N.{mat,json}."""
    for seed, length, noise in MATCHES:
        mat = out_dir / f"gnubg-analysis-{seed}.mat"
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
            fh.write(_SCRIPT.format(seed=seed, length=length, noise=noise, mat=str(mat)))
        proc = subprocess.run([GNUBG, "-t", "-q", "-p", fh.name], capture_output=True, text=True, timeout=1800)
        Path(fh.name).unlink()
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
        if line is None:
            sys.exit(f"gnubg failed on match {seed}: {proc.stderr[-400:]}")
        result = json.loads(line[len("RESULT "):])
        result["settings"] = {"seed": seed, "match_length": length, "players": "gnubg 0-ply",
                              "noise": noise, "analysis": "gnubg 1-ply (our 2-ply), cubeful"}
        (out_dir / f"gnubg-analysis-{seed}.json").write_text(json.dumps(result, indent=1) + "\n")
        print(f"match {seed}: {len(result['decisions'])} decisions -> {mat}")


def spearman(a, b) -> float:
    """Spearman's rank correlation (average ranks for ties)."""
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic)


def agreement(ours: list[dict], gnubg: dict) -> dict:
    """Matched decisions (by game, kind, position, dice) and the agreement figures."""
    key = lambda d: (d["game"], d["kind"], d["position"], tuple(d["dice"]) if d["dice"] else None)
    mine = {key(d): d for d in ours if d["kind"] in ("checker", "cube") and not d["forced"]}
    out = {}
    for kind in ("checker", "cube"):
        pairs = [(g["error"], mine[key(g)]) for g in gnubg["decisions"] if g["kind"] == kind and key(g) in mine]
        if not pairs:
            continue
        theirs = np.array([p[0] for p in pairs])
        ours_err = np.array([p[1]["error"] for p in pairs])
        big = [p for p in pairs if p[0] >= BIG_ERROR]
        out[kind] = {"matched": len(pairs), "of_gnubg": sum(g["kind"] == kind for g in gnubg["decisions"]),
                     "spearman": spearman(theirs, ours_err) if len(pairs) > 2 else float("nan"),
                     "big_errors": len(big),
                     "big_marked": sum(bool(p[1]["mark"]) for p in big)}
    return out


def compare(data_dir: Path, ply: int) -> dict:
    """Our analysis of every stored match against gnubg's verdicts; printed and returned."""
    from engine.analysis.grade import AnalysisSettings, analyse_match
    from engine.analysis.summary import summarise
    from engine.formats.matread import load_mat
    from models.loader import load_evaluator

    evaluator = load_evaluator(None)
    report = {}
    for path in sorted(data_dir.glob("gnubg-analysis-*.json")):
        gnubg = json.loads(path.read_text())
        record = load_mat(path.with_suffix(".mat"))
        decisions = analyse_match(record, evaluator, AnalysisSettings(ply=ply))
        players = {p.name: p for p in summarise(record, decisions)}
        rates = {name: (g["checker_error_rate"], players[name].checker_error_rate)
                 for name, g in gnubg["players"].items()}
        report[path.stem] = {"rates": rates, **agreement([d.as_dict() for d in decisions], gnubg)}
        print(f"{path.stem}:")
        for name, (theirs, mine) in rates.items():
            print(f"  {name}: checker error rate gnubg {theirs:.1f}, ours {mine:.1f} mEMG/move "
                  f"({100 * (mine - theirs) / theirs:+.0f}%)")
        for kind in ("checker", "cube"):
            if kind in report[path.stem]:
                a = report[path.stem][kind]
                print(f"  {kind}: {a['matched']}/{a['of_gnubg']} matched, Spearman {a['spearman']:.2f}, "
                      f"gnubg errors >= {BIG_ERROR}: {a['big_errors']}, of them marked by us: {a['big_marked']}")
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    gen = sub.add_parser("generate")
    gen.add_argument("--out-dir", type=Path, default=DATA_DIR)
    cmp_ = sub.add_parser("compare")
    cmp_.add_argument("--data-dir", type=Path, default=DATA_DIR)
    cmp_.add_argument("--ply", type=int, default=2)
    args = parser.parse_args(argv)
    if args.what == "generate":
        generate(args.out_dir)
    else:
        compare(args.data_dir, args.ply)


if __name__ == "__main__":
    main()
