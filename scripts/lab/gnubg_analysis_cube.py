"""Where the cube disagreement with gnubg's match analysis comes from: the grading or the evaluator.

    python -m scripts.lab.gnubg_analysis_cube [--data-dir tests/data] [--procs 16] [--model M]

For every cube decision of the stored matches (the roller's double / no double and the
answer; scripts.lab.gnubg_analysis made them and gnubg's 2-ply verdicts), four judges are
set against gnubg's 2-ply verdicts, with compare's figures (Spearman rank correlation of
the per-decision errors, each player's total error):

- gnubg 0-ply and gnubg 1-ply (gnubg.cfevaluate at the decision's cube and score, our
  grading's definitions): gnubg against itself at our 1-ply and 2-ply, what the same
  network gives one ply short of the yardstick;
- our grading (engine.analysis.grade.grade_cube, 2-ply) with gnubg's 0-ply probabilities
  as its evaluator (a table of gnubg.evaluate over each position and every afterstate of
  its 21 rolls): our reader, cube states and cube code with gnubg's network;
- our grading with our network (what `gnubg_analysis compare --ply 2` reports).

It also prints how far our 2-ply cube equities with gnubg's network are from gnubg's
1-ply cubeful ones (the same search, the same network: they should coincide). The cube
state of each decision is our reader's (the Match ID of our analysis); gnubg runs with
the stored matches' settings (Jacoby off, no beavers). gnubg's Python `evaluate` costs a
fixed ~10 ms a call, mostly asleep, so --procs gnubg processes share the table.
A diagnosis only: gnubg is the yardstick, nothing here is fitted to it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from scripts.lab.gnubg_analysis import CUBE_KINDS, DATA_DIR, GNUBG, NAMES, decision_key, spearman

_CUBE_SCRIPT = r"""
import gnubg, json, os
gnubg.command("set jacoby off")
gnubg.command("set beavers 0")
out = []
for c in json.load(open(os.environ["CASES_IN"])):
    board = gnubg.positionfromid(c["position"])
    ci = gnubg.cubeinfo(c["cube"], c["owner"], 0, c["length"], tuple(c["score"]), c["crawford"])
    out.append([list(gnubg.cfevaluate(board, ci, gnubg.evalcontext(1, p, 0, 1, 0.0))[1:4]) for p in (0, 1)])
json.dump(out, open(os.environ["CASES_OUT"], "w"))
"""
"""Per case (player 0 on roll, score = (on roll, opponent), owner -1 / 0 / 1): gnubg's
(ND, DT, DP) at its 0-ply and 1-ply, normalised to the cube (EMG in a match)."""

_TABLE_SCRIPT = r"""
import gnubg, json, os
ec = gnubg.evalcontext(0, 0, 0, 1, 0.0)
ci = gnubg.cubeinfo(1, -1, 0, 0, (0, 0), 0)
ids = json.load(open(os.environ["CASES_IN"]))
json.dump([list(gnubg.evaluate(gnubg.positionfromid(p), ci, ec)[:5]) for p in ids], open(os.environ["CASES_OUT"], "w"))
"""
"""Per Position ID: gnubg's 0-ply cubeless probabilities of the side on roll."""


def run_gnubg(script: str, cases: list, procs: int, timeout: float = 3600.0) -> list:
    """script's answers to cases, in order, from `procs` gnubg processes run side by side."""
    procs = max(1, min(procs, len(cases)))
    bounds = np.linspace(0, len(cases), procs + 1).astype(int)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "probe.py").write_text(script)
        running = []
        for k in range(procs):
            cin, cout = Path(tmp) / f"in{k}.json", Path(tmp) / f"out{k}.json"
            cin.write_text(json.dumps(cases[bounds[k]:bounds[k + 1]]))
            env = dict(os.environ, CASES_IN=str(cin), CASES_OUT=str(cout))
            running.append((subprocess.Popen([GNUBG, "-t", "-q", "-p", str(Path(tmp) / "probe.py")], env=env,
                                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.PIPE, text=True), cout))
        out = []
        for proc, cout in running:
            _, err = proc.communicate(timeout=timeout)
            if not cout.exists():
                raise RuntimeError(f"gnubg failed: {err[-400:]}")
            out.extend(json.loads(cout.read_text()))
    return out


class TableEvaluator:
    """gnubg's 0-ply probabilities looked up by Position ID: an evaluator of afterstates
    (row 0 the side that just moved), so our search runs on gnubg's network."""

    name = "gnubg 0-ply (table)"

    def __init__(self, table: dict[str, list[float]]):
        self.table = table

    def evaluate(self, afterstates: np.ndarray) -> np.ndarray:
        from engine.evaluator import flip
        from engine.position import Position

        boards = np.asarray(afterstates, dtype=np.int8).reshape(-1, 2, 25)
        # The table holds the side on roll's view: the opponent's of the afterstate.
        on_roll = np.array([self.table[Position(np.ascontiguousarray(b[::-1])).id] for b in boards])
        return flip(on_roll.reshape(-1, 5))


def cube_error(nd: float, dt: float, dp: float, kind: str, acted: bool) -> float:
    """The error of a cube decision from the doubler's ND / DT / DP: the roller's ("cube";
    acted = doubled) proper - played, proper = max(ND, min(DT, DP)); the answer's ("take";
    acted = taken) the answer's value minus min(DT, DP). The yardstick's and our grading's
    definitions (engine.analysis.grade.grade_cube)."""
    doubling = min(dt, dp)
    if kind == "cube":
        return max(nd, doubling) - (doubling if acted else nd)
    return (dt if acted else dp) - doubling


def _acted(g: dict) -> bool:
    return bool(g["doubled"] if g["kind"] == "cube" else g["taken"])


def _state(d: dict) -> dict:
    """gnubg's view of our decision's cube state: player 0 on roll (the doubler for an answer)."""
    from engine.formats.matchid import CENTRED, decode_match_id

    s = decode_match_id(d["match_id"])
    me = s.on_roll
    owner = -1 if s.cube_owner == CENTRED else (0 if s.cube_owner == me else 1)
    return {"position": d["position"], "cube": s.cube_value, "owner": owner, "length": s.match_length,
            "score": [s.score[me], s.score[1 - me]], "crawford": int(s.crawford)}


def _cube_info(state: dict):
    from engine.cube.equity import CENTRE, ME_OWNS, OPP_OWNS, CubeInfo

    return CubeInfo(value=state["cube"], owner={-1: CENTRE, 0: ME_OWNS, 1: OPP_OWNS}[state["owner"]],
                    match_length=state["length"], score=tuple(state["score"]), crawford=bool(state["crawford"]))


def _table_ids(positions: list[str]) -> list[str]:
    """Each position and every afterstate of its 21 rolls, as the side then on roll sees it."""
    from engine.movegen import generate
    from engine.position import Position
    from engine.search import ROLLS

    need = set()
    for pid in positions:
        board = np.ascontiguousarray(Position.from_id(pid).board)
        need.add(pid)
        for d1, d2 in ROLLS:
            after, _ = generate(board, int(d1), int(d2))
            for a in after if len(after) else board[None]:
                need.add(Position(np.ascontiguousarray(a[::-1])).id)
    return sorted(need)


def diagnose(data_dir: Path, procs: int, model: str | None = None) -> dict:
    """Per stored match: each judge's Spearman and per-player totals against gnubg 2-ply, and
    our 2-ply cube equities on gnubg's network against gnubg's 1-ply cubeful ones."""
    from engine.analysis.grade import AnalysisSettings, analyse_match, grade_cube
    from engine.formats.matread import load_mat
    from engine.position import Position
    from models.loader import load_evaluator

    ours_ev = load_evaluator(model)
    report = {}
    for path in sorted(data_dir.glob("gnubg-analysis-*.json")):
        gnubg = json.loads(path.read_text())
        ours = {decision_key(d.as_dict()): d.as_dict()
                for d in analyse_match(load_mat(path.with_suffix(".mat")), ours_ev, AnalysisSettings(ply=2))}
        pairs = [(g, ours[decision_key(g)]) for g in gnubg["decisions"]
                 if g["kind"] in CUBE_KINDS and decision_key(g) in ours]
        states = [_state(m) for _, m in pairs]
        evals = run_gnubg(_CUBE_SCRIPT, states, procs)
        ids = _table_ids(sorted({s["position"] for s in states}))
        table = TableEvaluator(dict(zip(ids, run_gnubg(_TABLE_SCRIPT, ids, procs))))
        judges = {"gnubg 0-ply": [], "gnubg 1-ply": [], "ours, gnubg's net": [], "ours": []}
        gaps = []
        for (g, m), state, (g0, g1) in zip(pairs, states, evals):
            acted = _acted(g)
            judges["gnubg 0-ply"].append(cube_error(*g0, g["kind"], acted))
            judges["gnubg 1-ply"].append(cube_error(*g1, g["kind"], acted))
            # An answer is graded with the double it answers (the doubler's position and cube).
            answer = ("take" if acted else "drop") if g["kind"] == "take" else None
            doubled = answer is not None or acted
            roller, taker = grade_cube(Position.from_id(state["position"]).board, _cube_info(state), table, 2,
                                       doubled, answer)
            judges["ours, gnubg's net"].append((taker if g["kind"] == "take" else roller)["error"])
            judges["ours"].append(m["error"])
            nd, dt = (o["equity"] for o in roller["options"][:2])
            if roller["options"][3]["ply"] == 2 and g["kind"] == "cube":
                gaps.append((nd - g1[0], dt - g1[1]))
        yard = [g["error"] for g, _ in pairs]
        players = [g["player"] for g, _ in pairs]
        rows = {}
        for name, errors in judges.items():
            totals = {p: [sum(y for y, q in zip(yard, players) if q == p),
                          sum(e for e, q in zip(errors, players) if q == p)] for p in NAMES}
            rows[name] = {"spearman": spearman(yard, errors), "totals": totals}
        gaps = np.abs(np.array(gaps)).reshape(-1, 2)
        report[path.stem] = {"decisions": len(pairs), "judges": rows, "valued_at_2ply": len(gaps),
                             "nd_gap": [float(gaps[:, 0].mean()), float(gaps[:, 0].max())] if len(gaps) else None,
                             "dt_gap": [float(gaps[:, 1].mean()), float(gaps[:, 1].max())] if len(gaps) else None}
        _print(path.stem, report[path.stem])
    return report


def _print(stem: str, r: dict) -> None:
    print(f"{stem}: {r['decisions']} cube decisions, against gnubg 2-ply")
    for name, row in r["judges"].items():
        totals = ", ".join(f"{p} {t[0]:.2f} -> {t[1]:.2f} ({100 * (t[1] - t[0]) / t[0]:+.0f}%)"
                           for p, t in row["totals"].items())
        print(f"  {name:<18} Spearman {row['spearman']:.2f}  total cube error: {totals}")
    if r["nd_gap"]:
        print(f"  our 2-ply cube equities on gnubg's net - gnubg 1-ply cubeful ({r['valued_at_2ply']} decisions): "
              f"|ND| mean {r['nd_gap'][0]:.4f} max {r['nd_gap'][1]:.4f}, "
              f"|DT| mean {r['dt_gap'][0]:.4f} max {r['dt_gap'][1]:.4f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--procs", type=int, default=16, help="gnubg processes side by side (mostly idle)")
    parser.add_argument("--model", default=None, help="our model (default: the shipped one)")
    parser.add_argument("--out", type=Path, default=None, help="also write the report as JSON")
    args = parser.parse_args(argv)
    report = diagnose(args.data_dir, args.procs, args.model)
    if args.out is not None:
        args.out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
