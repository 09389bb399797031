"""The analysis as one self-contained HTML page: no scripts, no fetches, readable from disk.

Each game gets its decisions in a table (marks coloured) and an inline SVG plot of the
equity through the game: after every checker play, the cubeful normalised equity of the
left-column player (the mover's equity after his play, negated when the right-hand player
moved), marked plays drawn as larger dots in the mark's colour.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from engine.analysis.grade import Decision
from engine.analysis.summary import RATING_SCALE, PlayerSummary

COLOURS = {"": "#4a6fa5", "doubtful": "#d9a400", "bad": "#e06c00", "very bad": "#c0142b"}
WIDTH, HEIGHT, PAD = 640, 200, 30

_CSS = """
body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
td, th { border: 1px solid #ccc; padding: 2px 8px; text-align: left; font-size: 13px; }
th { background: #eee; }
tr.doubtful td { background: #fff6d5; } tr.bad td { background: #ffe3cc; }
tr.very-bad td { background: #ffd0d6; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
svg { border: 1px solid #ccc; background: #fcfcfc; }
"""


def equity_points(decisions: Sequence[Decision]) -> list[tuple[float, str, str]]:
    """(left player's equity, mark, label) after each checker play of one game."""
    out = []
    for d in decisions:
        if d.kind != "checker":
            continue
        value = d.equity_played if d.side == 0 else -d.equity_played
        out.append((max(-3.0, min(3.0, value)), d.mark, f"{d.move}. {d.player} {d.played}"))
    return out


def equity_svg(points: Sequence[tuple[float, str, str]], title: str) -> str:
    """An inline SVG line plot of the equity through one game (range fitted to the data, at least -1..1)."""
    top = max([1.0] + [abs(v) for v, _, _ in points])
    n = max(1, len(points) - 1)

    def xy(k: int, v: float) -> tuple[float, float]:
        return PAD + k * (WIDTH - 2 * PAD) / n, HEIGHT / 2 - v * (HEIGHT / 2 - PAD / 2) / top

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
             f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}">',
             f'<line x1="{PAD}" y1="{HEIGHT / 2}" x2="{WIDTH - PAD}" y2="{HEIGHT / 2}" stroke="#999"/>',
             f'<text x="2" y="{PAD / 2 + 4}" font-size="10">+{top:.1f}</text>',
             f'<text x="2" y="{HEIGHT - PAD / 2 + 4}" font-size="10">-{top:.1f}</text>']
    if points:
        line = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(k, v) for k, (v, _, _) in enumerate(points)))
        parts.append(f'<polyline fill="none" stroke="{COLOURS[""]}" stroke-width="1.5" points="{line}"/>')
        for k, (v, mark, label) in enumerate(points):
            x, y = xy(k, v)
            radius = 4 if mark else 2
            parts.append(f'<circle class="mark-{mark.replace(" ", "-") or "none"}" cx="{x:.1f}" cy="{y:.1f}" '
                         f'r="{radius}" fill="{COLOURS[mark]}"><title>{escape(label)} '
                         f'({v:+.3f}{", " + mark if mark else ""})</title></circle>')
    parts.append("</svg>")
    return "".join(parts)


def _players_table(players: Sequence[PlayerSummary], unit: str) -> str:
    rows = [("Unforced moves", "unforced_moves", "{}"), ("Checker error rate (mEMG/move)", "checker_error_rate", "{:.1f}"),
            ("Checker rating", "checker_rating", "{}"),
            ("Close or actual cube decisions", "close_cube_decisions", "{}"),
            ("Cube error rate (mEMG/decision)", "cube_error_rate", "{:.1f}"),
            ("Overall error rate (mEMG/decision)", "error_rate", "{:.1f}"), ("Rating", "rating", "{}"),
            ("Luck (EMG)", "luck", "{:+.3f}"), (f"Luck cost ({unit})", "luck_cost", "{:+.3f}"),
            (f"Actual result ({unit})", "result", "{:+.3f}"),
            (f"Luck-adjusted result ({unit})", "luck_adjusted_result", "{:+.3f}")]
    head = "".join(f"<th>{escape(p.name)}</th>" for p in players)
    body = []
    for label, key, fmt in rows:
        cells = "".join(f'<td class="num">{escape(fmt.format(getattr(p, key)))}</td>' for p in players)
        body.append(f"<tr><td>{escape(label)}</td>{cells}</tr>")
    for mark in ("doubtful", "bad", "very bad"):
        cells = "".join(f'<td class="num">{p.checker_marks[mark]} / {p.cube_marks[mark]}</td>' for p in players)
        body.append(f"<tr><td>Marked {mark} (checker / cube)</td>{cells}</tr>")
    return f'<table id="players"><tr><th></th>{head}</tr>{"".join(body)}</table>'


def _decision_rows(decisions: Sequence[Decision]) -> str:
    rows = ["<tr><th>#</th><th>Player</th><th>Kind</th><th>Dice</th><th>Played</th><th>Best</th>"
            "<th>Equity</th><th>Error</th><th>Mark</th><th>Luck</th><th>Position</th></tr>"]
    for d in decisions:
        if d.kind == "cube" and not d.close:
            continue
        css = d.mark.replace(" ", "-")
        dice = f"{d.dice[0]}{d.dice[1]}" if d.dice else ""
        luck = "" if d.luck is None else f"{d.luck:+.3f}"
        error = "forced" if d.forced else f"{d.error:.3f}"
        rows.append(f'<tr class="{css}"><td>{d.move}</td><td>{escape(d.player)}</td><td>{d.kind}</td>'
                    f"<td>{dice}</td><td>{escape(d.played)}</td><td>{escape(d.best)}</td>"
                    f'<td class="num">{d.equity_played:+.3f}</td><td class="num">{error}</td>'
                    f'<td>{escape(d.mark)}</td><td class="num">{luck}</td>'
                    f"<td><code>{escape(d.position)}:{escape(d.match_id)}</code></td></tr>")
    return "<table class=\"decisions\">" + "".join(rows) + "</table>"


def render_html(title: str, meta: dict, players: Sequence[PlayerSummary],
                games: Sequence[tuple[int, str, Sequence[Decision]]]) -> str:
    """The page: settings, the players' table, then per game (number, heading, decisions)
    its equity plot and decisions (cube decisions that were neither close nor taken are left out)."""
    unit = "MWC" if meta.get("match_length") else "points"
    scale = ", ".join(f"{label} < {bound:g}" for bound, label in RATING_SCALE if bound != float("inf"))
    parts = ["<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
             f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{escape(title)}</h1>",
             f"<p>{escape(meta.get('settings', ''))}</p>",
             _players_table(players, unit),
             f"<p>Error rates are mEMG (thousandths of a normalised 1-cube equity) per unforced move "
             f"or per close-or-actual cube decision, as gnubg counts them; rating scale (gnubg's): "
             f"{escape(scale)}, else Awful!</p>"]
    for number, heading, decisions in games:
        parts.append(f'<section class="game" id="game-{number}"><h2>{escape(heading)}</h2>')
        parts.append(equity_svg(equity_points(decisions), f"equity through game {number}"))
        parts.append(_decision_rows(decisions))
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts)
