"""A stored game as a `.mat` file (Jellyfish format, which gnubg imports) and as a history row.

The .mat holds the game as it stands: moves taken back are left out (they are in the
game's log, marked undone), cube actions appear as 'Doubles => N', 'Takes', 'Drops'.
"""

from __future__ import annotations

from engine.formats.matfile import MatGame, format_mat

COLOR_INDEX = {"white": 0, "black": 1}


def player_names(record: dict) -> tuple[str, str]:
    """Names for the two columns: White and Black, or the computer and its level."""
    return tuple(f"tdgammon_{record['level']}" if seat["kind"] == "computer" else color.capitalize()
                 for color, seat in zip(("white", "black"), record["seats"]))


def mat_game(record: dict) -> MatGame:
    """The turns not taken back and the cube actions, and the result signed for White."""
    turns: list[tuple[int, tuple[int, int] | None, str]] = []
    cube = 1
    for entry in record["log"]:
        if entry.get("undone") or entry["side"] not in COLOR_INDEX:
            continue
        side = COLOR_INDEX[entry["side"]]
        if entry.get("steps") is not None:
            turns.append((side, tuple(entry["dice"]), entry["move"]))
        elif entry.get("cube") == "double":
            cube *= 2
            turns.append((side, None, f"Doubles => {cube}"))
        elif entry.get("cube") in ("take", "pass"):
            turns.append((side, None, "Takes" if entry["cube"] == "take" else "Drops"))
    result = record.get("result")
    signed = 0
    if result:
        signed = result["points"] if result["winner"] == "white" else -result["points"]
    return MatGame(turns, signed)


def game_mat(record: dict) -> str:
    """The whole .mat text of one stored game (money play: a '0 point match')."""
    return format_mat([mat_game(record)], player_names(record), 0)


def history_row(record: dict, finished: float | None) -> dict:
    """One finished game as the history page lists it."""
    result = record.get("result") or {}
    names = player_names(record)
    return {"game_id": record["id"], "mode": record["mode"], "level": record["level"],
            "white": names[0], "black": names[1], "finished": finished,
            "winner": result.get("winner"), "points": result.get("points"),
            "how": ("resigned" if result.get("resigned") else "double passed" if result.get("passed")
                    else result.get("kind")),
            "cube": record.get("cube_enabled", False),
            "moves": sum(1 for e in record["log"] if e.get("steps") is not None and not e.get("undone")),
            "takebacks": sum(1 for e in record["log"] if e.get("takeback")),
            "mat": f"/api/games/{record['id']}/mat"}
