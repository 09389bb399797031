"""Runs INSIDE gnubg (`gnubg -t -q -p engine/gnubg/driver.py`): answers move requests on stdin.

Protocol, one line each way:
- `POSITION_ID D1 D2 PLIES` -> `MOVE f1 t1 f2 t2 ...` (points from the mover's side,
  25 = bar, 0 = off; nothing after MOVE when the roll cannot be played);
- `EVAL POSITION_ID PLIES` -> `EQUITY e`: the cubeless equity of the side on roll;
- `CUBE POSITION_ID PLIES VALUE OWNER MATCH MY_SCORE OPP_SCORE CRAWFORD JACOBY` ->
  `CUBEFUL nd dt dp p0 p1 p2 p3 p4 ACTION...`: gnubg's cubeful analysis (cfevaluate) of
  the side on roll's cube decision, normalised equities No double, Double/Take,
  Double/Pass, then gnubg's cubeless probabilities at the same plies and its wording.
  OWNER is `centre`, `me` or `opponent` (the side on roll is gnubg's player 1); MATCH 0
  is money play (no beavers); CRAWFORD and JACOBY are 0 or 1.
- a request that fails -> `ERROR message`; `quit` ends.
Lines gnubg itself prints never start with these words, so the caller filters.
Deterministic, no noise: gnubg's own evaluation at the requested plies (cubeless for
moves and EVAL, cubeful for CUBE).
"""

import sys

import gnubg  # noqa: F401  (only exists inside gnubg)


def context_for(contexts: dict, plies: int) -> dict:
    """gnubg's cubeless, deterministic, noise-free evaluation context at `plies` (cached)."""
    if plies not in contexts:
        contexts[plies] = {"cubeful": 0, "plies": plies, "deterministic": 1, "noise": 0.0}
    return contexts[plies]


OWNERS = {"centre": -1, "me": 1, "opponent": 0}


def cube_context_for(contexts: dict, plies: int) -> dict:
    """gnubg's cubeful, deterministic, noise-free evaluation context at `plies` (cached)."""
    key = ("cube", plies)
    if key not in contexts:
        contexts[key] = gnubg.evalcontext(1, plies, 0, 1, 0.0)
    return contexts[key]


def cube_reply(parts: list, contexts: dict) -> str:
    """The CUBEFUL line for one CUBE request (see the module docstring)."""
    pos_id, plies, value, owner, match, mine, theirs, crawford, jacoby = parts[1:10]
    board = gnubg.positionfromid(pos_id)
    info = gnubg.cubeinfo(int(value), OWNERS[owner], 1, int(match), (int(theirs), int(mine)), int(crawford), 0)
    info["jacoby"] = int(jacoby)
    info["beavers"] = 0
    context = cube_context_for(contexts, int(plies))
    cf = gnubg.cfevaluate(board, info, context)
    probs = gnubg.evaluate(board, info, context)[:5]
    numbers = " ".join(repr(float(v)) for v in (cf[1], cf[2], cf[3], *probs))
    return f"CUBEFUL {numbers} {cf[5]}"


def main() -> None:
    gnubg.command("set player 0 human")
    gnubg.command("set player 1 human")
    gnubg.command("new session")
    cubeinfo = gnubg.cubeinfo()
    contexts = {}
    print("READY", flush=True)
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "quit":
            break
        try:
            if parts[0] == "CUBE":
                print(cube_reply(parts, contexts), flush=True)
                continue
            if parts[0] == "EVAL":
                board, context = gnubg.positionfromid(parts[1]), context_for(contexts, int(parts[2]))
                print(f"EQUITY {gnubg.evaluate(board, cubeinfo, context)[5]!r}", flush=True)
                continue
            pos_id, d1, d2, plies = parts[0], int(parts[1]), int(parts[2]), int(parts[3])
            board = gnubg.positionfromid(pos_id)
            move = gnubg.findbestmove(board, cubeinfo, context_for(contexts, plies), (d1, d2))
            print("MOVE " + " ".join(str(x) for x in move), flush=True)
        except Exception as err:  # report, keep serving
            print("ERROR " + str(err).replace("\n", " "), flush=True)


main()
