"""Runs INSIDE gnubg (`gnubg -t -q -p engine/gnubg/driver.py`): answers move requests on stdin.

Protocol, one line each way:
- `POSITION_ID D1 D2 PLIES` -> `MOVE f1 t1 f2 t2 ...` (points from the mover's side,
  25 = bar, 0 = off; nothing after MOVE when the roll cannot be played);
- `EVAL POSITION_ID PLIES` -> `EQUITY e`: the cubeless equity of the side on roll;
- a request that fails -> `ERROR message`; `quit` ends.
Lines gnubg itself prints never start with these words, so the caller filters.
Cubeless, deterministic, no noise: gnubg's own evaluation at the requested plies.
"""

import sys

import gnubg  # noqa: F401  (only exists inside gnubg)


def context_for(contexts: dict, plies: int) -> dict:
    """gnubg's cubeless, deterministic, noise-free evaluation context at `plies` (cached)."""
    if plies not in contexts:
        contexts[plies] = {"cubeful": 0, "plies": plies, "deterministic": 1, "noise": 0.0}
    return contexts[plies]


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
