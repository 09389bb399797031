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


def _signed(result: dict | None) -> int:
    if not result:
        return 0
    return result["points"] if result["winner"] == "white" else -result["points"]


def mat_game(record: dict, number: int = 1) -> MatGame:
    """Game `number` of the record (1 outside a match): the turns not taken back, the cube
    actions, and its result signed for White."""
    turns: list[tuple[int, tuple[int, int] | None, str]] = []
    cube = 1
    for entry in record["log"]:
        if entry.get("undone") or entry["side"] not in COLOR_INDEX or entry.get("game", 1) != number:
            continue
        side = COLOR_INDEX[entry["side"]]
        if entry.get("steps") is not None:
            turns.append((side, tuple(entry["dice"]), entry["move"]))
        elif entry.get("cube") == "double":
            cube *= 2
            turns.append((side, None, f"Doubles => {cube}"))
        elif entry.get("cube") in ("take", "pass"):
            turns.append((side, None, "Takes" if entry["cube"] == "take" else "Drops"))
    match = record.get("match")
    if match and number <= len(match["results"]):
        return MatGame(turns, _signed(match["results"][number - 1]))
    return MatGame(turns, _signed(record.get("result")))


def game_mat(record: dict) -> str:
    """The whole .mat text of a stored game (money play: a '0 point match') or of its match,
    every game played so far."""
    match = record.get("match")
    if not match:
        return format_mat([mat_game(record)], player_names(record), 0)
    played = len(match["results"]) + (0 if record["phase"] == "over" else 1)
    games = [mat_game(record, n) for n in range(1, played + 1)]
    return format_mat(games, player_names(record), match["length"])


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
            "match": ({"length": record["match"]["length"], "score": record["match"]["score"]}
                      if record.get("match") else None),
            "moves": sum(1 for e in record["log"] if e.get("steps") is not None and not e.get("undone")),
            "takebacks": sum(1 for e in record["log"] if e.get("takeback")),
            "mat": f"/api/games/{record['id']}/mat"}
